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
    # one entry per DAgger round, keyed by its number (Tune's loggers take scalars, not lists)
    assert sorted(warm["rounds"]) == ["1", "2", "3", "4"]
    # a round's average slowdown exists where at least one of its sequences ran to the end (not cut)
    assert all(r["episodes"] == 16 and ("slowdown" in r) == (r["cut"] < 16) for r in warm["rounds"].values())
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


def test_evaluate_reproduces_the_run_table_and_puts_checkpoints_side_by_side(run, tmp_path, capsys):
    """`--starts` takes the sequence seeds of a run's evaluation.json and gives back that table; several
    checkpoints (RLSchert next to DeepRM, in the issue's words) are columns on the same sequences, and a checkpoint
    trained on other sequences is refused with the field that differs."""
    import shutil

    checkpoint = sorted(run.glob("rlschert/*/checkpoint_*"))[-1]
    selected = json.loads((run / "summary.json").read_text())["checkpoint"]
    evaluation = json.loads((run / "evaluation.json").read_text())
    seeds = ",".join(str(s) for s in evaluation["starts"])
    capsys.readouterr()
    assert main(["evaluate", selected, "--starts", seeds, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["results"] == evaluation["results"] and again["note"] == "given seeds"
    assert main(["evaluate", selected, str(checkpoint), "--starts", seeds, "--json"]) == 0
    both = {r["policy"]: r["per_sequence"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert list(both)[-2:] == ["RLSCHERT", "RLSCHERT#2"] and "RL" not in both
    assert both["RLSCHERT"] == {r["policy"]: r["per_sequence"] for r in evaluation["results"]}["RL"]
    other = tmp_path / "other"
    shutil.copytree(checkpoint.parent, other)
    record = json.loads((other / "schedrl_run.json").read_text())
    record["env_config"]["simu_len"] = 30
    (other / "schedrl_run.json").write_text(json.dumps(record))
    assert main(["evaluate", str(checkpoint), str(other / checkpoint.name), "--sequences", "2"]) == 2
    err = capsys.readouterr().err
    assert "trained on other sequences" in err and "simu_len 30 vs 20" in err
    assert main(["evaluate", str(checkpoint), str(checkpoint), "--metrics", "wait"]) == 2
    assert "--metrics, --shares, --kiviat and --bars need event-simulator agents" in capsys.readouterr().err


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


def test_select_rescores_the_checkpoints_on_fresh_sequence_seeds(run, capsys):
    """`schedrl select` goes through the agent: generated sequences get seeds of their own (neither training's
    validation nor the evaluation's), the checkpoints and the cluster heuristics are scored on them by the same
    evaluation code as `evaluate`, and `--evaluate` scores the chosen one on the run's evaluation seeds."""
    from schedrl.agents.rlschert.agent import RLSchertAgent
    from schedrl.agents.rlschert.config import RLSchertEnvConfig
    from schedrl.agents.checkpoint import load_policy

    capsys.readouterr()
    assert main(["select", str(run), "--sequences", "3", "--seed", "777", "--evaluate"]) == 0
    out = capsys.readouterr()
    selection = json.loads((run / "selection.json").read_text())
    evaluation = json.loads((run / "evaluation.json").read_text())
    assert len(selection["starts"]) == 3 and not set(selection["starts"]) & set(evaluation["starts"])
    record = json.loads((run / "schedrl_run.json").read_text())
    env = RLSchertEnvConfig.from_dict(record["env_config"])
    judge = RLSchertAgent().judge(env)
    assert selection["starts"] == judge.evaluation_ids(None, 3, 777, judge.sequence_length)
    best = selection["best"]
    starts = selection["starts"]
    assert selection["scores"][best] == pytest.approx(np.mean(judge.score_policy(load_policy(best), None, starts, 0)))
    assert selection["baselines"]["SAF"] == pytest.approx(np.mean(judge.score_baselines(None, starts, 0)["SAF"]))
    assert "baselines there (slowdown)" in out.err and "best checkpoint by validation slowdown" in out.out
    assert "RLSCHERT" in out.out or "RL" in out.out  # the --evaluate table


@pytest.mark.parametrize("agent", ["rlschert", "deeprm"])
def test_work_conserving_option_reaches_the_env_config(agent):
    from schedrl.cli.main import build_parser
    from schedrl.cli.train import build_spec

    def env(*extra):
        return build_spec(build_parser("train").parse_args(["train", agent, *extra, "--out", "x"])).env

    assert env("--work-conserving").work_conserving is True and env().work_conserving is False
