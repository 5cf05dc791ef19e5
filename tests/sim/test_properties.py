"""Simulator invariants on random small workloads (hypothesis), checked against independent oracles.

The backfilling oracles are time-stepped: with integer submit and run times every event falls on a
whole second, so a per-second availability array over the horizon gives each rule's answer directly.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedrl.heuristics import get_heuristic
from schedrl.sim import DECIDE_BACKFILL, DECIDE_PICK, FINISHED, SimConfig, Simulator
from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES

SETTINGS = settings(max_examples=100, deadline=None)
HEURISTICS = ("fcfs", "sjf", "wfp3", "unicep", "f1", "saf", "ljf", "binpacking", "random", "tetris", "tetris*",
              "optimization", "wfp3-rlscheduler")


def make_workload(submit, run, time_req, procs, max_procs, max_nodes=None, bb=None, bb_cap=None) -> Workload:
    n = len(submit)
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=submit, run=run, time_req=time_req, procs_req=procs,
                   procs_alloc=procs, user=np.arange(n) % 3, status=np.ones(n))
    wl = Workload(columns, max_procs=max_procs, max_nodes=max_nodes or max_procs)
    return wl if bb is None else wl.with_resources({"bb": bb}, capacity={"bb": bb_cap})


class Jobs:
    """A drawn workload that hypothesis prints as a few rows, not as 18 arrays."""

    def __init__(self, rows, ppn: int, nodes: int, bb_cap: int | None):
        self.rows, self.ppn, self.nodes, self.bb_cap = rows, ppn, nodes, bb_cap
        submit, run, time_req, procs, bb = (np.array(c, dtype=np.int64) for c in zip(*rows))
        self.workload = make_workload(submit, run, time_req, procs, ppn * nodes, nodes,
                                      None if bb_cap is None else bb.astype(float), bb_cap)

    def __repr__(self) -> str:
        return (f"Jobs(procs={self.ppn * self.nodes}, nodes={self.nodes}, bb={self.bb_cap}, "
                f"(submit, run, time_req, procs, bb)={self.rows})")


@st.composite
def workloads(draw, exact: bool = False) -> Jobs:
    """Up to 30 jobs on up to 32 processors (1-8 nodes of 1-4), half the time with a burst buffer too."""
    n = draw(st.integers(1, 30))
    ppn = draw(st.integers(1, 4))
    nodes = draw(st.integers(1, 8))
    jobs = draw(st.lists(st.tuples(st.sampled_from([0, 0, 1, 5, 20, 60]),  # gaps: many simultaneous arrivals
                                   st.integers(1 if exact else 0, 100),  # run
                                   st.integers(1, 120),  # requested time (ignored when exact)
                                   st.integers(1, ppn * nodes),
                                   st.integers(0, 10)),  # burst buffer
                         min_size=n, max_size=n))
    bb_cap = draw(st.integers(max(max(j[4] for j in jobs), 1), 12)) if draw(st.booleans()) else None
    submit = np.cumsum([j[0] for j in jobs]).tolist()
    rows = [(t, run, run if exact else req, procs, bb if bb_cap else 0)
            for t, (_, run, req, procs, bb) in zip(submit, jobs)]
    return Jobs(rows, ppn, nodes, bb_cap)


def requests(wl: Workload, allocation: str = "procs") -> tuple[np.ndarray, np.ndarray]:
    """(n, R) requests and capacity, computed from the workload independently of the simulator."""
    procs = np.asarray(wl.procs_req, dtype=float)
    if allocation == "nodes":
        cols, cap = [np.ceil(procs / wl.procs_per_node)], [wl.max_nodes]
    else:
        cols, cap = [procs], [wl.max_procs]
    for key in sorted(wl.resources):
        cols.append(np.asarray(wl.resources[key], dtype=float))
        cap.append(wl.capacity[key])
    return np.stack(cols, axis=1), np.array(cap, dtype=float)


configs = st.builds(
    SimConfig,
    discipline=st.sampled_from(["pick-and-wait", "list"]),
    backfill=st.sampled_from(["none", "easy", "conservative", "rlscheduler"]),
    event_order=st.sampled_from(["standard", "rlscheduler"]),
    kill_at_limit=st.booleans(),
    allocation=st.sampled_from(["procs", "nodes"]),
    window=st.sampled_from([0, 0, 1, 3]),
)


# --- invariants of every schedule ---------------------------------------------------------------


# run-time estimates other than the requested time (a predictor's), or None
estimates = st.none() | st.lists(st.integers(1, 150), min_size=30, max_size=30)


def simulator(wl: Workload, config: SimConfig, est: list[int] | None) -> Simulator:
    return Simulator(wl, config, estimates=None if est is None else np.array(est[:len(wl)], dtype=float))


def check_capacity(starts: np.ndarray, ends: np.ndarray, req: np.ndarray, cap: np.ndarray) -> None:
    """Usage of every resource at every instant, from the runs [start, end) and their requests."""
    # usage only rises when a run starts: check every resource at every start instant
    active = (starts[None, :] <= starts[:, None]) & (starts[:, None] < ends[None, :])
    usage = active.astype(float) @ req
    assert np.all(usage <= cap + 1e-9), f"over capacity {cap}: {usage.max(axis=0)}"


@SETTINGS
@given(jobs=workloads(), config=configs, heuristic=st.sampled_from(HEURISTICS), est=estimates)
def test_every_schedule_respects_capacity_submission_and_runs_each_job_once(jobs, config, heuristic, est):
    wl = jobs.workload
    sim = simulator(wl, config, est)
    schedule = get_heuristic(heuristic, seed=3).run(sim)
    assert sim.done
    req, cap = requests(wl, config.allocation)
    start, end = schedule.start, schedule.end
    assert np.all(start >= schedule.submit)
    assert np.all(end >= start) and np.all(end >= 0)
    run, limit = np.asarray(wl.run, float), np.asarray(wl.time_req, float)
    expected_run = np.minimum(run, limit) if config.kill_at_limit else run
    np.testing.assert_array_equal(end - start, expected_run)
    np.testing.assert_array_equal(schedule.killed, config.kill_at_limit & (run > limit))
    assert np.all(schedule.requeues == 0) and np.all(schedule.mode > 0)
    check_capacity(start, end, req, cap)


@SETTINGS
@given(jobs=workloads(), discipline=st.sampled_from(["pick-and-wait", "list"]),
       event_order=st.sampled_from(["standard", "rlscheduler"]), kill=st.booleans())
def test_fcfs_without_backfilling_starts_jobs_in_submit_order(jobs, discipline, event_order, kill):
    wl = jobs.workload
    config = SimConfig(discipline=discipline, event_order=event_order, kill_at_limit=kill)
    schedule = get_heuristic("fcfs").run(Simulator(wl, config))
    assert np.all(np.diff(schedule.start) >= 0)


@settings(max_examples=60, deadline=None)
@given(jobs=workloads(), config=configs, heuristic=st.sampled_from(HEURISTICS), est=estimates)
def test_step_by_step_equals_the_compiled_run(jobs, config, heuristic, est):
    wl = jobs.workload
    stepped = simulator(wl, config, est).run(get_heuristic(heuristic, seed=7))
    compiled = get_heuristic(heuristic, seed=7).run(simulator(wl, config, est))
    for field in ("start", "end", "mode", "killed", "requeues", "wasted"):
        np.testing.assert_array_equal(getattr(stepped, field), getattr(compiled, field), err_msg=field)


@SETTINGS
@given(jobs=workloads(), config=configs, data=st.data())
def test_kill_and_requeue_bookkeeping(jobs, config, data):
    wl = jobs.workload
    sim = Simulator(wl, config)
    req, cap = requests(wl, config.allocation)
    n = len(wl)
    killed_runs = []  # (job, start, kill time)
    wasted = np.zeros(n)
    kills = np.zeros(n, dtype=int)
    while (code := sim.advance()) != FINISHED:
        running = sim.running().tolist()
        if running and len(killed_runs) < 2 * n and data.draw(st.booleans()):
            j = data.draw(st.sampled_from(running))
            start = sim.schedule().start[j]
            killed_runs.append((j, start, sim.now))
            wasted[j] += (sim.now - start) * req[j, 0]
            kills[j] += 1
            sim.kill(j)
            assert j in sim.queue.tolist() and j not in sim.running()
        if code == DECIDE_PICK:
            sim.pick(int(sim.window[0]))
        else:
            sim.backfill(int(sim.candidates[0]))
    schedule = sim.schedule()
    np.testing.assert_array_equal(schedule.requeues, kills)
    np.testing.assert_allclose(schedule.wasted, wasted)
    run, limit = np.asarray(wl.run, float), np.asarray(wl.time_req, float)
    # each final run starts from scratch, after the job's last kill
    np.testing.assert_array_equal(schedule.end - schedule.start,
                                  np.minimum(run, limit) if config.kill_at_limit else run)
    for j, _, t in killed_runs:
        assert schedule.start[j] >= t
    # the killed runs held their resources too
    which = np.array([k[0] for k in killed_runs] + list(range(n)), dtype=int)
    starts = np.array([k[1] for k in killed_runs] + schedule.start.tolist())
    ends = np.array([k[2] for k in killed_runs] + schedule.end.tolist())
    check_capacity(starts, ends, req[which], cap)


# --- backfilling guarantees ----------------------------------------------------------------------
# EASY needs only estimates that are upper bounds (a job killed at its requested time never overruns it);
# conservative, which rebuilds its profile in queue order at every decision, needs exact estimates: a job
# ending early lets earlier-queued jobs move up and take a later job's slot (see test_schedules.py).


class Oracle:
    """Availability per whole second from `now`, from the running jobs' estimated ends."""

    def __init__(self, sim: Simulator, req: np.ndarray):
        wl = sim.workload
        self.now = int(sim.now)
        self.req = req
        self.est = np.asarray(wl.time_req, dtype=np.int64)
        start = sim.schedule().start
        horizon = self.now + int(self.est.sum()) + 2
        self.avail = np.tile(np.asarray(sim.free, dtype=float), (horizon - self.now, 1))
        for j in sim.running():
            end = int(start[j]) + int(self.est[j])
            assert end > self.now, "estimates are upper bounds: a running job is estimated to end after now"
            self.avail[end - self.now:] += req[j]

    def earliest(self, j: int) -> int:
        """First second from which `j` fits for its whole estimate."""
        ok = np.all(self.avail >= self.req[j] - 1e-9, axis=1)
        bad = np.concatenate([[0], np.cumsum(~ok)])
        d = self.est[j]
        t0 = np.flatnonzero(bad[d:] - bad[:-d] == 0)[0]
        return self.now + int(t0)

    def reserve(self, j: int, t: int) -> None:
        self.avail[t - self.now:t - self.now + self.est[j]] -= self.req[j]

    def fits_now(self, j: int) -> bool:
        return bool(np.all(self.req[j] <= self.avail[0] + 1e-9))


