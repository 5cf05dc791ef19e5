"""`schedrl tune` on the two-node cluster: the sweep's driver is SIGKILLed once Tune has recorded a
finished trial, and `--resume` finishes the sweep without re-running that trial.

(`tests/cli/test_tune_cli.py` covers an orderly interruption, Ctrl-C; here nothing of the driver
gets to clean up: the experiment state on disk is all `--resume` has.)
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest
import yaml


pytestmark = pytest.mark.cluster

RUN_TIMEOUT_S = 240
ITERATIONS = 2


def sweep_file(tmp_path: Path) -> Path:
    """Three trials (a seed grid) one after another, env runners on the worker node."""
    path = tmp_path / "three.yaml"
    path.write_text(yaml.safe_dump({
        "name": "three",
        "env": {"trace": "default", "sequence_length": 32},
        "ppo": {"num_env_runners": 1, "num_envs_per_env_runner": 1, "train_batch_size_per_learner": 128,
                "num_epochs": 1, "seed": {"grid": [0, 1, 2]}, "env_runner_resources": {"worker_node": 0.5}},
        "training": {"filtering": False, "validation_sequences": 1, "checkpoint_every": 1},
        "resources": {"max_concurrent_trials": 1},
        "evaluate": {"sequences": 1, "jobs": 64},
        "stop": {"iterations": ITERATIONS},
    }))
    return path


def recorded_trials(experiment: Path) -> dict[str, tuple[str, int]]:
    """Tune's experiment state on disk: trial id → (status, last recorded iteration); {} if none yet."""
    states = sorted(experiment.glob("experiment_state-*.json"))
    if not states:
        return {}
    try:
        trials = {}
        for state, metadata in json.loads(states[-1].read_text())["trial_data"]:
            state = json.loads(state)
            iteration = json.loads(metadata)["last_result"].get("training_iteration", 0)
            trials[state["trial_id"]] = (state["status"], int(iteration))
        return trials
    except (ValueError, KeyError, TypeError):  # caught mid-write
        return {}


def result_rows(trial_dir: Path) -> list[dict]:
    path = trial_dir / "result.json"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def trial_rows(experiment: Path, tid: str) -> list[dict]:
    """The rows of trial `tid`, wherever Tune put them: a trial the kill caught starting left an empty
    `trial_<tid>` behind, and Tune then runs it in `trial_<tid>_<suffix>`; exactly one holds its results."""
    with_rows = [rows for d in sorted(experiment.glob(f"trial_{tid}*")) if (rows := result_rows(d))]
    assert len(with_rows) <= 1, f"trial {tid} has results in {len(with_rows)} directories"
    return with_rows[0] if with_rows else []


def test_killed_sweep_driver_resumes_without_rerunning_finished_trials(ray_cluster, tmp_path):
    sweep, out, log = sweep_file(tmp_path), tmp_path / "out", tmp_path / "tune.log"
    experiment = out / "three"
    command = [sys.executable, "-m", "schedrl", "tune", str(sweep), "--out", str(out)]
    finished_before: dict[str, int] = {}

    def kill_once_a_trial_is_recorded_finished(proc):
        trials = recorded_trials(experiment)
        done = {tid: it for tid, (status, it) in trials.items() if status == "TERMINATED"}
        if done and len(done) < 3 and proc.poll() is None:
            finished_before.update(done)
            proc.send_signal(signal.SIGKILL)
            proc.wait()

    # Tune records its experiment state at most every 10 s by default; once a second here
    first = ray_cluster.run_driver(command, log, RUN_TIMEOUT_S, poll=kill_once_a_trial_is_recorded_finished,
                extra_env={"TUNE_GLOBAL_CHECKPOINT_S": "1"})
    assert finished_before, f"the sweep ended (rc {first.returncode}) before a finished trial was recorded:\n" \
                            f"{log.read_text()[-4000:]}"
    assert first.returncode == -signal.SIGKILL
    assert not (out / "results.csv").exists()
    rows_before = {tid: result_rows(experiment / f"trial_{tid}") for tid in finished_before}
    assert all(len(rows) == ITERATIONS for rows in rows_before.values()), rows_before

    second = ray_cluster.run_driver(command + ["--resume"], log, RUN_TIMEOUT_S)
    output = log.read_text()
    assert second.returncode == 0, output[-4000:]
    trials = recorded_trials(experiment)
    assert len(trials) == 3 and all(status == "TERMINATED" for status, _ in trials.values()), trials
    for tid in trials:
        rows = trial_rows(experiment, tid)
        assert rows and rows[-1]["training_iteration"] == ITERATIONS, (tid, rows)
    for tid, rows in rows_before.items():
        # not re-run: its result file is exactly what the killed driver left
        assert result_rows(experiment / f"trial_{tid}") == rows, tid
    table = (out / "results.csv").read_text().splitlines()
    assert len(table) == 2, table  # header + the one group (the seeds are its samples)
