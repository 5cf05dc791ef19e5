"""`schedrl train` / `schedrl evaluate` from the command line: a tiny real training run, its checkpoint
evaluated on another trace (other machine size) against the library's own numbers, the checkpoint
as a `simulate` policy, and one-line input errors with exit status 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from schedrl.cli.main import main

TINY = ["--trace", "default", "--iterations", "2", "--checkpoint-every", "1", "--validate-every", "1",
        "--batch-size", "128", "--epochs", "1",
        "--sequence-length", "32", "--envs-per-runner", "1", "--no-filtering", "--eval-sequences", "1",
        "--eval-jobs", "64"]


@pytest.fixture(scope="module")
def trained(ray_session, tmp_path_factory) -> Path:
    """The last checkpoint of a two-iteration `schedrl train rlscheduler` run (metric wait)."""
    out = tmp_path_factory.mktemp("train") / "run"
    assert main(["train", "rlscheduler", *TINY, "--metric", "wait", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    return Path(summary["checkpoint"])


@pytest.fixture(scope="module")
def other_trace(tmp_path_factory) -> Path:
    """A Lublin trace for a 64-processor machine (the training trace has 256)."""
    path = tmp_path_factory.mktemp("other") / "other.swf.gz"
    assert main(["traces", "generate", "lublin", "--jobs", "400", "--nodes", "64", "--seed", "5",
                 "--out", str(path)]) == 0
    return path


def test_train_writes_its_outputs_and_prints_the_comparison(trained, capsys):
    out = trained.parents[2]
    for name in ("summary.json", "schedrl_run.json", "evaluation.md", "training_curve.png"):
        assert (out / name).is_file(), name
    run = json.loads((out / "schedrl_run.json").read_text())
    assert run["env_config"]["metric"] == "wait" and run["env_config"]["norm"]  # normalisation saved
    # the machine's default warm start ran: the best heuristic cloned before the first iteration
    summary = json.loads((out / "summary.json").read_text())
    assert run["settings"]["warm_start"] == "auto"
    warm = summary["warm_start"]
    assert warm["teacher"] in ("sjf", "f1", "wfp3", "unicep", "fcfs") and warm["decisions"] == 64 * 32
    assert warm["agreement"] > warm["agreement_before"]
    # auto cloned the three best heuristics on the demonstrations and kept the clone that scheduled the
    # validation sequences best (wait: lower is better); the best heuristic ranks first among them
    clones = warm["clone_values"]
    assert len(clones) == 3 and warm["clones_scored_on"] == "validation"
    assert next(iter(clones)) == min(warm["candidates"], key=warm["candidates"].get)
    assert warm["teacher"] == min(clones, key=clones.get)
    assert warm["agreement"] == warm["clone_agreements"][warm["teacher"]]
    # the warm start counts as training time (a --time-budget includes it)
    import pandas as pd

    progress = pd.read_csv(trained.parent / "progress.csv")
    first = progress.iloc[0]
    assert first["time_total_s"] >= first["time_this_iter_s"] + warm["demonstration_seconds"] + warm["clone_seconds"]
    assert "best validation" in summary["selection"]  # the checkpoint evaluated was chosen on validation


def test_evaluate_on_another_trace_matches_the_library(trained, other_trace, capsys):
    from schedrl.eval.compare import choose_starts
    from schedrl.metrics import summarize
    from schedrl.agents.checkpoint import load_policy
    from schedrl.sim import SimConfig, Simulator
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.sampling import sequence

    capsys.readouterr()
    assert main(["evaluate", str(trained), "--trace", str(other_trace), "--policies", "sjf,f1",
                 "--backfill", "none,easy", "--sequences", "2", "--jobs", "64", "--seed", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["metric"] == "wait"  # the metric the policy was trained on
    workload = load_trace(str(other_trace))
    assert workload.max_procs == 64
    starts = choose_starts(workload, 64, 2, 3, None)
    assert report["starts"] == list(starts)
    rows = {(r["backfill"], r["policy"]): r for r in report["results"]}
    assert {p for _, p in rows} == {"sjf", "f1", f"checkpoint:{trained}"}
    policy = load_policy(trained)
    for backfill in ("none", "easy"):
        expected = [summarize(Simulator(sequence(workload, s, 64), SimConfig(backfill=backfill)).run(policy)).avg_wait
                    for s in starts]
        row = rows[(backfill, f"checkpoint:{trained}")]
        assert row["per_sequence"] == pytest.approx(expected)
        assert row["mean"] == pytest.approx(np.mean(expected))


def test_evaluate_defaults_to_the_training_trace_and_backfill(trained, capsys):
    capsys.readouterr()
    assert main(["evaluate", str(trained), "--sequences", "1", "--jobs", "64", "--metric", "bsld"]) == 0
    captured = capsys.readouterr()
    # a catalog name stays a name in the run's records (each node, and each later machine, resolves it)
    assert "as trained: trace default, cleaning default, backfill none" in captured.err
    text = captured.out
    assert text.startswith("avg bsld on default: mean over 1 sequences of 64 jobs")
    assert text.splitlines()[1].split()[-1] == "RL"
    assert [line.split()[0] for line in text.splitlines()[3:-1]] == ["none"]
    # the last line pairs the policy with the best heuristic on the same sequence (one sequence: no interval)
    assert text.splitlines()[-1].startswith("RL vs ") and "of 1 sequences" in text.splitlines()[-1]


def test_evaluate_on_overlapping_sequences_prints_the_interval_of_the_disjoint_windows(trained, capsys):
    """Five 64-job windows within 128 jobs share jobs: the paired interval counts the 2 disjoint ones that fit (wider
    than a t interval over all five), and the table says so."""
    from schedrl.eval import paired

    starts = "100,116,132,148,164"
    capsys.readouterr()
    assert main(["evaluate", str(trained), "--starts", starts, "--jobs", "64", "--metric", "bsld"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert "of 5 sequences (overlapping: interval from 2 disjoint windows): " in line
    assert main(["evaluate", str(trained), "--starts", starts, "--jobs", "64", "--metric", "bsld", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    (c,) = table["comparisons"]
    assert c["independent"] == 2 and c["sequences"] == 5
    values = {("RL" if r["policy"].startswith("checkpoint:") else r["policy"]): r["per_sequence"]
              for r in table["results"]}
    (naive,) = paired.comparisons(values, ["RL"], "bsld")
    width = lambda x: x["ci95_pct"][1] - x["ci95_pct"][0]  # noqa: E731
    assert width(naive) == 0 or width(c) > width(naive)  # zero only where RL ties its baseline on every window
    assert c["difference_pct"] == pytest.approx(naive["difference_pct"])
    # drawn in no zone and not overlapping: every sequence counts, as before
    assert main(["evaluate", str(trained), "--starts", "100,300", "--jobs", "64", "--metric", "bsld", "--json"]) == 0
    assert "independent" not in json.loads(capsys.readouterr().out)["comparisons"][0]


def test_evaluate_is_a_python_call_that_the_cli_only_prints(trained, capsys):
    from schedrl.agents.checkpoint import load_policy
    from schedrl.eval.evaluate import Request, evaluate, render

    said = []
    table = evaluate([load_policy(trained)], [str(trained)], Request(sequences=2, jobs=64, metric="bsld"),
                     say=said.append)
    assert any(line.startswith("as trained: trace default") for line in said)
    capsys.readouterr()
    assert main(["evaluate", str(trained), "--sequences", "2", "--jobs", "64", "--metric", "bsld"]) == 0
    assert capsys.readouterr().out == render(table) + "\n"


def test_checkpoint_is_a_simulate_policy(trained, capsys):
    capsys.readouterr()
    assert main(["simulate", "--trace", "default", "--policy", f"checkpoint:{trained}", "--start", "10",
                 "--jobs", "64", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["jobs"] == 64 and out["avg_bsld"] >= 1.0


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["evaluate", "CKPT", "--sequences", "0"], r"--sequences must be >= 1, got 0",
                 marks=pytest.mark.integration),  # CKPT: the module's training
    (["evaluate", "{tmp}/no/such/checkpoint"], r"checkpoint /\S+/no/such/checkpoint does not exist"),
    (["train", "rlscheduler", "--iterations", "1", "--time-budget", "soon", "--out", "{tmp}/b"],
     r"--time-budget must look like"),
    (["train", "rlscheduler", "--iterations", "1", "--metric", "speed", "--out", "{tmp}/c"], r"speed"),
    (["train", "rlscheduler", "--iterations", "1", "--runner-resource", "gpu_node", "--out", "{tmp}/d"],
     r"--runner-resource must look like NAME=AMOUNT"),
    (["train", "rlscheduler", "--iterations", "1", "--trace", "{tmp}/absent.swf", "--out", "{tmp}/e"], r"absent\.swf"),
    (["train", "rlscheduler", "--iterations", "1", "--resume", "--out", "{tmp}/f"], r"nothing to resume"),
    (["train", "rlscheduler", "--iterations", "1", "--warm-start", "tetris", "--out", "{tmp}/g"],
     r"unknown warm-start teacher 'tetris'; choose auto, none or one of fcfs, sjf"),
    (["train", "rlscheduler", "--iterations", "1", "--keep-checkpoints", "-1", "--out", "{tmp}/h"],
     r"--keep-checkpoints must be >= 0"),
])
def test_bad_train_and_evaluate_input_is_one_line_with_exit_status_2(args, message, tmp_path, request, capsys):
    if "CKPT" in args:
        args = [str(request.getfixturevalue("trained")) if a == "CKPT" else a for a in args]
    capsys.readouterr()
    assert main([a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"schedrl {args[0]}: error: "), err
    assert re.search(message, err), err


def test_without_a_stop_criterion_training_gets_the_default_budget():
    from schedrl.cli.main import build_parser
    from schedrl.cli.train import DEFAULT_TIME_BUDGET, build_spec

    args = build_parser("train").parse_args(["train", "rlscheduler", "--out", "x"])
    spec = build_spec(args)
    assert DEFAULT_TIME_BUDGET == "30m" and spec.stop.time_budget_s == 1800 and spec.stop.iterations is None
    spec = build_spec(build_parser("train").parse_args(["train", "rlscheduler", "--iterations", "3", "--out", "x"]))
    assert spec.stop.time_budget_s is None and spec.stop.iterations == 3


def test_resume_continues_with_the_recorded_options(trained, capsys):
    out = trained.parents[2]
    run = json.loads((out / "schedrl_run.json").read_text())
    assert run["train_args"][:3] == ["rlscheduler", "--trace", "default"] and "--resume" not in run["train_args"]
    capsys.readouterr()
    # the run is complete: resuming restores it, trains nothing more, and evaluates it again
    assert main(["train", "rlscheduler", "--resume", "--out", str(out), "--lr", "0.5", "--eval-jobs", "32"]) == 0
    captured = capsys.readouterr()
    assert "--resume continues with the run's original options; ignoring --eval-jobs, --lr" in captured.err
    assert "mean over 1 sequences of 64 jobs" in captured.out  # the recorded --eval-jobs 64, not 32
    assert json.loads((out / "summary.json").read_text())["checkpoint"] == str(trained)


def test_select_scores_every_checkpoint_on_sequences_clear_of_the_evaluation(trained, capsys):
    from schedrl.eval.select import SELECTION_FILE, validation_starts
    from schedrl.metrics import summarize
    from schedrl.agents.checkpoint import load_policy
    from schedrl.sim import SimConfig, Simulator
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.sampling import sequence

    out = trained.parents[2]
    capsys.readouterr()
    assert main(["select", str(out), "--sequences", "3", "--jobs", "64", "--evaluate"]) == 0
    captured = capsys.readouterr()
    selection = json.loads((out / SELECTION_FILE).read_text())
    held_out = json.loads((out / "evaluation.json").read_text())
    assert [Path(c).name for c in selection["scores"]] == ["checkpoint_000000", "checkpoint_000001"]
    for start in selection["starts"]:  # no validation job is an evaluation job
        assert all(start + 64 <= s or s + held_out["jobs"] <= start for s in held_out["starts"])
    workload = load_trace("default")
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import RunRecord

    record = RunRecord.read(out / "schedrl_run.json")
    agent = get_agent("rlscheduler")
    lo, hi = agent.judge(agent.env_config_class.from_dict(record.env_config)).split_range(len(workload), validation=True)
    assert 0 < lo and all(lo <= s and s + 64 <= hi for s in selection["starts"])  # the run's validation zone
    for checkpoint, score in selection["scores"].items():
        policy = load_policy(checkpoint)
        expected = np.mean([summarize(Simulator(sequence(workload, s, 64), SimConfig()).run(policy)).avg_wait
                            for s in selection["starts"]])
        assert score == pytest.approx(expected)
    best = min(selection["scores"], key=selection["scores"].get)
    assert selection["best"] == best and "best checkpoint by validation wait" in captured.out
    # --evaluate: the chosen checkpoint on the run's own evaluation sequences, as one more table column
    assert f"mean over {len(held_out['starts'])} sequences of {held_out['jobs']} jobs" in captured.out
    assert captured.out.splitlines()[-4].split()[-1] == "RL"
    assert captured.out.splitlines()[-1].startswith("RL vs ")  # paired with the best heuristic on those sequences
    with pytest.raises(ValueError, match="keep 64-job sequences clear of the 1 evaluation sequences"):
        validation_starts(workload, 64, 100, 0, avoid=[0], avoid_jobs=len(workload) - 70)


def test_select_needs_a_training_run(tmp_path, capsys):
    assert main(["select", str(tmp_path)]) == 2
    assert "give the --out directory of a `schedrl train` run" in capsys.readouterr().err


def test_train_refuses_to_overwrite_a_run(trained, capsys):
    out = trained.parents[2]
    capsys.readouterr()
    assert main(["train", "rlscheduler", *TINY, "--out", str(out)]) == 2
    assert "already holds a run: use --resume, or another --out" in capsys.readouterr().err


def test_methods_table_of_several_checkpoints_matches_the_library(trained, tmp_path, capsys):
    """`evaluate A B --metrics ... --shares --kiviat`: every baseline and checkpoint on one set of held-out
    sequences, each cell the mean of the simulator's own aggregates (DRAS Table IV / Fig. 6)."""
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import load_policy
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    png = tmp_path / "kiviat.png"
    capsys.readouterr()
    assert main(["evaluate", str(trained), str(trained), "--sequences", "2", "--jobs", "64", "--json",
                 "--metrics", "wait,max_wait,slowdown,utilization", "--shares", "--kiviat", str(png),
                 "--bars", str(tmp_path / "bars.png")]) == 0
    table = json.loads(capsys.readouterr().out)
    assert png.stat().st_size > 10_000 and (tmp_path / "bars.png").stat().st_size > 10_000
    assert table["trained"] == ["rlscheduler", "rlscheduler#2"]
    assert table["columns"][:4] == ["wait", "max_wait", "slowdown", "utilization"] and "work backfilled" in table["columns"]
    policy = load_policy(trained)
    agent = get_agent("rlscheduler")
    judge = agent.judge(agent.env_config_class.from_dict(dict(policy.record.env_config)))
    workload = judge.load()
    assert min(table["starts"]) >= judge.split_range(len(workload))[0]  # the evaluation zone
    schedules = [Simulator(sequence(workload, s, 64), judge.sim).run(policy) for s in table["starts"]]
    expected = [summarize(s) for s in schedules]
    for label in ("rlscheduler", "rlscheduler#2"):
        mean = table["methods"][label]["mean"]
        assert mean["wait"] == pytest.approx(np.mean([m.avg_wait for m in expected]))
        assert mean["max_wait"] == pytest.approx(np.mean([m.max_wait for m in expected]))
        shares = [mean[k] for k in ("jobs ready", "jobs reserved", "jobs backfilled")]
        assert sum(shares) == pytest.approx(1.0)
    baselines = [b.name for b in judge.baselines]
    assert list(table["methods"])[:len(baselines)] == baselines


