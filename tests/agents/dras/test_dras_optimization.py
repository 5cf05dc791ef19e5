"""DRAS's Optimization baseline (0-1 knapsack over the window) against brute force on small windows."""

from __future__ import annotations

import itertools

import numpy as np
from dras_workloads import make_workload
from hypothesis import given, settings
from hypothesis import strategies as st

from schedrl.heuristics import get_heuristic
from schedrl.sim import DECIDE_PICK, SimConfig, Simulator


def best_subset_sum(sizes: list[int], capacity: int) -> int:
    return max(sum(c) for r in range(len(sizes) + 1) for c in itertools.combinations(sizes, r)
               if sum(c) <= capacity)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 16), min_size=1, max_size=7), machine=st.integers(4, 24))
def test_optimization_fills_the_machine_as_well_as_brute_force(sizes, machine):
    sizes = [min(s, machine) for s in sizes]
    # every job waits at t = 0 on an empty machine; the window holds all of them
    wl = make_workload([(0, s, 100, 100) for s in sizes], machine)
    sim = Simulator(wl, SimConfig(discipline="list", window=len(sizes), backfill="none"))
    policy = get_heuristic("optimization")
    started = 0.0
    while sim.advance() == DECIDE_PICK and sim.now == 0 and sim.blocked < 0:
        j = policy.pick(sim)
        if not sim.fits(np.array([j]))[0]:
            break
        sim.pick(j)
        started += sizes[j]
    assert started == best_subset_sum(sizes, machine)
