"""A sweep's final report (`training.report.evaluate_groups`) on agents whose sequences are generated.

`schedrl tune` of rlschert or deeprm used to crash in its report: it read the training env's `trace`, which the
discrete-time agents do not have. Their groups are evaluated on their own held-out sequence seeds."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "regression"))

from fixture_modules import load_fixture_policy, read_record  # noqa: E402


@pytest.mark.parametrize("name", ["deeprm", "rlschert"])
def test_a_tune_report_evaluates_a_discrete_time_agent(name, monkeypatch):
    from schedrl.agents import get_agent
    from schedrl.training import report
    from schedrl.training.sweep_file import sweep_from_dict

    record = read_record(name)
    policy = load_fixture_policy(name)
    monkeypatch.setattr(report, "load_policy", lambda checkpoint: policy)
    spec = sweep_from_dict({"agent": name, "env": dict(record.env_config), "stop": {"iterations": 1},
                            "evaluate": {"sequences": 2}})
    row = report.TrialRow(name="t0", group="g", values={}, env_config=dict(record.env_config), status="TERMINATED",
                          iterations=1, best=1.0, checkpoint="ckpt")
    (out,) = report.evaluate_groups(spec, {"g": row})
    judge = get_agent(name).judge(spec.env)
    seeds = judge.evaluation_ids(None, 2, 20_000 + (spec.settings.seed or 0), judge.sequence_length)
    assert out["starts"] == seeds and out["metric"] == "slowdown" and out["evaluated_on"] == name
    assert out["per_sequence_rl"] == pytest.approx(judge.score_policy(policy, None, seeds, judge.sequence_length))
    assert out["rl"] == pytest.approx(np.mean(out["per_sequence_rl"]))
    assert {b.name for b in judge.baselines} <= set(out)
