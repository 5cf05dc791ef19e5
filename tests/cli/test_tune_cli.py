"""`schedrl tune`: dry runs of every shipped sweep, one-line input errors, and an interrupted sweep
resumed without re-running its finished trial."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml

from schedrl.training.sweep_file import load_sweep
from schedrl.cli.main import main

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO / "tune_configs").glob("*.yaml"))


def environment() -> dict:
    """The subprocess environment, read now: after `ray_session` it carries Ray's auth mode for joining it."""
    return {**os.environ, "RAY_BACKEND_LOG_LEVEL": "fatal"}


def schedrl(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedrl", *args], capture_output=True, text=True, timeout=timeout,
                          env=environment())


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_sweep_passes_the_dry_run(path, capsys):
    assert main(["tune", str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    spec = load_sweep(path)
    assert f"{spec.num_trials()} trials" in out
    trial_lines = [line for line in out.splitlines() if re.match(r"\s+\d+\s", line)]
    assert len(trial_lines) == spec.num_trials()


@pytest.mark.integration  # the entry point as a subprocess
def test_dry_run_lists_grid_times_samples_without_starting_ray(tmp_path):
    sweep = tmp_path / "grid.yaml"
    sweep.write_text(yaml.safe_dump({
        "env": {"trace": "default", "backfill": {"grid": ["none", "easy", "conservative"]}},
        "param_space": {"ppo.lr": {"loguniform": [1.0e-4, 1.0e-3]}},
        "num_samples": 2, "stop": {"iterations": 3},
    }))
    proc = schedrl("tune", str(sweep), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "6 trials = grid of 3 x 2 sample(s)" in proc.stdout
    assert "environments prepared before training: 3" in proc.stdout
    assert "ppo.lr~" in proc.stdout and "drawn at random" in proc.stdout
    assert "Ray instance" not in proc.stdout + proc.stderr


@pytest.mark.integration  # the entry point as a subprocess
def test_input_errors_are_one_line_with_exit_status_2(tmp_path, capsys):
    sweep = tmp_path / "typo.yaml"
    sweep.write_text("ppo:\n  learning_rate: 3.0e-4\nstop: {iterations: 1}\n")
    proc = schedrl("tune", str(sweep), "--dry-run")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"schedrl tune: error: {sweep}: unknown key 'ppo.learning_rate' (did you mean lr?)"
    missing_trace = tmp_path / "trace.yaml"
    missing_trace.write_text("env: {trace: no_such_trace}\nstop: {iterations: 1}\n")
    assert main(["tune", str(missing_trace), "--dry-run"]) == 2
    assert main(["tune", str(tmp_path / "absent.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "no_such_trace" in err[0] and "absent.yaml does not exist" in err[1]


def test_set_changes_settings_of_the_file_and_bad_ones_are_one_line(tmp_path, capsys):
    sweep = tmp_path / "seeds.yaml"
    sweep.write_text(yaml.safe_dump({"env": {"trace": "default"}, "ppo": {"seed": {"grid": [0, 1, 2]}},
                                     "stop": {"time_budget": "30m"}}))
    assert main(["tune", str(sweep), "--dry-run", "--set", "stop.time_budget=15m",
                 "--set", "ppo.seed={grid: [4, 5]}", "--set", "training.validate_every=3"]) == 0
    out = capsys.readouterr().out
    assert "2 trials = grid of 2 x 1 sample(s)" in out and "stop: 900 s per trial" in out
    spec = load_sweep(sweep, ["stop.time_budget=15m", "training.validate_every=3"])
    assert spec.stop.time_budget_s == 900 and spec.training.validate_every == 3 and spec.num_trials() == 3
    assert load_sweep(sweep).stop.time_budget_s == 1800  # the file itself is unchanged
    for bad, message in [("stop", "--set must look like KEY.PATH=VALUE"),
                         ("stop.budget=15m", "with --set stop.budget=15m: unknown key 'stop.budget'"),
                         ("env.trace.x=1", "--set env.trace.x=1: 'env.trace' is a value in"),
                         ("stop.time_budget=[", "--set stop.time_budget=[: the value is not valid YAML")]:
        assert main(["tune", str(sweep), "--dry-run", "--set", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (bad, err)


def test_resume_finishes_an_interrupted_sweep_without_rerunning_finished_trials(tmp_path, ray_session):
    sweep = tmp_path / "two.yaml"
    sweep.write_text(yaml.safe_dump({
        "name": "two",
        "env": {"trace": "default", "sequence_length": 32},
        "ppo": {"num_env_runners": 0, "num_envs_per_env_runner": 1, "train_batch_size_per_learner": 128,
                "num_epochs": 1, "seed": {"grid": [0, 1]}, "warm_start": "sjf", "warm_start_episodes": 3,
                "warm_start_epochs": 1},
        "training": {"filtering": False, "validation_sequences": 1, "checkpoint_every": 1},
        "resources": {"max_concurrent_trials": 1},
        "evaluate": {"sequences": 1, "jobs": 64, "each_trial": True},
        "stop": {"iterations": 1},
    }))
    import ray

    out = tmp_path / "out"
    # both runs join the session's Ray instance (--address), as they would a cluster's
    address = ray.get_runtime_context().gcs_address
    command = [sys.executable, "-m", "schedrl", "tune", str(sweep), "--out", str(out), "--address", address]
    # interrupt (Ctrl-C) as soon as the first trial has finished
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment(),
                            start_new_session=True)
    watchdog = threading.Timer(300, lambda: os.killpg(proc.pid, signal.SIGKILL))
    watchdog.start()
    first, lines = None, []
    try:
        for line in proc.stdout:
            lines.append(line)
            # search, not match: Ray's stderr shares the pipe and may precede our line on it
            finished = re.search(r"(\w+_\d+) finished after 1 iterations", line)
            if finished and first is None:
                first = finished.group(1)
                proc.send_signal(signal.SIGINT)
        rc = proc.wait()
    finally:
        watchdog.cancel()
    output = "".join(lines)
    assert first is not None and rc == 130, f"rc {rc}\n{output[-3000:]}"
    assert f"schedrl tune {sweep} --resume --out {out}" in output
    assert not (out / "results.csv").exists()

    resumed = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=300, env=environment())
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert f"{first} [" not in resumed.stdout  # no result line from the trial that had finished
    assert re.search(r"finished after 1 iterations", resumed.stdout)
    trials = sorted((out / "two").glob("trial_*"))
    assert len(trials) == 2
    results = {t.name: [json.loads(x) for x in (t / "result.json").read_text().splitlines()] for t in trials}
    assert len(results[f"trial_{first}"]) == 1  # trained once, not again on resume
    assert all(r[-1]["training_iteration"] == 1 for r in results.values())
    # each trial warm-started from SJF on demonstrations drawn with its own seed
    warm = [r[0]["schedrl"]["warm_start"] for r in results.values()]
    assert [w["teacher"] for w in warm] == ["sjf", "sjf"] and warm[0]["teacher_value"] != warm[1]["teacher_value"]
    assert len((out / "results.csv").read_text().splitlines()) == 3  # header + each trial of the one group
    # each_trial: both seeds evaluated on the same sequences, then summarised
    report = json.loads((out / "results.json").read_text())
    assert sorted(e["trial"] for e in report["evaluation"]) == [t.name for t in trials]
    assert len({tuple(e["starts"]) for e in report["evaluation"]}) == 1
    (seeds,) = report["seeds"]
    assert seeds["trials"] == 2 and 0 <= seeds["beat_best_heuristic"] <= 2
    assert seeds["mean"] == pytest.approx(np.mean([e["rl"] for e in report["evaluation"]]))
    assert "## Summary per group" in (out / "results.md").read_text()
    # and each trial paired against the best heuristic on those sequences (one sequence: no interval)
    for e in report["evaluation"]:
        paired = e["paired_vs_best_heuristic"]
        assert paired["baseline"] == e["best_heuristic"] and paired["sequences"] == 1
        assert paired["difference_pct"] == pytest.approx(100 * (e["rl"] - e[e["best_heuristic"]]) / e[e["best_heuristic"]])
    assert "vs it, paired" in (out / "results.md").read_text()