@pytest.mark.parametrize(("extra", "message"), [
    (["--metrics", "speed"], r"unknown metric 'speed' in --metrics; choose from wait, max_wait"),
    (["--metrics", "util:gpu"], r"unknown metric 'util:gpu'.*util:NAME for a resource \(procs, nodes"),
    (["--metrics", "wait,slowdown", "--kiviat", "{tmp}/k.png"], r"a Kiviat chart needs at least 3 metrics, got 2"),
    (["--shares", "--policies", "sjf"], r"--policies applies to the single-metric table"),
    (["--online"], r"is a rlscheduler checkpoint; online learning during evaluation is implemented for dras-pg, dras-dql"),
])
def test_bad_methods_table_input_is_one_line(trained, extra, message, tmp_path, capsys):
    capsys.readouterr()
    args = ["evaluate", str(trained), "--sequences", "1", "--jobs", "64"] + [a.replace("{tmp}", str(tmp_path)) for a in extra]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("schedrl evaluate: error: "), err
    assert re.search(message, err), err


def test_methods_table_refuses_a_checkpoint_that_trained_on_the_evaluation_jobs(trained, tmp_path, capsys):
    import shutil

    run = trained.parent
    copy = tmp_path / run.name
    shutil.copytree(run, copy, ignore=lambda d, names: [n for n in names if n.startswith("checkpoint_") and
                                                        n != trained.name])
    record = json.loads((copy / "schedrl_run.json").read_text())
    record["env_config"]["train_fraction"] = 1.0  # as if trained on the whole trace (the paper's protocol)
    (copy / "schedrl_run.json").write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["evaluate", str(trained), str(copy / trained.name), "--sequences", "1", "--jobs", "64"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"trained on jobs 0\.\.\d+ of 'default', which overlap the evaluation sequences", err), err


