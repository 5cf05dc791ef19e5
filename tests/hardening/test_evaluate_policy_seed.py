"""`schedrl evaluate --policy-seed`: randomised baselines (Random) are seeded apart from the sequence draw, with
the default 0 that `train`'s final table uses, so the two tables agree on the same sequences."""

from __future__ import annotations

import json

import numpy as np
import pytest
from checkpoint_files import write_checkpoint
from harness import run_cli

from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
from schedrl.agents.rlscheduler.env import sim_config_for
from schedrl.eval.compare import compare
from schedrl.workload.catalog import load_trace


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return write_checkpoint(tmp_path_factory.mktemp("policy-seed") / "run")


def _random(checkpoint, *extra: str) -> float:
    status, out, err = run_cli("evaluate", str(checkpoint), "--policies", "random", "--starts", "100,900",
                               "--jobs", "64", "--backfill", "none", "--json", *extra)
    assert status == 0, err
    (row,) = [r for r in json.loads(out)["results"] if r["policy"] == "random"]
    return float(row["mean"])


def test_random_baseline_follows_the_policy_seed_not_the_sequence_seed(checkpoint):
    workload = load_trace("default")
    config = sim_config_for(RLSchedulerEnvConfig())  # the checkpoint's semantics
    expected = {seed: float(np.mean(compare(workload, ["random"], ["none"], [100, 900], 64, "bsld", config, seed=seed,
                                            progress=False).values[("none", "random")])) for seed in (0, 5)}
    assert expected[0] != expected[5]  # the seed matters on these sequences
    assert _random(checkpoint) == pytest.approx(expected[0])  # the default: train's seed 0
    assert _random(checkpoint, "--seed", "7") == pytest.approx(expected[0])  # the sequence seed leaves it alone
    assert _random(checkpoint, "--policy-seed", "5") == pytest.approx(expected[5])
