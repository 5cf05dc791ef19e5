"""Metrics on hand-computed schedules: bounded slowdown, utilisation, per-user fairness, kills, modes."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.heuristics import get_heuristic
from schedrl.metrics import BSLD_TAU, METRICS, job_metrics, summarize
from schedrl.sim import FINISHED, SimConfig, Simulator
from schedrl.sim.simulator import Schedule
from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES

READY, RESERVED, BACKFILLED = 1, 2, 3


def make_workload(submit, run, procs, max_procs, user=None, time_req=None) -> Workload:
    n = len(submit)
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=submit, run=run, procs_req=procs, procs_alloc=procs,
                   time_req=run if time_req is None else time_req, status=np.ones(n),
                   user=np.ones(n) if user is None else user)
    return Workload(columns, max_procs=max_procs, max_nodes=max_procs)


def fcfs(wl: Workload, **config) -> Schedule:
    return get_heuristic("fcfs").run(Simulator(wl, SimConfig(**config)))


def hand_schedule(offset: float = 0.0) -> Schedule:
    """Four jobs on 10 processors and a 100 GB burst buffer (times shifted by `offset`).

    job  user  submit  start  end  procs  bb   wait  run  bsld                     mode
     1    1      0       0    100    3    50     0   100  100/100 = 1             ready
     2    1      0      45     50    2     0    45     5  (45+5)/max(5,10) = 5     backfilled (2 requeues)
     3    2     10      30    130    4    20    20   100  120/100 = 1.2           reserved (killed)
     4    3     20      20     70    1    10     0    50  1                       ready
    Busy: procs 3*100 + 2*5 + 4*100 + 1*50 = 760, bb 50*100 + 20*100 + 10*50 = 7500, over a 130 s makespan.
    """
    submit = np.array([0, 0, 10, 20]) + offset
    wl = make_workload(submit, [100, 5, 100, 50], [3, 2, 4, 1], 10, user=[1, 1, 2, 3])
    wl = wl.with_resources({"bb": np.array([50.0, 0, 20, 10])}, capacity={"bb": 100.0})
    return Schedule(
        workload=wl, config=SimConfig(), resources=("procs", "bb"), capacity=np.array([10.0, 100.0]),
        req=np.array([[3.0, 50], [2, 0], [4, 20], [1, 10]]), submit=submit.astype(float),
        start=np.array([0.0, 45, 30, 20]) + offset, end=np.array([100.0, 50, 130, 70]) + offset,
        mode=np.array([READY, BACKFILLED, RESERVED, READY]), killed=np.array([False, False, True, False]),
        requeues=np.array([0, 2, 0, 0]), wasted=np.array([0.0, 7200, 0, 0]))


def test_job_metrics():
    m = job_metrics(hand_schedule())
    assert m["wait"].tolist() == [0, 45, 20, 0]
    assert m["run"].tolist() == [100, 5, 100, 50]
    assert m["turnaround"].tolist() == [100, 50, 120, 50]
    assert m["slowdown"].tolist() == pytest.approx([1, 10, 1.2, 1])
    assert m["bsld"].tolist() == pytest.approx([1, 5, 1.2, 1])
    assert m["mode"].tolist() == ["ready", "backfilled", "reserved", "ready"]


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_summary(offset):
    m = summarize(hand_schedule(offset))
    assert m.jobs == 4
    assert m.avg_bsld == pytest.approx((1 + 5 + 1.2 + 1) / 4)
    assert m.avg_wait == pytest.approx(65 / 4)
    assert m.avg_turnaround == pytest.approx(80)
    assert m.avg_slowdown == pytest.approx((1 + 10 + 1.2 + 1) / 4)
    assert m.max_wait == 45
    assert m.p50_wait == pytest.approx(10)  # waits 0, 0, 20, 45
    assert m.p95_wait == pytest.approx(20 + 0.85 * 25)  # numpy's linear interpolation at rank 2.85
    assert m.p95_bsld == pytest.approx(1.2 + 0.85 * 3.8)
    # makespan runs from the first submit, not from time 0
    assert m.makespan == pytest.approx(130)
    assert m.utilization == pytest.approx(760 / (10 * 130))
    assert m.utilization_per_resource == pytest.approx({"procs": 760 / 1300, "bb": 7500 / 13000})
    # user 1: mean of 1 and 5; users 2 and 3: one job each
    assert m.users == 3
    assert m.max_user_bsld == pytest.approx(3)
    assert m.mean_user_bsld == pytest.approx((3 + 1.2 + 1) / 3)
    assert (m.killed, m.requeued) == (1, 2)
    assert m.wasted_core_hours == pytest.approx(2.0)  # 7200 processor-seconds
    assert (m.ready_share, m.reserved_share, m.backfilled_share) == (0.5, 0.25, 0.25)
    # DRAS Table IV's node-hour column: ready 3*100 + 1*50, reserved 4*100, backfilled 2*5 of 760
    assert (m.ready_work_share, m.reserved_work_share, m.backfilled_work_share) == pytest.approx(
        (350 / 760, 400 / 760, 10 / 760))


@pytest.mark.parametrize("wait, run, bsld", [
    (0, 1, 1.0),  # never below 1
    (45, 5, 5.0),  # a short job's run counts as 10 s: (45 + 5) / 10, not 50 / 5
    (30, 0, 3.0),  # a zero-length job too: 30 / 10
    (90, 10, 10.0),  # at the bound
    (90, 30, 4.0),  # above it, plain slowdown
])
def test_bounded_slowdown_uses_the_10_second_bound(wait, run, bsld):
    assert BSLD_TAU == 10.0
    wl = make_workload([0], [run], [1], 1)
    schedule = Schedule(wl, SimConfig(), ("procs",), np.array([1.0]), np.array([[1.0]]), np.array([0.0]),
                        np.array([float(wait)]), np.array([float(wait + run)]), np.array([READY]),
                        np.array([False]), np.array([0]), np.array([0.0]))
    assert job_metrics(schedule)["bsld"].tolist() == [bsld]


def test_unknown_users_count_as_one():
    wl = make_workload([0, 0, 0], [10, 10, 10], [1, 1, 1], 3, user=[-1, -1, 7])
    m = summarize(fcfs(wl))
    assert m.users == 2


def test_walltime_kills_are_counted():
    # two whole-machine jobs; the first runs 200 s but requested 100 s
    wl = make_workload([0, 10], [200, 50], [4, 4], 4, time_req=[100, 50])
    killed = summarize(fcfs(wl))
    assert killed.killed == 1 and killed.makespan == 150
    assert killed.utilization == pytest.approx(1.0)
    kept = summarize(fcfs(wl, kill_at_limit=False))
    assert kept.killed == 0 and kept.makespan == 250


def test_requeues_and_wasted_core_hours_from_a_simulation():
    # job 1 (4 procs) is killed after 10 s and requeued; job 2 (2 procs) starts, job 1 restarts after it
    wl = make_workload([0, 10], [100, 50], [4, 2], 4)
    sim = Simulator(wl)
    sim.advance()
    sim.pick(0)
    sim.advance()
    sim.kill(0)
    sim.pick(1)
    while sim.advance() != FINISHED:
        sim.pick(int(sim.queue[0]))
    m = summarize(sim.schedule())
    assert (m.requeued, m.killed) == (1, 0)
    assert m.wasted_core_hours == pytest.approx(40 / 3600)
    # job 1 waited from 0 to its restart at 60, counting the lost 10 s
    assert m.max_wait == 60 and m.makespan == 160
    assert (m.ready_share, m.reserved_share, m.backfilled_share) == (0.5, 0.5, 0.0)


def test_an_unfinished_schedule_is_refused():
    sim = Simulator(make_workload([0, 0], [10, 10], [1, 1], 1))
    sim.advance()
    with pytest.raises(ValueError, match="not finished"):
        summarize(sim.schedule())


def test_value_by_objective_name():
    m = summarize(hand_schedule())
    assert m.value("bsld") == m.avg_bsld and m.value("fairness") == m.max_user_bsld
    assert set(METRICS) >= {"bsld", "wait", "turnaround", "slowdown", "utilization", "fairness"}
    assert m.to_dict()["avg_wait"] == m.avg_wait
    with pytest.raises(ValueError, match="unknown metric 'speed'"):
        m.value("speed")
