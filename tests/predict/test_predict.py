"""The SWF runtime predictor: causal user histories, the baselines, the MLP learning, save/load, the CLI on real traces."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from schedrl.predict import LastTwoMean, RequestedTime, queries_for, user_history
from schedrl.predict.evaluation import mape_table, split
from schedrl.workload.fields import FIELD_NAMES
from schedrl.workload.workload import Workload
from shared_traces import shared_trace


def workload_of(submit, run, time_req, user, wait=None, procs=None) -> Workload:
    n = len(submit)
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=np.asarray(submit), run=np.asarray(run),
                   wait=np.zeros(n, dtype=int) if wait is None else np.asarray(wait),
                   time_req=np.asarray(time_req), user=np.asarray(user),
                   procs_req=np.ones(n, dtype=int) if procs is None else np.asarray(procs))
    columns["procs_alloc"] = columns["procs_req"]
    return Workload(columns, max_procs=64, max_nodes=64)


def test_user_history_holds_only_jobs_ended_by_the_submission():
    # user 1: jobs end at 5, 110, 23; user 2 interleaved
    submit = np.array([0, 10, 20, 30, 31])
    run = np.array([5, 100, 3, 4, 7])
    user = np.array([1, 1, 1, 1, 2])
    h = user_history(submit, submit + run, run, user, 2)
    np.testing.assert_array_equal(np.isnan(h[0]), [True, True])
    np.testing.assert_array_equal(h[1], [5, np.nan])
    np.testing.assert_array_equal(h[2], [5, np.nan])   # job 1 still runs at 20
    np.testing.assert_array_equal(h[3], [3, 5])        # most recent end first
    assert np.isnan(h[4]).all()                        # another user's jobs never count


def test_baselines_requested_time_and_last_two_mean():
    wl = workload_of(submit=[0, 100, 200, 300], run=[50, 70, 1000, 30], time_req=[600, 600, 600, 40], user=[1, 1, 1, 1])
    q = queries_for(wl, k=2)
    np.testing.assert_array_equal(RequestedTime().predict(q), [600, 600, 600, 40])
    # job 2: mean(70, 50) = 60; job 3: mean(1000, 70) = 535 capped at its request 40
    np.testing.assert_array_equal(LastTwoMean().predict(q), [600, 50, 60, 40])
    later = q.at(55.0)
    # past its prediction (50 < 55) a job falls back to requested - elapsed
    np.testing.assert_array_equal(LastTwoMean().predict(later)[1], 545)


def _synthetic_trace(n: int = 3000, seed: int = 0) -> Workload:
    """Users with a typical run time each; requests 2-10x too long: history predicts, the request does not."""
    rng = np.random.default_rng(seed)
    users = rng.integers(0, 30, n)
    typical = np.exp(rng.uniform(np.log(120), np.log(20_000), 30))
    run = np.maximum(60, typical[users] * np.exp(rng.normal(0, 0.2, n))).astype(int)
    req = (run * rng.uniform(2, 10, n)).astype(int)
    submit = np.cumsum(rng.integers(0, 200, n))
    return workload_of(submit, run, req, users, procs=rng.integers(1, 32, n))


def test_mlp_learns_user_runtimes_and_round_trips(tmp_path):
    pytest.importorskip("torch")
    from schedrl.predict.mlp import MLPPredictor, MLPSettings

    wl = _synthetic_trace()
    first = split(wl)
    model = MLPPredictor(MLPSettings(epochs=15, seed=0)).fit(wl[:first])
    rows = mape_table(wl, [RequestedTime(), LastTwoMean(), model], first, elapsed=(0.0,))
    mape, log_err = rows[0].mape, rows[0].log_error
    assert mape["mlp"] < 0.5 * mape["requested"] and log_err["mlp"] < 0.5 * log_err["requested"]
    assert log_err["mlp"] < 0.6
    model.save(tmp_path / "p.pt", trace="synthetic")
    loaded, meta = MLPPredictor.load(tmp_path / "p.pt")
    q = queries_for(wl)
    np.testing.assert_allclose(loaded.predict(q), model.predict(q), rtol=1e-6)
    assert meta == {"trace": "synthetic"}


@pytest.mark.integration  # starts a subprocess
@pytest.mark.parametrize("trace,file", [("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf.gz")])
def test_cli_train_and_eval_on_a_real_trace(trace, file, tmp_path):
    shared_trace(file)
    out = tmp_path / "p.pt"
    train = subprocess.run([sys.executable, "-m", "schedrl.predict", "train", "--trace", trace, "--out", str(out),
                            "--epochs", "1"], capture_output=True, text=True, timeout=600)
    assert train.returncode == 0, train.stderr[-2000:]
    assert f"| {trace} | 0 s |" in train.stdout and out.is_file()
    again = subprocess.run([sys.executable, "-m", "schedrl.predict", "eval", "--model", str(out)],
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and again.stdout.splitlines()[-3:] == train.stdout.splitlines()[-3:]
    bad = subprocess.run([sys.executable, "-m", "schedrl.predict", "eval", "--model", str(tmp_path / "none.pt")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error:")
