"""The compiled observation builder (`job_rows.fill_job_rows`) against a plain-numpy reference.

The reference is the builder as it was written in numpy before it was compiled: the same columns,
float64 arithmetic stored as float32. Compared bit for bit at every decision of whole episodes, on one
resource and on three (MRSch's burst buffer and power), with log and linear time scales and with
key-feature columns.
"""

from __future__ import annotations

import dataclasses

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


def _with_ids(workload):
    """`workload` with user and group ids as a PWA log has them (the default trace has none: -1)."""
    rng = np.random.default_rng(0)
    n = len(workload)
    return workload.with_columns(user=rng.integers(1, 300, n), group=rng.integers(1, 4, n))


def test_norm_records_which_id_columns_the_training_trace_has():
    assert JobFeatures.from_trace(_default()).id_fields == ()
    assert JobFeatures.from_trace(_with_ids(_default())).id_fields == ("user", "group")


def test_a_policy_trained_without_ids_sees_a_trace_with_ids_as_if_it_had_none():
    """Cross-trace evaluation (RLScheduler Table VII): a Lublin-model training trace has no ids, so those
    columns were 0 in training; on a PWA log they must stay 0, not clip to 1 (an input never trained on)."""
    norm = JobFeatures.from_trace(_default())
    plain = _default()[1000:1256]
    with_ids = _with_ids(plain)
    sims = [Simulator(seq, SimConfig()) for seq in (plain, with_ids)]
    builders = [ObservationBuilder(seq, norm, 1) for seq in (plain, with_ids)]
    decisions = 0
    while all(sim.advance() == DECIDE_PICK for sim in sims):
        (a, mask_a, vis_a), (b, mask_b, vis_b) = (builder.build(sim) for builder, sim in zip(builders, sims))
        np.testing.assert_array_equal(a, b, err_msg=f"decision {decisions}")
        np.testing.assert_array_equal(vis_a, vis_b)
        for sim in sims:
            sim.pick(int(vis_a[decisions % len(vis_a)]))
        decisions += 1
    assert decisions == 256
    # the behaviour this replaces: every id column of the PWA-like trace at 1.0
    everything = dataclasses.replace(norm, id_fields=("user", "group", "app"))
    old = ObservationBuilder(with_ids, everything, 1)
    assert (old.user == 1.0).all() and (old.group == 1.0).all()
    # a policy trained on a trace with ids sees them, scaled by the training trace's largest
    own = JobFeatures.from_trace(with_ids)
    seen = ObservationBuilder(with_ids, own, 1)
    np.testing.assert_allclose(seen.user, with_ids.user / own.user_scale)
    assert (seen.app == 0).all()


def test_norm_round_trip_and_records_from_before_id_fields():
    norm = JobFeatures.from_trace(_with_ids(_default()))
    assert JobFeatures.from_dict(norm.to_dict()) == norm
    old = {"time_scale": 5e4, "user_scale": 437.0, "group_scale": 1.0, "app_scale": 1.0, "log_times": True}
    assert JobFeatures.from_dict(old).id_fields == ("user",)  # scale 1 was how a missing column was stored
    with pytest.raises(ValueError, match="unknown id field.*'queue'"):
        JobFeatures.from_dict({**old, "id_fields": ["user", "queue"]})
