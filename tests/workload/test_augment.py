"""MRSch resource augmentation: burst buffer, node scaling, power, presets S1–S10."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.workload.augment import GB_PER_TB, MRSCH_PRESETS, THETA_NODES, AugmentSpec, augment
from schedrl.workload.lublin import generate_lublin


@pytest.fixture(scope="module")
def trace():
    return generate_lublin(4000, 256, seed=21)


def test_presets_are_mrsch_table_iii_and_section_v_e():
    assert sorted(MRSCH_PRESETS, key=lambda k: int(k[1:])) == [f"S{i}" for i in range(1, 11)]
    table_iii = {"S1": (0.50, 5, 1.0), "S2": (0.75, 5, 1.0), "S3": (0.50, 20, 1.0), "S4": (0.75, 20, 1.0), "S5": (0.75, 20, 0.5)}
    for name, (fraction, low_tb, scale) in table_iii.items():
        for preset in (MRSCH_PRESETS[name], MRSCH_PRESETS[f"S{int(name[1:]) + 5}"]):
            assert preset.bb_fraction == fraction and preset.node_scale == scale
            assert preset.bb_range_gb == (low_tb * GB_PER_TB, 285 * GB_PER_TB)
            assert preset.bb_capacity_gb == 1.26e6 and preset.machine_nodes == THETA_NODES == 4360
        assert MRSCH_PRESETS[name].node_power_w is None
        assert MRSCH_PRESETS[f"S{int(name[1:]) + 5}"].node_power_w == (100.0, 215.0)
    assert MRSCH_PRESETS["S6"].power_budget_w == 500_000 and MRSCH_PRESETS["S6"].idle_node_power_w == 60


@pytest.mark.parametrize("name", ["S1", "S2", "S3", "S4"])
def test_burst_buffer_share_and_range(trace, name):
    spec = MRSCH_PRESETS[name]
    out = augment(trace, spec, np.random.default_rng(0))
    bb = out.resources["bb"]
    assert out.capacity == {"bb": 1.26e6} and "power" not in out.resources
    assert np.count_nonzero(bb) == round(spec.bb_fraction * len(trace))
    lo, hi = spec.bb_range_gb
    assert bb[bb > 0].min() >= lo and bb.max() <= hi
    # log-uniform: the median request is the geometric mean of the range
    assert np.median(bb[bb > 0]) == pytest.approx(np.sqrt(lo * hi), rel=0.15)
    assert np.array_equal(out.procs_req, trace.procs_req)  # S1-S4 keep the trace's node counts


def test_s5_halves_node_requests_rounding_up(trace):
    out = augment(trace, MRSCH_PRESETS["S5"], np.random.default_rng(0))
    assert np.array_equal(out.procs_req, np.maximum(1, (trace.procs_req + 1) // 2))
    assert np.array_equal(out.procs_alloc, out.procs_req)  # Lublin jobs had alloc == req
    assert np.array_equal(trace.procs_req, generate_lublin(4000, 256, seed=21).procs_req)  # input untouched


def test_power_is_per_node_power_times_nodes(trace):
    out = augment(trace, MRSCH_PRESETS["S6"], np.random.default_rng(1))
    per_node = out.resources["power"] / out.procs_req
    assert per_node.min() >= 100 and per_node.max() <= 215
    assert per_node.mean() == pytest.approx(157.5, abs=3)
    assert out.capacity == {"bb": 1.26e6, "power": 500_000}


def test_power_presets_reuse_the_burst_buffer_draws(trace):
    for i in range(1, 6):
        base = augment(trace, MRSCH_PRESETS[f"S{i}"], np.random.default_rng(7))
        powered = augment(trace, MRSCH_PRESETS[f"S{i + 5}"], np.random.default_rng(7))
        assert np.array_equal(base.resources["bb"], powered.resources["bb"])
        assert np.array_equal(base.procs_req, powered.procs_req)


def test_same_seed_same_requests_different_seed_different_requests(trace):
    a = augment(trace, MRSCH_PRESETS["S9"], np.random.default_rng(3))
    b = augment(trace, MRSCH_PRESETS["S9"], np.random.default_rng(3))
    c = augment(trace, MRSCH_PRESETS["S9"], np.random.default_rng(4))
    assert np.array_equal(a.resources["bb"], b.resources["bb"]) and np.array_equal(a.resources["power"], b.resources["power"])
    assert not np.array_equal(a.resources["bb"], c.resources["bb"])


def test_bb_pool_samples_observed_sizes_within_range(trace):
    pool = np.array([1.0, 2_000.0, 30_000.0, 100_000.0, 400_000.0])
    out = augment(trace, MRSCH_PRESETS["S3"], np.random.default_rng(0), bb_pool=pool)
    assert set(np.unique(out.resources["bb"])) == {0.0, 30_000.0, 100_000.0}
    with pytest.raises(ValueError, match=r"bb_pool has no size within the spec's range \[20000, 285000\] GB"):
        augment(trace, MRSCH_PRESETS["S3"], np.random.default_rng(0), bb_pool=[1.0, 2.0])


def test_for_machine_scales_capacities_not_per_node_power():
    small = MRSCH_PRESETS["S6"].for_machine(436)
    assert small.machine_nodes == 436
    assert small.bb_capacity_gb == pytest.approx(126_000) and small.power_budget_w == pytest.approx(50_000)
    assert small.bb_range_gb == pytest.approx((500, 28_500))
    assert small.node_power_w == (100.0, 215.0) and small.bb_fraction == 0.5


def test_empty_spec_changes_nothing(trace):
    assert augment(trace, AugmentSpec(), np.random.default_rng(0)) is trace


def test_errors(trace):
    with pytest.raises(ValueError, match=r"node_scale=2.0 makes \d+ job\(s\) of .* wider than the machine \(256 processors\)"):
        augment(trace, AugmentSpec(node_scale=2.0), np.random.default_rng(0))
    with pytest.raises(TypeError, match="spec must be an AugmentSpec"):
        augment(trace, "S1", np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        augment(trace, MRSCH_PRESETS["S1"], 0)
    with pytest.raises(ValueError, match=r"bb_fraction must be in \[0, 1\]"):
        AugmentSpec(bb_fraction=1.5)
    with pytest.raises(ValueError, match="bb_range_gb must be"):
        AugmentSpec(bb_range_gb=(10.0, 5.0))
    with pytest.raises(ValueError, match="node_power_w must be"):
        AugmentSpec(node_power_w=(0.0, 10.0))
    with pytest.raises(ValueError, match="node_scale must be positive"):
        AugmentSpec(node_scale=0)