def test_cross_trace_table_rows_match_single_trace_evaluations(trained, other_trace, capsys):
    """`evaluate CKPT --traces A,B` (RLScheduler Table VII): each row is what `evaluate CKPT --trace B` gives."""
    capsys.readouterr()
    assert main(["evaluate", str(trained), "--traces", f"default,{other_trace}", "--sequences", "2", "--jobs", "64",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["trace"] for r in rows][0] == "default" and len(rows) == 2
    assert rows[0]["note"].startswith("held out") and rows[1]["note"] == "another trace"
    assert main(["evaluate", str(trained), "--trace", str(other_trace), "--sequences", "2", "--jobs", "64",
                 "--json"]) == 0
    single = json.loads(capsys.readouterr().out)
    assert single["starts"] == rows[1]["starts"]
    by_label = {r["policy"]: r["mean"] for r in single["results"]}
    assert rows[1]["means"]["RL"] == pytest.approx(next(v for k, v in by_label.items() if k.startswith("checkpoint:")))
    assert rows[1]["means"]["SJF"] == pytest.approx(by_label["sjf"])
    ranked = sorted(rows[1]["means"].values())
    assert rows[1]["rl_rank"] == ranked.index(rows[1]["means"]["RL"]) + 1
    # the paired comparison with the second-best heuristic, on the row's own per-sequence values
    versus = rows[1]["paired_vs_second_best"]
    heuristics = sorted((v, k) for k, v in rows[1]["means"].items() if k != "RL")
    assert versus["baseline"] == heuristics[1][1] and versus["sequences"] == 2
    rl, base = np.asarray(rows[1]["per_sequence"]["RL"]), np.asarray(rows[1]["per_sequence"][versus["baseline"]])
    assert versus["difference_pct"] == pytest.approx(100 * (rl - base).mean() / base.mean())
    assert versus["verdict"] == "too few windows for a verdict" or versus["equal"] == 2  # 2 sequences: no verdict
    capsys.readouterr()
    assert main(["evaluate", str(trained), "--traces", "default", "--sequences", "1", "--jobs", "64"]) == 0
    text = capsys.readouterr().out
    assert "RL rank" in text and "RL vs 2nd-best heuristic" in text and "paired: difference [95% CI], verdict" in text


def test_cross_trace_refuses_a_trace_option_beside_it(trained, capsys):
    assert main(["evaluate", str(trained), "--traces", "default", "--trace", "default"]) == 2
    assert "--traces makes its own table" in capsys.readouterr().err


def test_validate_every_k_scores_and_checkpoints_only_those_iterations(ray_session, tmp_path, capsys):
    import pandas as pd

    out = tmp_path / "run"
    tiny = [a if a != "2" else "5" for a in TINY]  # five iterations
    assert main(["train", "rlscheduler", *tiny, "--validate-every", "2", "--keep-checkpoints", "0",
                 "--warm-start", "none", "--out", str(out)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("iter ")]
    assert ["validation" in line for line in lines] == [True, True, False, True, False], lines
    (progress,) = out.rglob("progress.csv")
    scores = pd.read_csv(progress).set_index("training_iteration")["schedrl/validation"]
    assert list(np.isfinite(scores.to_numpy())) == [True, True, False, True, False]
    # checkpoints only where a score exists (2, 4), plus the end (5); the selected one has a score
    checkpoints = sorted(progress.parent.glob("checkpoint_*"))
    assert len(checkpoints) == 3, checkpoints
    selection = json.loads((out / "summary.json").read_text())["selection"]
    picked = int(re.search(r"iteration (\d+)", selection).group(1))
    assert picked in (2, 4) and np.isfinite(scores[picked]), selection


# ---------------------------------------------------------------------------- --scenario in train and evaluate
def test_evaluate_on_a_scenario_equals_evaluate_on_its_trace_starts_and_metric(capsys, trained):
    from schedrl.scenarios import scoring, standard

    scenario = standard()["default"].overridden(sequences=3, jobs=128)
    starts = scoring.sequences(scenario, scoring.load(scenario), "evaluation").ids
    capsys.readouterr()
    assert main(["evaluate", str(trained), "--scenario", "default", "--sequences", "3", "--jobs", "128",
                 "--json"]) == 0
    out, err = capsys.readouterr()
    by_scenario = {r["policy"]: r["per_sequence"] for r in json.loads(out)["results"]}
    assert "scenario default" in err and json.loads(out)["metric"] == "bsld"  # the scenario's, over the record's wait
    assert main(["evaluate", str(trained), "--starts", ",".join(map(str, starts)), "--jobs", "128",
                 "--metric", "bsld", "--json"]) == 0
    classic = {r["policy"]: r["per_sequence"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert np.allclose(by_scenario["RL"], classic[f"checkpoint:{trained}"], rtol=0, atol=1e-9)
    assert np.allclose(by_scenario["F1"], classic["f1"], rtol=0, atol=1e-9)


def test_train_on_a_scenario_records_it_and_explicit_options_win(ray_session, tmp_path, capsys):
    from schedrl.scenarios import standard

    out = tmp_path / "run"
    assert main(["train", "rlscheduler", *TINY, "--scenario", "default", "--metric", "wait", "--out", str(out)]) == 0
    record = json.loads(next(out.rglob("schedrl_run.json")).read_text())
    # the scenario's split (its first 60%), not the machine default's 0.7, which used to replace it
    assert record["env_config"]["metric"] == "wait" and record["env_config"]["train_fraction"] == 0.6
    expected = standard()["default"].overridden(metric="wait", sequences=1, jobs=64)
    assert record["scenario"] == expected.record()
    evaluation = json.loads((out / "evaluation.json").read_text())
    assert evaluation["starts"][0] >= 31000  # the scenario's evaluation zone


def test_train_on_a_scenario_validates_on_its_fixed_sequences_whatever_the_seed(ray_session, tmp_path):
    """Every seed of a scenario run is validated on the scenario's fixed validation sequences (its checkpoint is
    chosen on the same jobs); an explicit --validation-sequences goes back to seeded ones."""
    from schedrl.scenarios import scoring, standard

    scenario = standard()["default"]
    fixed = scoring.sequences(scenario, scoring.load(scenario), "validation")
    seen = []
    for seed, extra in (("1", []), ("2", []), ("2", ["--validation-sequences", "2"])):
        out = tmp_path / f"run{seed}{len(extra)}"
        assert main(["train", "rlscheduler", *TINY, "--iterations", "1", "--seed", seed, "--scenario", "default",
                     *extra, "--out", str(out)]) == 0
        record = json.loads(next(out.rglob("schedrl_run.json")).read_text())
        seen.append((record["validation"]["starts"], record["validation"]["length"]))
    assert seen[0] == seen[1] == (list(fixed.ids), fixed.length)
    assert len(seen[2][0]) == 2 and seen[2][0] != list(fixed.ids)[:2]


@pytest.mark.parametrize("args, message", [
    (["train", "dras-pg", "--scenario", "default"], r"scenario 'default' is defined for rlscheduler, linear, .*not dras-pg"),
    (["train", "rlscheduler", "--scenario", "lubin1"], r"unknown scenario 'lubin1'; did you mean 'lublin1'"),
    pytest.param(["evaluate", "CKPT", "--scenario", "rlschert-vasp"],
                 r"is generated on the discrete-time cluster; rlscheduler runs on the event simulator",
                 marks=pytest.mark.integration),  # CKPT: the module's training
    pytest.param(["evaluate", "CKPT", "--scenario", "default", "--starts", "5"], r"--scenario fixes the sequences",
                 marks=pytest.mark.integration),
])
def test_scenario_input_errors_are_one_line(args, message, request, capsys, tmp_path):
    args = [str(request.getfixturevalue("trained")) if a == "CKPT" else a for a in args]
    if args[0] == "train":
        args += ["--out", str(tmp_path / "x"), "--iterations", "1"]
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(message, err[0]), err


def test_resume_reads_relative_paths_where_the_run_was_started(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    from schedrl.cli.main import build_parser
    from schedrl.cli.train import plan_where_started, recorded_args

    repo = Path(__file__).resolve().parents[2]
    started = tmp_path / "started"
    started.mkdir()
    shutil.copy(repo / "traces" / "lublin_default.swf.gz", started / "mine.swf.gz")
    out = tmp_path / "out"
    out.mkdir()
    (out / "sweep.json").write_text(json.dumps({
        "train_args": ["rlscheduler", "--trace", "mine.swf.gz", "--iterations", "1", "--out", "out"],
        "cwd": str(started), "spec": {"resources": {"cpus_for_main_process": 1}}}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # resumed from another directory, where mine.swf.gz names nothing
    original = recorded_args(build_parser("train").parse_args(["train", "rlscheduler", "--resume", "--out",
                                                                str(out)]))
    assert original.started_in == str(started) and original.out == str(out)
    plan = plan_where_started(original)
    assert Path(plan.spec.env.trace) == started / "mine.swf.gz"
    assert Path.cwd() == elsewhere  # and back
