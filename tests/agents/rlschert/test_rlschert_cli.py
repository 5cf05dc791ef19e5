"""RLSchert through the shared driver and CLI: `schedrl train rlschert` validates and reports against its
heuristics on the discrete-time cluster, and `schedrl evaluate` scores the checkpoint on seeded sequences."""

from __future__ import annotations

import json

import numpy as np
import pytest

from schedrl.cli.main import main


@pytest.fixture(scope="module")
def run(tmp_path_factory, ray_session):
    out = tmp_path_factory.mktemp("rlschert-cli") / "run"
    assert main(["train", "rlschert", "--jobs", "synthetic", "--iterations", "1", "--batch-size", "256",
                 "--simu-len", "20", "--validation-sequences", "1", "--eval-sequences", "2", "--out", str(out)]) == 0
    return out


def test_train_warm_starts_rlschert_by_dagger(run):
    warm = json.loads((run / "summary.json").read_text())["warm_start"]
    assert warm["teacher"] == "kill rule + SAF" and len(warm["rounds"]) == 4 and warm["episodes"] == 32 + 4 * 16
    assert warm["agreement"] > warm["agreement_before"]
    record = json.loads((run / "schedrl_run.json").read_text())
    assert record["settings"]["warm_start"] is True and record["settings"]["discount"] == "decision"


def test_train_reports_against_the_cluster_heuristics(run):
    record = json.loads((run / "schedrl_run.json").read_text())
    assert record["agent"] == "rlschert" and record["sim_config"] is None
    evaluation = json.loads((run / "evaluation.json").read_text())
    labels = [r["policy"] for r in evaluation["results"]]
    assert labels[:5] == ["TETRIS", "RANDOM", "SJF", "TETRIS*", "SAF"] and labels[-1] == "RL"
    assert "SAF+KILL" in labels and evaluation["metric"] == "slowdown" and len(evaluation["starts"]) == 2
    assert all(np.isfinite(r["mean"]) and r["mean"] >= 1.0 for r in evaluation["results"])


def test_evaluate_scores_the_checkpoint_on_seeded_sequences(run, capsys):
    checkpoint = sorted(run.glob("rlschert/*/checkpoint_*"))[-1]
    capsys.readouterr()
    assert main(["evaluate", str(checkpoint), "--sequences", "2", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["evaluate", str(checkpoint), "--sequences", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first  # seeded: the same sequences and values
    assert main(["evaluate", str(checkpoint), "--trace", "default"]) == 2
    assert "runs on the discrete-time cluster" in capsys.readouterr().err


def test_dtsim_sweep_scores_the_checkpoint_and_skips_a_res_slot_it_cannot_read(run, capsys):
    checkpoint = sorted(run.glob("rlschert/*/checkpoint_*"))[-1]
    capsys.readouterr()
    assert main(["dtsim", "sweep", "--param", "res_slot", "--values", "16,20", "--checkpoint", f"RL={checkpoint}",
                 "--jobs", "synthetic", "--sequences", "2", "--simu-len", "20", "--json"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]["RL"]
    assert cells[0]["mean"] is None and "trained at res_slot 20" in cells[0]["note"]
    assert len(cells[1]["per_sequence"]) == 2 and cells[1]["mean"] >= 1.0
    # a one-iteration policy may wait until max_seq; the cell says so rather than scoring only the finished jobs
    assert cells[1]["note"] == "" or "hit max_seq" in cells[1]["note"]
