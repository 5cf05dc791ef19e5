"""The inspector through the shared commands: `schedrl train`, `evaluate`, `select`, `export` (its ray-free network
makes the checkpoint's decisions, rejections included) and the tune file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import base_rule_cases
from base_rule_cases import check_inference_network, check_tune_files, exported_decisions
from schedrl.cli.main import main


@pytest.fixture(scope="module")
def trained(tmp_path_factory, ray_session):
    out = tmp_path_factory.mktemp("inspector") / "run"
    # --initial-reject 0.5: the reject logit starts at the accept logit's level, so the greedy policy of one short
    # iteration rejects at many points (the export check below then covers rejections, not only acceptances)
    code = main(["train", "inspector", "--iterations", "1", "--batch-size", "512", "--sequence-length", "128",
                 "--initial-reject", "0.5", "--validation-sequences", "1", "--validation-jobs", "256",
                 "--eval-sequences", "2", "--eval-jobs", "256", "--trial-cpus", "1", "--out", str(out)])
    assert code == 0
    return out


def checkpoint_of(run: Path) -> Path:
    return base_rule_cases.checkpoint_of(run, "inspector")


def test_train_records_the_base_and_evaluates_against_it(trained):
    record = json.loads((trained / "schedrl_run.json").read_text())
    assert record["agent"] == "inspector" and record["env_config"]["base"] == "f1"
    assert record["env_config"]["norm"]["time_scale"] > 0 and record["sim_config"]["discipline"] == "pick-and-wait"
    evaluation = json.loads((trained / "evaluation.json").read_text())
    assert [r["policy"] for r in evaluation["results"]] == ["F1", "FCFS", "SJF", "WFP3", "UNICEP", "RL"]
    assert all(np.isfinite(r["mean"]) for r in evaluation["results"])


def test_evaluate_and_select_load_the_checkpoint(trained, capsys):
    from schedrl.agents.checkpoint import load_policy
    from schedrl.agents.inspector.policy import InspectorPolicy

    checkpoint = checkpoint_of(trained)
    assert isinstance(load_policy(checkpoint), InspectorPolicy)
    capsys.readouterr()
    assert main(["evaluate", str(checkpoint), "--sequences", "2", "--jobs", "256", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert f"checkpoint:{checkpoint}" in {r["policy"] for r in result["results"]}
    assert main(["select", str(trained), "--sequences", "1", "--jobs", "256"]) == 0
    assert json.loads((trained / "selection.json").read_text())["best"]


def test_the_export_makes_the_checkpoints_decisions_rejections_included(trained, tmp_path):
    calls = exported_decisions(checkpoint_of(trained), tmp_path / "export", jobs=512)
    rejections = sum(answer == "True" for name, answer in calls if name == "defer")
    assert rejections > 10, rejections  # the comparison covers rejections


def test_the_inference_network_is_the_policy_part_alone(trained):
    from schedrl.agents.inspector.inference import inference_network

    check_inference_network(checkpoint_of(trained), inference_network, "pi", "not an inspector policy module")


def test_the_tune_file_is_valid():
    check_tune_files("inspector", "inspector_*.yaml")


def test_the_probe_reports_reject_probabilities_and_random_rejections(trained, capsys):
    checkpoint = checkpoint_of(trained)
    capsys.readouterr()
    assert main(["inspector", "probe", str(checkpoint), "--scenario", "default"]) == 0
    out = capsys.readouterr().out
    assert "reject probability at the" in out and "ms each" in out
    # rejecting with probability 0 is the base itself: every row's mean, best and worst are the base's value
    assert main(["inspector", "probe", "--random", "0", "--draws", "2", "--scenario", "default"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    from schedrl.scenarios import get_scenario, scoring

    default = get_scenario("default")  # one row per validation window of the scenario
    validation = scoring.sequences(default, scoring.load(default), "validation")
    assert len(rows) == len(validation.ids) and all(row[1] == row[2] == row[3] == row[4] for row in rows)
    assert main(["inspector", "probe"]) == 2
    assert capsys.readouterr().err.strip() == "schedrl inspector: error: give a checkpoint or --random P (not both)"
