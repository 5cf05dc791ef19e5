"""Sequence sampling: windows, Poisson and Bernoulli re-timing, synthetic jobsets."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.workload.fields import FIELD_NAMES
from schedrl.workload.lublin import generate_lublin
from schedrl.workload.sampling import (
    bernoulli_arrivals,
    hour_of_week_rates,
    mean_arrival_rate,
    poisson_retimed,
    random_starts,
    sequence,
    synthetic_jobset,
)
from schedrl.workload.workload import Workload


@pytest.fixture(scope="module")
def trace() -> Workload:
    return generate_lublin(5000, 128, seed=11)


def _tiny(submit, run=None) -> Workload:
    n = len(submit)
    cols = {name: np.full(n, -1) for name in FIELD_NAMES}
    cols.update(job_id=np.arange(1, n + 1), submit=np.asarray(submit), run=np.asarray(run if run is not None else np.arange(1, n + 1)),
                procs_req=np.ones(n, dtype=int), wait=np.full(n, 5), prev_job=np.arange(n))
    return Workload(cols, max_procs=4, max_nodes=4, name="tiny")


def _assert_retimed(wl: Workload, n: int):
    assert len(wl) == n
    assert np.array_equal(wl.job_id, np.arange(1, n + 1))
    assert wl.submit[0] == 0 and np.all(np.diff(wl.submit) >= 0)
    assert np.all(wl.wait == -1) and np.all(wl.prev_job == -1) and np.all(wl.think_time == -1)


# sequence / random_starts

def test_sequence_is_a_view_of_consecutive_jobs(trace):
    seq = sequence(trace, 100, 256)
    assert len(seq) == 256 and seq.job_id[0] == trace.job_id[100] and seq.job_id[-1] == trace.job_id[355]
    assert np.shares_memory(seq.submit, trace.submit)
    assert len(sequence(trace, len(trace) - 10, 10)) == 10


@pytest.mark.parametrize(("start", "length", "match"), [
    (4991, 10, r"runs past the end of .* \(5000 jobs\); start must be <= 4990"),
    (0, 5001, "a sequence of 5001 jobs is longer than"),
    (-1, 10, "start must be an integer >= 0"),
    (0, 0, "length must be an integer >= 1"),
    (1.5, 10, "start must be an integer"),
])
def test_sequence_rejects_bad_bounds(trace, start, length, match):
    with pytest.raises(ValueError, match=match):
        sequence(trace, start, length)


def test_random_starts_are_seeded_and_in_bounds():
    a = random_starts(1000, 256, 500, np.random.default_rng(3))
    b = random_starts(1000, 256, 500, np.random.default_rng(3))
    assert np.array_equal(a, b) and a.dtype == np.int64
    assert a.min() >= 0 and a.max() <= 1000 - 256 and len(np.unique(a)) > 200
    assert np.array_equal(random_starts(10, 10, 4, np.random.default_rng(0)), np.zeros(4))
    assert random_starts(10, 3, 0, np.random.default_rng(0)).shape == (0,)


def test_random_starts_rejects_bad_arguments():
    with pytest.raises(ValueError, match="a window of 11 jobs does not fit in a trace of 10 jobs"):
        random_starts(10, 11, 1, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        random_starts(10, 5, 1, 42)


# Poisson

def test_poisson_retimed_keeps_the_trace_rate(trace):
    out = poisson_retimed(trace, 4000, np.random.default_rng(1))
    _assert_retimed(out, 4000)
    assert mean_arrival_rate(out) == pytest.approx(mean_arrival_rate(trace), rel=0.05)
    gaps = np.diff(out.submit)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.06)  # exponential gaps have CV 1
    assert len(np.unique(out.run * 1000 + out.procs_req)) > 1000  # distinct jobs, not one repeated


def test_poisson_retimed_draws_distinct_jobs_and_honours_rate(trace):
    out = poisson_retimed(trace, 5000, np.random.default_rng(2), rate=0.01)
    assert sorted(out.run.tolist()) == sorted(trace.run.tolist())  # a permutation of the trace
    assert mean_arrival_rate(out) == pytest.approx(0.01, rel=0.05)


def test_poisson_retimed_is_deterministic(trace):
    a = poisson_retimed(trace, 300, np.random.default_rng(9))
    b = poisson_retimed(trace, 300, np.random.default_rng(9))
    assert all(np.array_equal(a.columns[k], b.columns[k]) for k in FIELD_NAMES)


def test_poisson_retimed_errors(trace):
    with pytest.raises(ValueError, match="cannot draw 5001 distinct jobs .* pass replace=True"):
        poisson_retimed(trace, 5001, np.random.default_rng(0))
    assert len(poisson_retimed(trace, 5001, np.random.default_rng(0), replace=True)) == 5001
    with pytest.raises(ValueError, match="rate must be a positive number"):
        poisson_retimed(trace, 10, np.random.default_rng(0), rate=0)
    with pytest.raises(ValueError, match="submitted at the same time"):
        poisson_retimed(_tiny([7, 7, 7]), 2, np.random.default_rng(0))


# Bernoulli

def test_bernoulli_arrivals_land_on_steps_with_probability_p(trace):
    out = bernoulli_arrivals(trace, 20_000, 0.7, np.random.default_rng(4))
    _assert_retimed(out, len(out))
    assert len(out) == pytest.approx(14_000, abs=300)  # Binomial(20000, 0.7): sd 65
    assert np.all(out.submit % 300 == 0)  # RLSchert: 5-minute steps
    assert np.all(np.diff(out.submit) > 0)  # at most one job per step


def test_bernoulli_arrivals_p_one_fills_every_step():
    out = bernoulli_arrivals(_tiny([0, 10, 20]), 50, 1.0, np.random.default_rng(0), step_seconds=60)
    assert np.array_equal(out.submit, np.arange(50) * 60)
    assert set(out.run.tolist()) <= {1, 2, 3}


def test_bernoulli_arrivals_errors(trace):
    with pytest.raises(ValueError, match=r"p must be an arrival probability in \(0, 1\]"):
        bernoulli_arrivals(trace, 10, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="no job arrived in 1 steps"):
        bernoulli_arrivals(trace, 1, 1e-12, np.random.default_rng(0))
    with pytest.raises(ValueError, match="step_seconds must be an integer >= 1"):
        bernoulli_arrivals(trace, 10, 0.5, np.random.default_rng(0), step_seconds=0)


# synthetic jobsets

def test_hour_of_week_rates_divide_counts_by_time_in_each_hour():
    # two weeks; three jobs every Monday 10:00-11:00 and one every Tuesday 02:00-03:00
    week = 168 * 3600
    submits = sorted([w * week + 10 * 3600 + 60 * k for w in range(2) for k in range(3)]
                     + [w * week + 26 * 3600 + 5 for w in range(2)] + [2 * week - 1])
    rates = hour_of_week_rates(_tiny(submits))
    assert rates[10] == pytest.approx(3 / 3600, rel=0.02)
    assert rates[26] == pytest.approx(1 / 3600, rel=0.02)
    assert rates[167] == pytest.approx(1 / (3600 + 3599))  # the last submit ends the span 1 s early
    assert np.count_nonzero(rates) == 3


def test_synthetic_jobset_follows_the_daily_window():
    # every arrival of the source falls in 10:00-11:00; synthetic arrivals must too, whatever the phase
    days = np.arange(30) * 86400
    submits = np.sort((days[:, None] + 10 * 3600 + np.linspace(0, 3500, 20)[None, :]).ravel())
    src = _tiny(submits.astype(int), run=np.arange(600) * 7 + 1)
    out = synthetic_jobset(src, 2000, np.random.default_rng(5))
    _assert_retimed(out, 2000)
    offset_in_day = (out.submit - out.submit[0]) % 86400
    assert np.all((offset_in_day < 3600) | (offset_in_day > 86400 - 3600))
    assert np.mean(np.diff(out.submit) > 20 * 3600) > 0.003  # the nightly gaps exist


def test_synthetic_jobset_keeps_the_job_mix_and_rate(trace):
    out = synthetic_jobset(trace, 5000, np.random.default_rng(6))
    _assert_retimed(out, 5000)
    pairs = set(zip(trace.run.tolist(), trace.procs_req.tolist()))
    assert set(zip(out.run.tolist(), out.procs_req.tolist())) <= pairs  # joint size/run-time pairs kept
    assert out.procs_req.mean() == pytest.approx(trace.procs_req.mean(), rel=0.1)
    assert mean_arrival_rate(out) == pytest.approx(mean_arrival_rate(trace), rel=0.15)


def test_synthetic_jobset_is_deterministic_and_seed_dependent(trace):
    a = synthetic_jobset(trace, 500, np.random.default_rng(1))
    b = synthetic_jobset(trace, 500, np.random.default_rng(1))
    c = synthetic_jobset(trace, 500, np.random.default_rng(2))
    assert np.array_equal(a.submit, b.submit) and np.array_equal(a.run, b.run)
    assert not np.array_equal(a.submit, c.submit)


def test_resources_travel_with_sampled_jobs(trace):
    tagged = trace.with_resources({"bb": trace.job_id.astype(float)}, capacity={"bb": 1e9})
    out = poisson_retimed(tagged, 100, np.random.default_rng(0))
    src_by_id = dict(zip(trace.job_id.tolist(), trace.run.tolist()))
    assert all(src_by_id[int(b)] == r for b, r in zip(out.resources["bb"], out.run))