def easy_rule(sim: Simulator, req: np.ndarray, blocked: int) -> tuple[int, list[int]]:
    """EASY: the blocked job's shadow time, and the queued jobs that may start now without delaying it."""
    oracle = Oracle(sim, req)
    # running jobs only end, so once the blocked job fits it fits for good: its shadow is the first such second
    ok = np.all(oracle.avail >= req[blocked] - 1e-9, axis=1)
    shadow = oracle.now + int(np.argmax(ok))
    extra = oracle.avail[shadow - oracle.now] - req[blocked]
    cands = [int(j) for j in sim.queue if j != blocked and oracle.fits_now(j)
             and (oracle.now + oracle.est[j] <= shadow or np.all(req[j] <= extra + 1e-9))]
    return shadow, cands


def conservative_rule(sim: Simulator, req: np.ndarray, blocked: int) -> tuple[dict[int, int], list[int]]:
    """Conservative: every queued job's reservation (blocked first, then queue order), and those due now."""
    oracle = Oracle(sim, req)
    order = ([blocked] if blocked >= 0 else []) + [int(j) for j in sim.queue if j != blocked]
    reservations = {}
    for j in order:
        reservations[j] = oracle.earliest(j)
        oracle.reserve(j, reservations[j])
    return reservations, [j for j in order[1:] if reservations[j] == oracle.now]


