"""The zoo's pieces without training: the shipped manifest against its files, layers to JSON and back, RLlib's keys,
names, the card's warnings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from schedrl.zoo import manifest
from schedrl.zoo.store import file_sha256, read

ZOO_BUDGET = 20 * 1024 * 1024
"""The zoo ships in the package: every policy's files together stay well under this."""


SHIPPED = manifest.ZOO_DIR / manifest.MANIFEST_FILE


def test_the_shipped_manifest_matches_its_files():
    data = json.loads(SHIPPED.read_text())
    assert data["format"] == 2 and isinstance(data["policies"], dict)
    total = 0
    for entry in manifest.entries(SHIPPED):
        assert manifest.NAME_PATTERN.fullmatch(entry.name)
        exported = read(entry.directory)
        weights = entry.fields["weights"]
        assert exported.name == entry.name
        assert weights == {k: exported.data["weights"][k] for k in weights}, entry.name
        assert file_sha256(exported.weights_file) == weights["sha256"], entry.name
        assert exported.weights_file.stat().st_size == weights["bytes"], entry.name
        recorded = {k: v for k, v in entry.fields.items() if k != "seeds"}  # the logs' spread (test_seed_spreads)
        assert manifest.entry_fields(exported, entry.fields["directory"]) == recorded, entry.name
        total += sum(f.stat().st_size for f in entry.directory.iterdir())
    listed = {e.directory.name for e in manifest.entries(SHIPPED)}
    on_disk = {d.name for d in (manifest.ZOO_DIR / "policies").iterdir()} if (manifest.ZOO_DIR / "policies").is_dir() \
        else set()
    assert on_disk == listed  # no policy directory left out of the manifest
    assert total < ZOO_BUDGET


FRESH_CLONE = """
import sys
sys.modules["ray"] = None  # `import ray` raises ImportError from here on
from schedrl.agents.checkpoint import load_policy
from schedrl.cli.main import main
for name in sys.argv[2:]:
    load_policy("zoo:" + name)
sys.exit(main(["evaluate", "zoo:" + sys.argv[1], "--sequences", "1", "--jobs", "64"]) if sys.argv[1] else 0)
"""


@pytest.mark.integration  # a fresh interpreter checks the imports
def test_every_zoo_policy_loads_without_ray_and_the_default_traces_evaluates_with_no_download(tmp_path):
    """As on a fresh clone: no ../shared, an empty cache; the default trace is in the repository."""
    names = [e.name for e in manifest.entries(SHIPPED)]
    default = next((e.name for e in manifest.entries(SHIPPED) if e.fields["trace"]["name"] == "default"), "")
    env = {k: v for k, v in os.environ.items() if k not in ("SCHEDRL_TRACE_PATH", manifest.ZOO_DIR_ENV)}
    env.update(SCHEDRL_SHARED_DIR=str(tmp_path / "no-shared"), SCHEDRL_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", FRESH_CLONE, default, *names], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    if default:
        # the table names the policy (issue 54), not "RL"
        assert done.stdout.splitlines()[1].split()[-1] == default and "warning" not in done.stderr


def test_rllibs_keys_are_the_ones_the_networks_use():
    from ray.rllib.algorithms.dqn.default_dqn_rl_module import QF_PREDS
    from ray.rllib.core.columns import Columns

    from schedrl.agents import inference

    assert (inference.OBS, inference.ACTION_DIST_INPUTS, inference.QF_PREDS) == (
        Columns.OBS, Columns.ACTION_DIST_INPUTS, QF_PREDS)


def test_layers_go_to_json_and_back():
    from torch import nn

    from schedrl.agents.inference import build, describe

    net = nn.Sequential(nn.Conv1d(3, 4, kernel_size=1), nn.ReLU(), nn.MaxPool1d(2), nn.Conv2d(1, 2, (1, 2)),
                        nn.Flatten(), nn.Sequential(nn.Linear(5, 6, bias=False), nn.LeakyReLU(0.2), nn.Tanh()))
    spec = json.loads(json.dumps(describe(net)))
    again = build(spec)
    assert describe(again) == spec
    assert {k: v.shape for k, v in again.state_dict().items()} == {k: v.shape for k, v in net.state_dict().items()}
    with pytest.raises(ValueError, match="no JSON form for a GRU layer"):
        describe(nn.GRU(2, 2))
    with pytest.raises(ValueError, match="unknown layer type 'Bogus'"):
        build({"type": "Bogus"})


def test_an_unknown_name_in_an_empty_zoo(tmp_path):
    from schedrl.zoo.store import ZooError

    with pytest.raises(ZooError, match=r"zoo:x: no such policy in the zoo \(the zoo is empty;"):
        manifest.find("x", tmp_path / "manifest.json")


def test_the_card_says_when_a_simulation_is_outside_the_policys_training():
    from schedrl.sim import SimConfig, Simulator
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.sampling import sequence
    from schedrl.zoo.card import guard, problems

    sim = Simulator(sequence(load_trace("default"), 0, 64), SimConfig())
    longest = float(sim.workload.time_req.max())
    inside = {"machine": {"procs": 256}, "normalisation": {"time_scale": longest}}
    assert problems(inside, sim) == {}
    outside = {"machine": {"procs": 128}, "normalisation": {"time_scale": longest / 2}}
    found = problems(outside, sim)
    assert found["machine"] == "it was trained on a machine of procs 128; this simulation has procs 256"
    assert "request more than" in found["normalisation"] and "outside its normalisation" in found["normalisation"]

    class Policy:
        name = "P"

        def pick(self, s):
            return int(s.queue[0])

    warned = []
    policy = Policy()
    guard(policy, outside, warned.append)
    sim.run(policy)
    Simulator(sequence(load_trace("default"), 64, 64), SimConfig()).run(policy)
    assert [w.split(":")[2].strip() for w in warned] == ["P", "P"] and len(warned) == 2  # once per kind


def test_the_command_on_the_card_is_the_one_a_user_types():
    from schedrl.zoo.card import command_of

    assert command_of({"train_args": ["rlscheduler", "--trace", "my trace.swf"]}) == \
        "schedrl train rlscheduler --trace 'my trace.swf'"
    assert command_of({"command": ["/venv/bin/schedrl", "tune", "a.yaml"]}) == "schedrl tune a.yaml"
    assert command_of({}) == "none"
