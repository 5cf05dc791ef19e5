"""`examples/train_from_python.py`: a run described as data, trained, loaded and scored on the scenario's held-out
sequences from Python (one iteration, sampling in the training process, the session's Ray instance)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from example_scripts import load_example

TINY = ["--iterations", "1", "--jobs", "32", "--envs", "1", "--batch-size", "128", "--epochs", "1",
        "--warm-start", "none", "--validation-sequences", "1", "--eval-sequences", "2", "--eval-jobs", "64"]


def test_trains_loads_and_scores_on_the_scenarios_held_out_sequences(ray_session, tmp_path):
    from schedrl.agents.checkpoint import load_policy
    from schedrl.scenarios import get_scenario, scoring

    example = load_example("train_from_python")
    summary, comparison = example.main([*TINY, "--out", str(tmp_path / "run")])
    record = json.loads((tmp_path / "run" / "schedrl_run.json").read_text())
    assert record["agent"] == "rlscheduler" and record["scenario"]["name"] == "default"
    assert Path(summary["checkpoint"]).is_dir()
    # the table: the scenario's heuristics and the policy on a second draw from its evaluation zone, paired
    scenario = get_scenario("default").overridden(sequences=2, jobs=64, seed=1)
    first = get_scenario("default").overridden(sequences=2, jobs=64)
    drawn = scoring.sequences(scenario, scoring.load(scenario), "evaluation").ids
    trained_table = scoring.sequences(first, scoring.load(first), "evaluation").ids
    assert sorted(summary["evaluation"]["starts"]) == sorted(trained_table)  # train's own table: the first draw
    assert comparison.starts == drawn and set(drawn) != set(trained_table)
    assert "RL" in comparison.policies and len(comparison.policies) > 2
    assert any(line.startswith("RL vs ") for line in comparison.comparison_lines())
    # and the RL column is the checkpoint's own schedule of those sequences
    again = scoring.score(scenario, {"RL": load_policy(summary["checkpoint"])}, baselines=False).values()["RL"]
    assert again == pytest.approx(comparison.values[(scenario.sim.backfill, "RL")], rel=1e-12)