@SETTINGS
@given(jobs=workloads(), heuristic=st.sampled_from(["fcfs", "sjf", "wfp3", "saf", "random"]),
       discipline=st.sampled_from(["pick-and-wait", "list"]), data=st.data())
def test_easy_never_starts_the_blocked_job_after_its_reservation(jobs, heuristic, discipline, data):
    wl = jobs.workload
    if discipline == "list":
        heuristic = "fcfs"  # the list discipline reserves afresh each instance: only FCFS keeps the same job
    # killed at the requested time, jobs end at or before their estimate: early, or exactly
    config = SimConfig(discipline=discipline, backfill="easy", backfill_choice="policy", kill_at_limit=True)
    sim = Simulator(wl, config)
    req, _ = requests(wl)
    policy = get_heuristic(heuristic, seed=1)
    reservations: dict[int, list[int]] = {}
    while (code := sim.advance()) != FINISHED:
        if code == DECIDE_PICK:
            j = policy.pick(sim)
            sim.pick(j)
            if sim.blocked == j:
                reservations.setdefault(j, []).append(easy_rule(sim, req, j)[0])
            continue
        assert code == DECIDE_BACKFILL
        blocked = sim.blocked
        shadow, cands = easy_rule(sim, req, blocked)
        reservations[blocked].append(shadow)
        assert sim.candidates.tolist() == cands
        # any candidate, or none at all, keeps the guarantee
        choice = data.draw(st.sampled_from(cands + [None]))
        sim.backfill(choice)
    start = sim.schedule().start
    for j, shadows in reservations.items():
        assert start[j] <= min(shadows), f"job {j} started at {start[j]}, reserved at {shadows}"
        assert shadows == sorted(shadows, reverse=True), f"job {j}'s reservation moved later: {shadows}"


