"""The example agent of docs/architecture.md, used only through the contract: trained with
`schedrl train`, evaluated with `schedrl evaluate`, swept with `schedrl tune` — the same commands as
every agent, with no code outside its folder but the registry line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from schedrl.cli.main import main

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, ray_session):
    out = tmp_path_factory.mktemp("linear") / "run"
    code = main(["train", "linear", "--iterations", "2", "--batch-size", "512", "--sequence-length", "64",
                 "--validation-sequences", "1", "--eval-sequences", "2", "--eval-jobs", "128", "--out", str(out)])
    assert code == 0
    return out


def test_train_writes_a_run_record_curve_and_evaluation(trained):
    record = json.loads((trained / "schedrl_run.json").read_text())
    assert record["agent"] == "linear" and record["record_version"] == 2
    assert record["sim_config"]["discipline"] == "pick-and-wait" and record["env_config"]["sequence_length"] == 64
    evaluation = json.loads((trained / "evaluation.json").read_text())
    assert [r["policy"] for r in evaluation["results"]] == ["FCFS", "SJF", "RL"]
    assert all(np.isfinite(r["mean"]) for r in evaluation["results"])
    assert (trained / "training_curve.png").stat().st_size > 0


def test_evaluate_and_compare_load_the_checkpoint_through_the_contract(trained, capsys):
    from schedrl.agents.checkpoint import load_policy
    from schedrl.agents.linear.agent import GreedyLinear

    checkpoint = sorted(trained.glob("linear/*/checkpoint_*"))[-1]
    assert isinstance(load_policy(checkpoint), GreedyLinear)
    capsys.readouterr()
    assert main(["evaluate", str(checkpoint), "--sequences", "2", "--jobs", "128", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {r["policy"] for r in result["results"]} == {"fcfs", "sjf", f"checkpoint:{checkpoint}"}
    assert main(["compare", "--trace", "default", "--policies", f"sjf,checkpoint:{checkpoint}", "--sequences", "1",
                 "--jobs", "128", "--json"]) == 0


def test_select_scores_its_checkpoints(trained, capsys):
    assert main(["select", str(trained), "--sequences", "1", "--jobs", "128"]) == 0
    selection = json.loads((trained / "selection.json").read_text())
    assert len(selection["scores"]) >= 1 and selection["best"] in selection["scores"]


def test_the_example_sweep_runs_two_trials(tmp_path, ray_session, capsys):
    assert main(["tune", str(REPO / "tune_configs" / "linear_example.yaml"), "--out", str(tmp_path)]) == 0
    rows = (tmp_path / "trials.csv").read_text().splitlines()
    assert len(rows) == 3 and all(",ok," in row for row in rows[1:])
    assert "Evaluation" in (tmp_path / "results.md").read_text()


def test_the_agent_package_is_self_contained():
    """Nothing outside schedrl/agents/linear names it, except the registry line."""
    mentions = [p for p in (REPO / "schedrl").rglob("*.py")
                if "agents.linear" in p.read_text() and "agents/linear" not in str(p.relative_to(REPO))]
    assert [str(p.relative_to(REPO)) for p in mentions] == ["schedrl/agents/__init__.py"]
