"""`Simulator.copy`: an independent simulator in the same state (the hindsight bounds' fork)."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.heuristics import get_heuristic
from schedrl.sim import DECIDE_PICK, FINISHED, SimConfig, Simulator
from schedrl.workload.lublin import generate_lublin

CONFIGS = [SimConfig(), SimConfig(backfill="easy"), SimConfig(backfill="conservative"), SimConfig.preset("rlscheduler"),
           SimConfig(discipline="list", window=4, backfill="easy"),
           SimConfig(discipline="list", window=4, backfill="easy", backfill_choice="policy")]


@pytest.mark.parametrize("config", CONFIGS, ids=["paw", "easy", "conservative", "rlscheduler", "list-easy", "choice"])
def test_a_copy_goes_on_as_the_original_and_leaves_it_alone(config):
    jobs = generate_lublin(120, nodes=32, seed=3)
    whole = get_heuristic("f1").run(Simulator(jobs, config))
    sim = Simulator(jobs, config)
    f1 = get_heuristic("f1")
    points = 0
    while (code := sim.advance()) != FINISHED and points < 60:  # half way through, at a decision point
        points += 1
        if code == DECIDE_PICK:
            sim.pick(f1.pick(sim))
        else:
            sim.backfill(int(sim.candidates[0]))
    fork = sim.copy()
    assert fork.now == sim.now and fork.workload is sim.workload and fork.config == sim.config
    assert fork.state.submit is sim.state.submit  # the inputs no step writes are shared
    assert fork.state.start is not sim.state.start and fork.state.iv is not sim.state.iv
    before = [a.copy() for a in sim.state]
    forked = get_heuristic("f1").run(fork)  # finishes the copy
    for a, b in zip(sim.state, before):
        np.testing.assert_array_equal(a, b)  # the original has not moved
    np.testing.assert_array_equal(forked.start, whole.start)
    np.testing.assert_array_equal(get_heuristic("f1").run(sim).start, whole.start)  # nor does it once it goes on


def test_copies_take_different_decisions_apart():
    jobs = generate_lublin(60, nodes=32, seed=1)
    sim = Simulator(jobs, SimConfig())
    assert sim.advance() == DECIDE_PICK and sim.has_event
    j = int(sim.queue[0])
    a, b = sim.copy(), sim.copy()
    a.pick(j)  # starts now (the machine is idle)
    b.defer()  # starts nothing until the next event
    assert a.state.start[j] == sim.now and b.state.start[j] == -1.0 and b.now > sim.now
    assert sim.state.start[j] == -1.0 and list(sim.queue) == [j]