@SETTINGS
@given(jobs=workloads(exact=True), discipline=st.sampled_from(["pick-and-wait", "list"]), kill=st.booleans(),
       data=st.data())
def test_conservative_never_delays_any_reservation(jobs, discipline, kill, data):
    wl = jobs.workload
    config = SimConfig(discipline=discipline, backfill="conservative", backfill_choice="policy", kill_at_limit=kill)
    sim = Simulator(wl, config)
    req, _ = requests(wl)
    reservations: dict[int, list[int]] = {}

    def record(blocked: int) -> list[int]:
        res, due = conservative_rule(sim, req, blocked)
        for j, t in res.items():
            reservations.setdefault(j, []).append(t)
        return due

    while (code := sim.advance()) != FINISHED:
        if code == DECIDE_PICK:
            record(-1)
            sim.pick(int(sim.queue[0]))  # FCFS: the blocked job is always first in queue order
            if sim.blocked >= 0:
                record(sim.blocked)
            continue
        assert code == DECIDE_BACKFILL
        due = record(sim.blocked)
        assert sim.candidates.tolist() == due
        # any candidate due now keeps every reservation; declining would delay the candidate's own
        sim.backfill(data.draw(st.sampled_from(due)))
    start = sim.schedule().start
    for j, times in reservations.items():
        assert start[j] <= min(times), f"job {j} started at {start[j]}, reserved at {times}"
