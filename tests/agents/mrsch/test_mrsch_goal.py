"""MRSch Eq. (1): the goal vector, by hand and from the simulator; DFP's objective weights."""

from __future__ import annotations

import numpy as np
import pytest

from mrsch_helpers import make_workload
from schedrl.agents.mrsch.goal import goal_vector, objective_weights, sim_goal
from schedrl.sim import DECIDE_PICK, SimConfig, Simulator


def test_goal_vector_hand_case():
    # running job: half the nodes, 20% of the BB, 100 s left; queued: a quarter, half, 200 s requested
    shares = np.array([[0.5, 0.2], [0.25, 0.5]])
    times = np.array([100.0, 200.0])
    # node demand 0.5*100 + 0.25*200 = 100; BB demand 0.2*100 + 0.5*200 = 120
    assert goal_vector(shares, times) == pytest.approx([100 / 220, 120 / 220])


def test_goal_vector_without_demand_is_uniform_and_rejects_bad_shapes():
    assert goal_vector(np.zeros((0, 3)), np.zeros(0)) == pytest.approx([1 / 3] * 3)
    with pytest.raises(ValueError, match="shares must be"):
        goal_vector(np.zeros((2, 2)), np.zeros(3))


def test_goal_from_the_simulator_uses_remaining_time_of_running_and_requested_time_of_queued_jobs():
    # 4 nodes, 100 GB of BB; job 0 (2 nodes, 20 GB, 100 s requested) starts at 0; job 1 (1 node, 50 GB,
    # 200 s requested) arrives at 10
    wl = make_workload(submit=[0, 10], run=[100, 50], time_req=[100, 200], procs=[2, 1], max_procs=4,
                       resources={"bb": np.array([20.0, 50.0])}, capacity={"bb": 100.0})
    sim = Simulator(wl, SimConfig(discipline="list", window=10, backfill="easy", allocation="nodes"))
    assert sim.advance() == DECIDE_PICK
    sim.pick(0)
    assert sim.advance() == DECIDE_PICK and sim.now == 10
    # nodes: 0.5*90 + 0.25*200 = 95; BB: 0.2*90 + 0.5*200 = 118
    assert sim_goal(sim) == pytest.approx([95 / 213, 118 / 213])


def test_objective_weights_are_offset_weights_times_goal():
    w = objective_weights([0.25, 0.75], [0.0, 0.5, 1.0])
    assert w.shape == (3, 2)
    assert w == pytest.approx(np.array([[0, 0], [0.125, 0.375], [0.25, 0.75]]))
