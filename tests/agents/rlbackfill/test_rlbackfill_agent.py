"""Learned backfilling through the shared commands: `schedrl train`, `evaluate`, `select`, `export` (its ray-free
network makes the checkpoint's backfill choices) and the tune files."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import base_rule_cases
from base_rule_cases import check_inference_network, check_tune_files, exported_decisions
from schedrl.cli.main import main


@pytest.fixture(scope="module")
def trained(tmp_path_factory, ray_session):
    out = tmp_path_factory.mktemp("rl-backfill") / "run"
    code = main(["train", "rl-backfill", "--iterations", "1", "--batch-size", "256", "--sequence-length", "256",
                 "--validation-sequences", "1", "--validation-jobs", "512", "--eval-sequences", "2",
                 "--eval-jobs", "512", "--trial-cpus", "1", "--out", str(out)])
    assert code == 0
    return out


def checkpoint_of(run: Path) -> Path:
    return base_rule_cases.checkpoint_of(run, "rl-backfill")


def test_train_records_the_semantics_and_evaluates_against_the_base_with_easy(trained):
    record = json.loads((trained / "schedrl_run.json").read_text())
    assert record["agent"] == "rl-backfill" and record["env_config"]["base"] == "f1"
    assert record["env_config"]["norm"]["time_scale"] > 0
    assert record["sim_config"]["backfill"] == "easy" and record["sim_config"]["backfill_choice"] == "policy"
    evaluation = json.loads((trained / "evaluation.json").read_text())
    assert [r["policy"] for r in evaluation["results"]] == ["F1+EASY", "FCFS+EASY", "SJF+EASY", "RL"]
    assert all(np.isfinite(r["mean"]) for r in evaluation["results"])


def test_evaluate_and_select_load_the_checkpoint(trained, capsys):
    from schedrl.agents.checkpoint import load_policy
    from schedrl.agents.rlbackfill.policy import RLBackfillPolicy

    checkpoint = checkpoint_of(trained)
    assert isinstance(load_policy(checkpoint), RLBackfillPolicy)
    capsys.readouterr()
    assert main(["evaluate", str(checkpoint), "--sequences", "2", "--jobs", "512", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # beside its baselines, each under its own semantics (first-fit backfilling), as `train`'s final table
    assert [r["policy"] for r in result["results"]] == ["F1+EASY", "FCFS+EASY", "SJF+EASY", "RL"]
    assert main(["select", str(trained), "--sequences", "1", "--jobs", "512"]) == 0
    assert json.loads((trained / "selection.json").read_text())["best"]


def test_the_export_makes_the_checkpoints_backfill_choices(trained, tmp_path):
    from schedrl.agents.checkpoint import load_policy

    assert load_policy(checkpoint_of(trained)).record.sim_config.backfill_choice == "policy"
    calls = exported_decisions(checkpoint_of(trained), tmp_path / "export", jobs=1024)
    backfills = sum(name == "backfill" for name, _ in calls)
    assert backfills > 20, backfills  # the comparison covers backfill choices


def test_compare_scores_the_checkpoint_on_the_backfills_it_learned(trained, capsys):
    """`compare --policies checkpoint:` runs a learned-backfilling policy with its backfill choice (the run record's
    `backfill_choice="policy"`), not the simulator's first fit (where it would be its base with EASY)."""
    from schedrl.agents.checkpoint import load_policy
    from schedrl.metrics import summarize
    from schedrl.scenarios.scoring import run_policy
    from schedrl.sim import Simulator
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.cleaning import CleaningRules
    from schedrl.workload.sampling import sequence

    checkpoint = checkpoint_of(trained)
    config = load_policy(checkpoint).record.sim_config
    assert config.backfill_choice == "policy" and config.backfill == "easy"
    capsys.readouterr()
    assert main(["compare", "--trace", "default", "--backfill", "easy", "--policies", f"checkpoint:{checkpoint}",
                 "--starts", "36000,38000", "--jobs", "512", "--json", "--no-progress"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    workload = load_trace("default", CleaningRules.preset("default"))
    first_fit = []
    for value, start in zip(row["per_sequence"], (36000, 38000)):
        jobs = sequence(workload, start, 512)
        own = summarize(run_policy(load_policy(checkpoint), Simulator(jobs, config))).value("bsld")
        assert value == pytest.approx(own, rel=1e-12)
        other = replace(config, backfill_choice="first-fit")
        first_fit.append(summarize(run_policy(load_policy(checkpoint), Simulator(jobs, other))).value("bsld"))
    assert first_fit != row["per_sequence"]  # the check can tell the two semantics apart


def test_the_inference_network_is_the_policy_part_alone(trained):
    from schedrl.agents.rlbackfill.inference import inference_network

    check_inference_network(checkpoint_of(trained), inference_network, "kernel",
                            "not a learned-backfilling policy module")


def test_the_tune_files_are_valid():
    check_tune_files("rl-backfill", "rl_backfill_*.yaml")
