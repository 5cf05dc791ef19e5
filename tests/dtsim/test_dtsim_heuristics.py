"""RLSchert's baselines on the discrete-time cluster: their choices by hand, full runs, the kill rule."""

from __future__ import annotations

import numpy as np
import pytest
from builders import sim_of

from schedrl.dtsim import DTSim, DTSimConfig, sample_sequence, synthetic_jobs
from schedrl.dtsim.heuristics import HEURISTICS, SAF, SJF, KillRule, Random, SAFHold, Tetris, TetrisStar, make_policy, run

SMALL = dict(res_slot=10, time_horizon=20, job_len=20, simu_len=1, max_seq=200, estimates="prerun")
# (real, prerun, cores, re-estimates): X 6u x 8, Y 1u x 3, Z 3u x 2
X, Y, Z = (8, 8, 60, []), (3, 3, 10, []), (2, 2, 30, [])


@pytest.mark.parametrize("policy, expected", [
    (SJF(), 2),  # Z: shortest
    (SAF(), 1),  # Y: area 3 < Z's 6 < X's 48
    (Tetris(), 0),  # X: 6 units x 10 free
    (TetrisStar(), 2),  # Z: 0.5 * (30/60 + 1) beats X's 0.5 * (1 + 0.25)
])
def test_each_heuristic_picks_its_job(policy, expected):
    assert policy.act(sim_of([X, Y, Z], **SMALL)) == expected


def test_heuristics_consider_only_jobs_that_can_start_now():
    big = (1, 1, 50, [])  # 5 units: fits only after X ends
    sim = sim_of([X, big], **SMALL)
    sim.step(0)
    assert sim.start_offsets() == [8]
    for policy in (SJF(), SAF(), Tetris(), TetrisStar(), Random(0)):
        assert policy.act(sim) == sim.config.void_action


def test_saf_hold_starts_a_long_job_only_if_it_leaves_the_reserve_free():
    # X: 6 units x 8 steps (area 48), Z: 3 units x 2 steps (area 6), on 10 free units
    sim = sim_of([X], **SMALL)
    assert SAFHold(hold=5, reserve=4).act(sim) == 0  # long, but leaves 4 free
    assert SAFHold(hold=5, reserve=5).act(sim) == sim.config.void_action  # long and leaves 4 < 5: hold, wait
    assert SAFHold(hold=8, reserve=5).act(sim) == 0  # not longer than the hold length
    # a held job does not block a short one, and SAF's order decides among the rest
    sim = sim_of([X, Z], **SMALL)
    assert SAFHold(hold=5, reserve=5).act(sim) == 1
    assert SAFHold(hold=100, reserve=5).act(sim) == SAF().act(sim) == 1
    sim = sim_of([X, (9, 9, 10, [])], **SMALL)  # 1 unit x 9 steps (area 9): SAF's pick, long, leaves 9 free
    assert SAFHold(hold=5, reserve=5).act(sim) == 1


def test_saf_hold_without_a_long_job_is_saf():
    table = synthetic_jobs(300, seed=2)
    config = DTSimConfig(simu_len=60)
    long_enough = int(table.prerun.max())
    for seed in range(3):
        seq = sample_sequence(table, config, np.random.default_rng(seed))
        assert run(DTSim(table, seq, config), SAFHold(hold=long_enough)) == run(DTSim(table, seq, config), SAF())


def test_random_is_seeded_and_picks_among_startable_jobs():
    picks = [Random(seed=s).act(sim_of([X, Y, Z], **SMALL)) for s in range(40)]
    assert set(picks) == {0, 1, 2}
    assert picks == [Random(seed=s).act(sim_of([X, Y, Z], **SMALL)) for s in range(40)]


def test_kill_rule_kills_a_short_looking_job_that_now_looks_long():
    liar = (30, 3, 10, [3, 15, 15, 15])  # predicted 3 steps before it ran, 15 after two
    sim = sim_of([liar], **{**SMALL, "estimates": "running"})
    rule = KillRule()
    sim.step(0)
    sim.step(sim.config.void_action)
    assert rule.kill_action(sim) is None  # re-estimate still 3
    sim.step(sim.config.void_action)
    action = rule.kill_action(sim)
    assert action == sim.config.num_nw + 1
    sim.step(action)
    assert sim.len_param[0] == 15
    sim.step(0)
    sim.step(sim.config.void_action)
    sim.step(sim.config.void_action)
    assert rule.kill_action(sim) is None  # re-estimated long: never killed twice


@pytest.mark.parametrize("name", list(HEURISTICS))
@pytest.mark.parametrize("kill", [False, True])
def test_heuristics_run_to_completion(name, kill):
    table, config = synthetic_jobs(500, seed=2), DTSimConfig(simu_len=80)
    sim = DTSim(table, sample_sequence(table, config, np.random.default_rng(9)), config)
    summary = run(sim, make_policy(name, seed=1, kill=kill))
    assert sim.done and not sim.truncated
    assert summary.finished == summary.jobs > 0 and summary.dropped == 0
    assert summary.avg_slowdown >= 1.0 and summary.avg_completion > 0


def test_unknown_heuristic_is_named():
    with pytest.raises(ValueError, match="unknown heuristic 'fifo'; choose one of tetris, random, sjf, tetris\\*, saf"):
        make_policy("fifo")


def test_a_policy_that_never_moves_time_is_stopped():
    class Flip:
        def act(self, sim):
            held = [k for k, j in enumerate(sim.slots) if j >= 0]
            return sim.config.num_nw + 1 + held[0] if held else 0

    with pytest.raises(RuntimeError, match="without moving time on"):
        run(sim_of([X, Y], **SMALL), Flip())


@pytest.mark.parametrize("requeue", ["latest", "prerun"])
def test_kill_rule_kills_a_job_at_most_once_whatever_it_is_requeued_with(requeue):
    liar = (30, 3, 10, [3, 15, 15, 15])
    sim = sim_of([liar], **{**SMALL, "estimates": "running", "requeue_estimate": requeue})
    rule = KillRule(relative=True)  # (15 - 3) / 3 = 4 > 1
    sim.step(0)
    for _ in range(2):
        sim.step(sim.config.void_action)
    sim.step(rule.kill_action(sim))
    assert sim.len_param[0] == (15 if requeue == "latest" else 3)
    sim.step(0)
    for _ in range(2):
        sim.step(sim.config.void_action)
    assert sim.estimate(0) == 15 and rule.kill_action(sim) is None
