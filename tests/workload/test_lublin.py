"""The Lublin–Feitelson generator: determinism, shape, and statistics against RLScheduler's Lublin-1."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from schedrl.workload import read_swf, write_swf
from schedrl.workload.lublin import LUBLIN_BATCH, LublinParams, daily_weights, generate_lublin
from schedrl.workload.swf import format_swf

SEEDS = (0, 1, 2)
DEFAULT_TRACE = Path(__file__).resolve().parents[2] / "traces" / "lublin_default.swf.gz"


@pytest.fixture(scope="module")
def generated() -> list:
    return [generate_lublin(10_000, 256, seed=s) for s in SEEDS]


def _pooled(workloads, stat) -> float:
    return float(np.mean([stat(w) for w in workloads]))


def test_same_seed_same_trace_and_different_seed_different_trace():
    a, b, c = generate_lublin(500, seed=7), generate_lublin(500, seed=7), generate_lublin(500, seed=8)
    assert format_swf(a) == format_swf(b)
    assert not np.array_equal(a.submit, c.submit)


def test_columns_are_a_valid_trace():
    wl = generate_lublin(3000, 256, seed=3)
    assert len(wl) == 3000 and wl.max_procs == wl.max_nodes == 256
    assert np.array_equal(wl.job_id, np.arange(1, 3001))
    assert np.all(np.diff(wl.submit) >= 0) and wl.submit[0] >= 0
    assert wl.procs_req.min() >= 1 and wl.procs_req.max() <= 256
    assert np.array_equal(wl.procs_req, wl.procs_alloc)
    assert np.array_equal(wl.time_req, wl.run) and wl.run.min() >= 1
    assert np.all(wl.status == 1) and np.all(wl.user == -1) and np.all(wl.wait == -1)


def test_header_records_machine_seed_and_params():
    wl = generate_lublin(10, 128, seed=42, params=LublinParams(interarrival_scale=0.5))
    assert wl.header.max_nodes == 128 and wl.header.max_procs == 128 and wl.header.version == "2.2"
    notes = [v for k, v in wl.header.raw if k == "Note"]
    assert any("seed=42" in n and "nodes=128" in n for n in notes)
    assert any("interarrival_scale=0.5" in n for n in notes)


def test_swf_round_trip_keeps_every_column(tmp_path: Path):
    wl = generate_lublin(200, seed=5)
    back = read_swf(write_swf(wl, tmp_path / "g.swf"), use_cache=False)
    for name in ("job_id", "submit", "run", "procs_req", "time_req", "status"):
        assert np.array_equal(back.columns[name], wl.columns[name]), name
    assert back.max_procs == 256 and back.report.jobs_out == back.report.jobs_in == 200


def test_sizes_fit_a_machine_that_is_not_a_power_of_two():
    wl = generate_lublin(5000, 100, seed=0)
    assert wl.procs_req.max() <= 100
    assert wl.procs_req.max() >= 64  # the upper stage of the two-stage uniform reaches the machine


def test_big_jobs_never_draw_the_short_gamma():
    # p = pa * nodes + pb is 0 from 145 nodes up (whole-sample pa, pb): only long runs remain
    wl = generate_lublin(20_000, 256, seed=0)
    big = wl.procs_req >= 145
    assert big.sum() > 100
    assert np.mean(wl.run[big] < 1800) < 0.01
    assert np.mean(wl.run[wl.procs_req == 1] < 1800) > 0.6


def test_daily_weights_have_mean_one_and_peak_in_the_afternoon():
    w = daily_weights(LublinParams())
    assert w.shape == (48,) and w.mean() == pytest.approx(1.0)
    assert 24 <= int(np.argmax(w)) <= 32  # 12:00-16:00
    assert w[6:12].max() < 0.3  # 03:00-06:00 is quiet


def test_daily_weights_match_the_gamma_cdf():
    stats = pytest.importorskip("scipy.stats")
    p = LublinParams()
    cdf = stats.gamma(p.anum, scale=p.bnum).cdf
    expected = np.empty(48)
    for i in range(p.cycle_start_bucket, p.cycle_start_bucket + 48):
        expected[(i - 1) % 48] = cdf(i + 0.5) - cdf(i - 0.5)
    np.testing.assert_allclose(daily_weights(p), expected / expected.mean(), rtol=1e-7)


def test_arrivals_follow_the_daily_cycle(generated):
    hours = np.concatenate([(w.submit % 86400) // 3600 for w in generated])
    counts = np.bincount(hours, minlength=24)
    assert counts[12:16].sum() > 4 * counts[2:6].sum()


def test_interarrival_scale_scales_the_gaps():
    base = generate_lublin(4000, seed=1)
    fast = generate_lublin(4000, seed=1, params=LublinParams(interarrival_scale=0.5))
    assert np.array_equal(base.run, fast.run)
    # time is warped by the daily cycle, so halving the gaps halves the span up to a fraction of a day
    assert fast.submit[-1] == pytest.approx(base.submit[-1] * 0.5, rel=0.02)


def test_batch_parameter_set_has_more_serial_jobs():
    wl = generate_lublin(10_000, 256, seed=0, params=LUBLIN_BATCH)
    assert np.mean(wl.procs_req == 1) == pytest.approx(0.2927, abs=0.015)


# Tolerances below come from the spread of each statistic over 40 seeds of 10,000 jobs:
# mean size 22.07 ± 0.38, mean run 4,868 ± 88 s, median gap 116 ± 3 s, mean gap 910 ± 75 s.
# The mean gap is a heavy-tailed mean (log-gamma gaps up to e^13 s): Lublin-1's 771 s sits at the
# 2.5th percentile of the model's sample means, while its median gap matches the model to 0.1%.
def test_statistics_match_lublin_1(generated, lublin_256):
    ref = read_swf(lublin_256)
    ours_size = _pooled(generated, lambda w: w.procs_req.mean())
    ours_run = _pooled(generated, lambda w: w.run.mean())
    ours_median_gap = _pooled(generated, lambda w: np.median(np.diff(w.submit)))
    ours_mean_gap = _pooled(generated, lambda w: np.diff(w.submit).mean())
    assert ref.procs_req.mean() == pytest.approx(22.1, abs=0.05)  # RLScheduler Table II: n_t = 22
    assert ref.run.mean() == pytest.approx(4862.8, abs=0.5)  # RLScheduler Table II: r_t = 4862
    assert np.diff(ref.submit).mean() == pytest.approx(770.7, abs=0.5)  # RLScheduler Table II: i_t = 771
    assert ours_size == pytest.approx(ref.procs_req.mean(), rel=0.05)
    assert ours_run == pytest.approx(ref.run.mean(), rel=0.08)
    assert ours_median_gap == pytest.approx(np.median(np.diff(ref.submit)), rel=0.08)
    assert ours_mean_gap == pytest.approx(np.diff(ref.submit).mean(), rel=0.35)
    for ours_frac, ref_frac in [
        (_pooled(generated, lambda w: np.mean(w.procs_req == 1)), np.mean(ref.procs_req == 1)),
        (_pooled(generated, lambda w: np.mean(w.procs_req >= 128)), np.mean(ref.procs_req >= 128)),
        (_pooled(generated, lambda w: np.mean(w.run < 60)), np.mean(ref.run < 60)),
    ]:
        assert ours_frac == pytest.approx(ref_frac, abs=0.015)


def test_embedded_default_trace_is_this_generator_output():
    assert DEFAULT_TRACE.exists(), f"{DEFAULT_TRACE} is missing; regenerate it with write_swf(generate_lublin(40000, 256, seed=2003), path)"
    fresh = format_swf(generate_lublin(40000, 256, seed=2003)).encode()
    assert gzip.decompress(DEFAULT_TRACE.read_bytes()) == fresh
    assert DEFAULT_TRACE.stat().st_size < 600_000


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: generate_lublin(0), ValueError, "n_jobs must be a positive integer"),
        (lambda: generate_lublin(10.5), ValueError, "n_jobs must be a positive integer"),
        (lambda: generate_lublin(10, nodes=1), ValueError, "nodes must be an integer >= 2"),
        (lambda: generate_lublin(10, nodes=8), ValueError, "nodes=8 is too small.*needs nodes >= 10"),
        (lambda: generate_lublin(10, params={"serial_prob": 0.1}), TypeError, "params must be a LublinParams"),
        (lambda: LublinParams(serial_prob=0.6, pow2_prob=0.6), ValueError, "serial_prob \\+ pow2_prob"),
        (lambda: LublinParams(u_prob=1.5), ValueError, "u_prob must be a probability"),
        (lambda: LublinParams(interarrival_scale=0), ValueError, "interarrival_scale must be positive"),
    ],
)
def test_bad_arguments_are_rejected(call, error, match):
    with pytest.raises(error, match=match):
        call()
