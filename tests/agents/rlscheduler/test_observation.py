"""The compiled observation builder (`job_rows.fill_job_rows`) against a plain-numpy reference.

The reference is the builder as it was written in numpy before it was compiled: the same columns,
float64 arithmetic stored as float32. Compared bit for bit at every decision of whole episodes, on one
resource and on three (MRSch's burst buffer and power), with log and linear time scales and with
key-feature columns.
"""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE
from schedrl.agents.rlscheduler.observation import JobFeatures, ObservationBuilder
from schedrl.heuristics.keys import key_ranks
from schedrl.sim import SimConfig, Simulator
from schedrl.sim.state import DECIDE_PICK
from schedrl.workload import CleaningRules
from schedrl.workload.catalog import load_trace
from schedrl.workload.augment import augment_preset


def _default():
    return load_trace("default", CleaningRules.preset("default"))


def reference_build(builder: ObservationBuilder, sim: Simulator):
    visible = sim.queue[:MAX_OBSV_SIZE].copy()
    k = len(visible)
    s = sim.state
    req = s.req[visible] / s.cap
    free = s.free / s.cap
    m = np.zeros_like(builder.jobs)
    wait = sim.now - s.submit[visible]
    est = s.est[visible]
    if builder.log_times:
        scale = np.log1p(builder.time_scale)
        m[:k, 0] = np.minimum(np.log1p(wait) / scale, 1.0)
        m[:k, 1] = np.minimum(np.log1p(est) / scale, 1.0)
    else:
        m[:k, 0] = np.minimum(wait / builder.time_scale, 1.0)
        m[:k, 1] = np.minimum(est / builder.time_scale, 1.0)
    m[:k, 2] = req[:, 0]
    m[:k, 3] = builder.user[visible]
    m[:k, 4] = builder.group[visible]
    m[:k, 5] = builder.app[visible]
    m[:k, 6] = sim.fits(visible)
    m[:k, 7] = free[0]
    for r in range(1, builder.n_resources):
        m[:k, 6 + 2 * r] = req[:, r]
        m[:k, 7 + 2 * r] = free[r]
    for i, kind in enumerate(builder.key_kinds):
        if k:
            m[:k, builder.key_column + i] = 1.0 / (1.0 + key_ranks(kind, sim.state_ref, visible, sim.now, builder.procs))
    mask = np.zeros(MAX_OBSV_SIZE, np.float32)
    mask[:k] = 1.0
    return m, mask, visible


def _episodes(workload, n_resources, log_times, key_features, seed):
    norm = JobFeatures.from_trace(workload)
    norm = JobFeatures(norm.time_scale, norm.user_scale, norm.group_scale, norm.app_scale, log_times)
    rng = np.random.default_rng(seed)
    decisions = 0
    for start in (0, 300, 700):
        seq = workload[start:start + 256]
        sim = Simulator(seq, SimConfig())
        builder = ObservationBuilder(seq, norm, n_resources, key_features)
        code = sim.advance()
        while code == DECIDE_PICK:
            got = builder.build(sim)
            want = reference_build(builder, sim)
            for a, b, name in zip(got, want, ("jobs", "mask", "visible")):
                assert a.dtype == b.dtype and a.shape == b.shape, name
                np.testing.assert_array_equal(a, b, err_msg=f"{name} at decision {decisions}")
            sim.pick(int(got[2][rng.integers(len(got[2]))]))
            decisions += 1
            code = sim.advance()
    assert decisions > 500  # whole episodes were compared


@pytest.mark.parametrize("log_times", [True, False])
@pytest.mark.parametrize("key_features", [(), ("f1", "sjf")])
def test_compiled_rows_equal_the_numpy_reference(log_times, key_features):
    _episodes(_default(), 1, log_times, key_features, seed=1)


def test_compiled_rows_equal_the_reference_on_three_resources():
    workload, _ = augment_preset(_default(), "S9", seed=0)  # nodes, burst buffer, power
    assert len(workload.resources) == 2
    _episodes(workload, 3, True, (), seed=2)
