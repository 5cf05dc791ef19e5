"""Hand-computed schedules on tiny SWF fixtures: every discipline and backfilling strategy, event order,
walltime kill, kill-and-requeue, a second resource, node allocation, the list window and backfill decisions.

Each fixture's header (tests/sim/fixtures/*.swf) explains, event by event, how its expected schedule
was computed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from schedrl.heuristics import get_heuristic
from schedrl.sim import DECIDE_BACKFILL, DECIDE_PICK, FINISHED, MODE_NAMES, SimConfig, Simulator
from schedrl.workload import read_swf

FIXTURES = Path(__file__).parent / "fixtures"
BACKFILLS = ("none", "easy", "conservative", "rlscheduler")
DISCIPLINES = ("pick-and-wait", "list")


def fixture(name: str):
    return read_swf(FIXTURES / name, use_cache=False)


def simulate(workload, policy: str = "fcfs", **config):
    return get_heuristic(policy).run(Simulator(workload, SimConfig(**config)))


def starts_and_modes(schedule) -> list[tuple[float, str]]:
    return [(float(t), MODE_NAMES[m]) for t, m in zip(schedule.start, schedule.mode)]


R, V, B = "ready", "reserved", "backfilled"

# easy_vs_rlscheduler.swf: EASY's extra-resources rule (job 4) and the fixed RLScheduler shadow (job 5)
EASY_VS_RLSCHEDULER = {
    "none": [(0, R), (0, R), (100, V), (100, R), (150, V)],
    "easy": [(0, R), (0, R), (100, V), (2, B), (150, V)],
    "conservative": [(0, R), (0, R), (100, V), (2, B), (150, V)],
    "rlscheduler": [(0, R), (0, R), (130, V), (130, R), (30, B)],
    # the list discipline reserves afresh at each instance, so the shadow is recomputed after job 2 ends
    "rlscheduler, list": [(0, R), (0, R), (100, V), (100, R), (150, V)],
}

# conservative_vs_easy.swf: EASY's backfill of job 4 delays the second queued job (3); conservative's does not
CONSERVATIVE_VS_EASY = {
    "none": [(0, R), (100, V), (150, V), (200, V), (200, R)],
    "easy": [(0, R), (100, V), (203, V), (3, B), (4, B)],
    "conservative": [(0, R), (100, V), (150, V), (200, V), (4, B)],
    "rlscheduler": [(0, R), (100, V), (150, V), (200, V), (4, B)],
}


@pytest.mark.parametrize("discipline", DISCIPLINES)
@pytest.mark.parametrize("backfill", BACKFILLS)
@pytest.mark.parametrize("name, expected", [("easy_vs_rlscheduler.swf", EASY_VS_RLSCHEDULER),
                                            ("conservative_vs_easy.swf", CONSERVATIVE_VS_EASY)])
def test_fcfs_schedule_for_every_discipline_and_backfill(name, expected, backfill, discipline):
    schedule = simulate(fixture(name), discipline=discipline, backfill=backfill)
    expected = expected.get(f"{backfill}, {discipline}", expected[backfill])
    assert starts_and_modes(schedule) == [(float(t), m) for t, m in expected]
    # exact estimates except easy_vs_rlscheduler's job 2, which ends early at 20 s
    np.testing.assert_array_equal(schedule.end, schedule.start + np.asarray(schedule.workload.run))


def test_rlscheduler_backfill_delays_the_blocked_job_past_easys_reservation():
    wl = fixture("easy_vs_rlscheduler.swf")
    easy = simulate(wl, backfill="easy")
    rls = simulate(wl, backfill="rlscheduler")
    # job 3's EASY reservation (recomputed after job 2 ended early) is 100; the stale shadow 200 let job 5 in
    assert easy.start[2] == 100 and rls.start[2] == 130
    assert rls.start[4] == 30 and MODE_NAMES[rls.mode[4]] == "backfilled"


def test_conservative_rebuilds_its_profile_so_an_early_end_can_move_a_later_reservation():
    schedule = simulate(fixture("conservative_early_finish.swf"), backfill="conservative")
    # job 5, reserved at 10 at t=0, starts at 21: the guarantee needs exact estimates (test_properties.py)
    assert starts_and_modes(schedule) == [(0.0, R), (0.0, R), (1.0, V), (11.0, V), (21.0, V)]


@pytest.mark.parametrize("backfill", BACKFILLS)
@pytest.mark.parametrize("discipline, expected", [
    ("pick-and-wait", [(0, R), (100, V), (150, V)]),
    ("list", [(0, R), (110, V), (100, V)]),
])
def test_pick_and_wait_holds_its_pick_list_picks_afresh(discipline, expected, backfill):
    schedule = simulate(fixture("discipline_sjf.swf"), "sjf", discipline=discipline, backfill=backfill)
    assert starts_and_modes(schedule) == [(float(t), m) for t, m in expected]


@pytest.mark.parametrize("event_order, policy, expected", [
    ("standard", "sjf", [(0, R), (110, V), (100, R)]),
    ("standard", "fcfs", [(0, R), (100, R), (600, V)]),
    ("rlscheduler", "sjf", [(0, R), (100, V), (600, V)]),
    ("rlscheduler", "fcfs", [(0, R), (100, V), (600, V)]),
])
def test_event_order_at_a_shared_instant(event_order, policy, expected):
    schedule = simulate(fixture("event_order.swf"), policy, event_order=event_order)
    assert starts_and_modes(schedule) == [(float(t), m) for t, m in expected]


@pytest.mark.parametrize("kill, ends, killed", [(True, [100, 150], [True, False]),
                                                (False, [200, 250], [False, False])])
def test_walltime_kill(kill, ends, killed):
    schedule = simulate(fixture("walltime_kill.swf"), kill_at_limit=kill)
    assert schedule.start.tolist() == [0, ends[0]]
    assert schedule.end.tolist() == ends
    assert schedule.killed.tolist() == killed
    assert schedule.requeues.tolist() == [0, 0] and schedule.wasted.tolist() == [0, 0]


def test_kill_and_requeue_loses_progress_and_restarts_later():
    sim = Simulator(fixture("requeue.swf"))
    assert sim.advance() == DECIDE_PICK and sim.now == 0 and sim.queue.tolist() == [0]
    sim.pick(0)
    assert sim.advance() == DECIDE_PICK and sim.now == 10 and sim.queue.tolist() == [1]
    sim.kill(0)
    assert sim.queue.tolist() == [0, 1]  # back at its FCFS place
    assert sim.free.tolist() == [4]
    sim.pick(1)
    assert sim.advance() == DECIDE_PICK and sim.queue.tolist() == [0]
    sim.pick(0)
    assert sim.blocked == 0
    assert sim.advance() == FINISHED
    schedule = sim.schedule()
    assert schedule.start.tolist() == [60, 10]
    assert schedule.end.tolist() == [160, 60]
    assert [MODE_NAMES[m] for m in schedule.mode] == ["reserved", "ready"]
    assert schedule.requeues.tolist() == [1, 0]
    assert schedule.wasted.tolist() == [40, 0]  # 10 s on 4 processors
    assert schedule.killed.tolist() == [False, False]


def test_kill_refuses_a_job_that_is_not_running():
    sim = Simulator(fixture("requeue.swf"))
    sim.advance()
    with pytest.raises(ValueError, match="job 1 is not running"):
        sim.kill(1)


BB = np.array([80.0, 90.0, 10.0, 15.0, 5.0])
BURST_BUFFER = {
    "none": [(0, R), (100, V), (100, R), (110, V), (110, R)],
    "easy": [(0, R), (100, V), (2, B), (110, V), (21, B)],
    "conservative": [(0, R), (100, V), (2, B), (110, V), (21, B)],
    "rlscheduler": [(0, R), (100, V), (2, B), (110, V), (110, R)],
}


@pytest.mark.parametrize("backfill", BACKFILLS)
def test_a_second_resource_blocks_a_job_that_fits_in_processors(backfill):
    wl = fixture("burst_buffer.swf").with_resources({"bb": BB}, capacity={"bb": 100.0})
    schedule = simulate(wl, backfill=backfill)
    assert schedule.resources == ("procs", "bb")
    assert starts_and_modes(schedule) == [(float(t), m) for t, m in BURST_BUFFER[backfill]]


def test_processors_alone_never_block_the_burst_buffer_fixture():
    schedule = simulate(fixture("burst_buffer.swf"), backfill="easy")
    np.testing.assert_array_equal(schedule.start, schedule.submit)


@pytest.mark.parametrize("allocation, req, starts", [("procs", [3, 3, 1], [0, 0, 0]),
                                                     ("nodes", [2, 2, 1], [0, 0, 50])])
def test_allocation_by_whole_nodes(allocation, req, starts):
    wl = fixture("nodes.swf")
    assert wl.procs_per_node == 2
    schedule = simulate(wl, allocation=allocation)
    assert schedule.resources == (allocation,)
    assert schedule.capacity.tolist() == [8 if allocation == "procs" else 4]
    assert schedule.req[:, 0].tolist() == req
    assert schedule.start.tolist() == starts


@pytest.mark.parametrize("window, starts", [(0, [0, 400, 200, 100]), (2, [0, 400, 100, 300]),
                                            (1, [0, 100, 400, 600])])
def test_list_window_limits_what_the_policy_sees(window, starts):
    schedule = simulate(fixture("list_window.swf"), "sjf", discipline="list", window=window)
    assert schedule.start.tolist() == starts
    assert [MODE_NAMES[m] for m in schedule.mode] == ["ready", "reserved", "reserved", "reserved"]


def test_list_window_refuses_a_pick_outside_it():
    sim = Simulator(fixture("list_window.swf"), SimConfig(discipline="list", window=2))
    sim.advance()
    sim.pick(0)
    while sim.advance() == DECIDE_PICK and len(sim.queue) < 3:
        sim.pick(int(sim.queue[0]))
    assert sim.queue.tolist() == [1, 2, 3] and sim.window.tolist() == [1, 2]
    with pytest.raises(ValueError, match="outside the window"):
        sim.pick(3)


def test_backfill_first_fit():
    schedule = simulate(fixture("backfill_policy.swf"), backfill="easy")
    assert starts_and_modes(schedule) == [(0.0, R), (100.0, V), (2.0, B), (2.0, B)]


def test_backfill_policy_decision_points():
    sim = Simulator(fixture("backfill_policy.swf"), SimConfig(backfill="easy", backfill_choice="policy"))
    seen = []
    choices = iter([3, None, 2])
    while (code := sim.advance()) != FINISHED:
        if code == DECIDE_PICK:
            seen.append(("pick", sim.now, sim.queue.tolist()))
            sim.pick(int(sim.queue[0]))
        else:
            assert code == DECIDE_BACKFILL
            seen.append(("backfill", sim.now, sim.candidates.tolist()))
            if len(seen) == 3:
                with pytest.raises(ValueError, match="not a backfill candidate"):
                    sim.backfill(0)
            sim.backfill(next(choices))
    assert seen == [("pick", 0, [0]), ("pick", 1, [1]),
                    ("backfill", 2, [2, 3]), ("backfill", 2, [2]), ("backfill", 62, [2])]
    assert starts_and_modes(sim.schedule()) == [(0.0, R), (100.0, V), (62.0, B), (2.0, B)]


def test_backfill_policy_with_a_heuristic_takes_candidates_first_fit():
    wl = fixture("backfill_policy.swf")
    policy = simulate(wl, backfill="easy", backfill_choice="policy")
    first_fit = simulate(wl, backfill="easy")
    np.testing.assert_array_equal(policy.start, first_fit.start)
    np.testing.assert_array_equal(policy.mode, first_fit.mode)
