"""Checkpoints trained before the agents package: their module classes lived in `schedrl.models`, their
run record had no version, `ppo` instead of `settings`, and no `SimConfig`. They still load, and give
the same decisions; a record of an unknown version fails with one line naming the file and the version."""

from __future__ import annotations

import json
import pickle
import sys
import types
from pathlib import Path

import pytest

from schedrl.agents.checkpoint import MODULE_SUBPATH, RUN_FILE, CheckpointError, load_policy
from schedrl.workload.catalog import load_trace
from schedrl.workload.sampling import sequence


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, ray_session) -> Path:
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
    from schedrl.agents.rlscheduler.settings import PPOSettings
    from schedrl.training.driver import train
    from schedrl.training.sweep import EvaluateSpec, StopSpec, TrainingOptions, single_run

    spec = single_run("rlscheduler", RLSchedulerEnvConfig(trace="default", sequence_length=32),
                      PPOSettings(num_env_runners=0, num_envs_per_env_runner=1, train_batch_size_per_learner=128,
                                  num_epochs=1), "kernel", StopSpec(iterations=1),
                      TrainingOptions(filtering=False, validation_sequences=1), EvaluateSpec(sequences=1, jobs=64))
    out = tmp_path_factory.mktemp("legacy") / "run"
    return Path(train(spec, out, verbose=False)["checkpoint"])


def _as_written_before_agents(checkpoint: Path) -> None:
    """Rewrite the checkpoint's module class path and its run records the way schedrl 0.1 wrote them."""
    from schedrl.agents.rlscheduler.modules.kernel import KernelPolicyModule

    ctor_file = checkpoint / MODULE_SUBPATH / "class_and_ctor_args.pkl"
    data = pickle.loads(ctor_file.read_bytes())
    assert data["class"] is KernelPolicyModule
    legacy = types.ModuleType("schedrl.models.kernel_policy")
    legacy.KernelPolicyModule = KernelPolicyModule
    module_name = KernelPolicyModule.__module__
    sys.modules[legacy.__name__] = legacy
    KernelPolicyModule.__module__ = legacy.__name__  # pickled by reference to its old home
    try:
        ctor_file.write_bytes(pickle.dumps(data))
    finally:
        KernelPolicyModule.__module__ = module_name
        del sys.modules[legacy.__name__]
    assert b"schedrl.models.kernel_policy" in ctor_file.read_bytes()
    for record_file in {checkpoint.parent / RUN_FILE, checkpoint.parents[2] / RUN_FILE}:
        record = json.loads(record_file.read_text())
        record["ppo"] = record.pop("settings")
        for key in ("record_version", "sim_config"):
            record.pop(key)
        record_file.write_text(json.dumps(record))


def test_a_checkpoint_from_before_the_agents_package_loads_and_decides_the_same(checkpoint):
    workload = load_trace("default")
    seq = sequence(workload, 100, 64)
    from schedrl.sim import Simulator

    before = load_policy(checkpoint)
    expected = Simulator(seq, before.record.sim_config).run(before).start
    _as_written_before_agents(checkpoint)
    legacy = load_policy(checkpoint)
    assert legacy.record.agent == "rlscheduler" and legacy.record.sim_config == before.record.sim_config
    assert legacy.record.settings == before.record.settings
    assert (Simulator(seq, legacy.record.sim_config).run(legacy).start == expected).all()


def test_an_unknown_record_version_fails_with_one_clear_line(checkpoint, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(checkpoint.parents[2], copy)
    trial = copy / checkpoint.parent.relative_to(checkpoint.parents[2])
    record_file = trial / RUN_FILE
    record = json.loads(record_file.read_text())
    record["record_version"] = 99
    record_file.write_text(json.dumps(record))
    with pytest.raises(CheckpointError, match=r"run record version 99 is not supported by this schedrl \(reads "
                                              r"versions 1 and 2\)"):
        load_policy(trial / checkpoint.name)
    record_file.write_text("{not json")
    with pytest.raises(CheckpointError, match=r"corrupt run record \(not JSON"):
        load_policy(trial / checkpoint.name)
