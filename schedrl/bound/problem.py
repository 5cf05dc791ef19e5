"""The clairvoyant offline problem of one window, and the replay that scores any schedule of it with our metric code.

A window's problem: every job's arrival, size and true run time known in advance; non-preemptive; each resource a
cumulative capacity; a job starts no earlier than it arrives; its duration is what the scenario's semantics make of
it (`SimConfig.kill_at_limit`: a job longer than its request runs min(run, requested)); its demand is what the
simulator allocates (processors, or whole nodes under `allocation: nodes`, and any extra resource). The problem is
the same for every backfilling semantics, event order and discipline: any feasible schedule is a schedule of it, so
its optimum bounds every online policy on the window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedrl.metrics import summarize
from schedrl.metrics.jobs import BSLD_TAU
from schedrl.sim import SimConfig, Simulator
from schedrl.sim.simulator import Schedule, resource_names
from schedrl.workload.workload import Workload

OBJECTIVES = ("bsld", "wait")
"""The metrics the offline problem is solved for (both regular: non-decreasing in every completion time)."""


@dataclass(frozen=True)
class Problem:
    """One window's offline problem. Times are whole seconds from the window's first arrival."""

    workload: Workload
    """The window's jobs (trace order, submit order)."""
    config: SimConfig
    """The semantics its durations and demands come from (kill at the limit, allocation)."""
    metric: str
    """`bsld` or `wait` (the window's mean)."""
    origin: float
    """The first arrival, seconds in the trace's clock: time 0 of `release`."""
    release: np.ndarray
    """Arrival of each job (int64)."""
    duration: np.ndarray
    """What each job runs: its run time, or its requested time where it is killed there (int64)."""
    demand: np.ndarray
    """(n, R) units of each resource (int64): processors or nodes first, then extra resources."""
    capacity: np.ndarray
    """(R,) units of each resource (int64)."""
    resources: tuple[str, ...]
    """Resource names, the columns of `demand`."""
    killed: np.ndarray
    """True where the job runs to its requested time and is killed there."""

    @property
    def n(self) -> int:
        return len(self.release)

    @property
    def divisor(self) -> np.ndarray:
        """bsld's denominator per job, max(duration, 10 s) (`schedrl.metrics.jobs.BSLD_TAU`)."""
        return np.maximum(self.duration, BSLD_TAU)

    @property
    def slack(self) -> np.ndarray:
        """The wait a job has before its bsld passes 1: divisor - duration (nonzero only for jobs under 10 s)."""
        return self.divisor - self.duration

    def job(self, j: int) -> str:
        return f"job {int(self.workload.job_id[j])} (position {j})"


def _whole(values: np.ndarray, what: str, workload: Workload) -> np.ndarray:
    rounded = np.round(values)
    bad = np.flatnonzero((np.abs(values - rounded) > 1e-9).reshape(len(values), -1).any(axis=1))
    if bad.size:
        j = int(bad[0])
        values = values.reshape(len(values), -1)[:, np.argmax(np.abs(values - rounded).reshape(len(values), -1)[j])]
        unit = " units" if what == "request" else " s"
        raise ValueError(f"job {int(workload.job_id[j])} (position {j}) has a {what} of {float(values.flat[j])!r}{unit}: the "
                         f"offline problem needs whole seconds and whole units of every resource")
    return rounded.astype(np.int64)


def _decimal_units(demand: np.ndarray, capacity: np.ndarray, digits: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Each resource counted in the largest unit (1, 0.1, ..., 10^-digits of the trace's) in which every request and
    the capacity are whole (MRSch's burst buffer comes in hundredths of a GB); a column that is whole in none is left
    as it is (and refused by `window_problem`)."""
    demand, capacity = demand.copy(), capacity.copy()
    for r in range(demand.shape[1]):
        for k in range(digits + 1):
            scaled = np.append(demand[:, r], capacity[r]) * 10**k
            if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6):
                demand[:, r], capacity[r] = np.round(scaled[:-1]), np.round(scaled[-1])
                break
    return demand, capacity


def _check_units(demand: np.ndarray, capacity: np.ndarray, workload: Workload, config: SimConfig,
                 digits: int = 6) -> None:
    """ValueError (one line) for a resource `_decimal_units` could count in no decimal unit, naming the request (or
    the capacity) that needs more than `digits` decimals: that one, not the first fractional request, is the cause."""
    names = resource_names(workload, config)
    for r in range(demand.shape[1]):
        column = np.append(demand[:, r], capacity[r])
        if np.all(np.abs(column - np.round(column)) <= 1e-9):
            continue
        scaled = column * 10**digits
        bad = np.flatnonzero(np.abs(scaled - np.round(scaled)) > 1e-6)
        what = names[r] if r < len(names) else f"resource {r}"
        if bad.size and bad[0] < len(demand):
            j = int(bad[0])
            raise ValueError(f"job {int(workload.job_id[j])} (position {j}) requests {float(demand[j, r])!r} of {what}: no "
                             f"decimal unit down to 1e-{digits} makes every {what} request whole, and the offline "
                             "problem counts whole units of every resource")
        raise ValueError(f"the machine's {what} capacity {float(capacity[r])!r} is whole in no decimal unit down to "
                         f"1e-{digits}: the offline problem counts whole units of every resource")


def window_problem(workload: Workload, config: SimConfig, metric: str) -> Problem:
    """The offline problem of `workload` under `config`'s kill and allocation semantics. ValueError (one line) for a
    job larger than the machine, a metric the bound does not solve, or times that are not whole seconds."""
    if metric not in OBJECTIVES:
        raise ValueError(f"the offline bound solves {', '.join(OBJECTIVES)}; the metric is {metric!r}")
    state = Simulator(workload, config).state  # the simulator's own checks: order, sizes, machine width
    submit = np.asarray(state.submit, dtype=np.float64)
    origin = float(submit.min())
    run, limit = np.asarray(state.run), np.asarray(state.limit)
    killed = (run > limit) if config.kill_at_limit else np.zeros(len(run), bool)
    duration = np.where(killed, limit, run)
    demand, capacity = _decimal_units(np.asarray(state.req, dtype=np.float64), np.asarray(state.cap, np.float64))
    _check_units(demand, capacity, workload, config)
    return Problem(workload=workload, config=config, metric=metric, origin=origin,
                   release=_whole(submit - origin, "submit time", workload),
                   duration=_whole(duration, "duration", workload),
                   demand=_whole(demand, "request", workload).reshape(len(run), -1),
                   capacity=np.round(capacity).astype(np.int64),
                   resources=resource_names(workload, config),
                   killed=killed)


def infeasible(problem: Problem, start: np.ndarray) -> str | None:
    """Why the start times are not a schedule of the problem (a job before its arrival; a resource over capacity at
    some job's start, where the usage is highest), or None."""
    start = np.asarray(start, dtype=np.int64)
    if start.shape != problem.release.shape:
        return f"{start.shape[0] if start.ndim else 0} start times for {problem.n} jobs"
    early = np.flatnonzero(start < problem.release)
    if early.size:
        j = int(early[0])
        return f"{problem.job(j)} starts at {int(start[j])} before its arrival at {int(problem.release[j])}"
    end = start + problem.duration
    # usage is piecewise constant and rises only at starts: checking at every start checks every instant
    events = np.concatenate([start, end])
    order = np.lexsort((np.concatenate([np.ones(problem.n), np.zeros(problem.n)]), events))  # ends first
    delta = np.concatenate([problem.demand, -problem.demand])[order]
    active = np.concatenate([problem.duration > 0, problem.duration > 0])[order]
    usage = np.cumsum(delta * active[:, None], axis=0)
    over = np.flatnonzero((usage > problem.capacity).any(axis=1))
    if over.size:
        k = int(over[0])
        r = int(np.argmax(usage[k] > problem.capacity))
        return (f"{problem.resources[r]} in use reaches {int(usage[k, r])} of {int(problem.capacity[r])} at time "
                f"{int(events[order[k]])}")
    return None


def schedule(problem: Problem, start: np.ndarray) -> Schedule:
    """The start times as the simulator's `Schedule` (trace clock), so `schedrl.metrics.summarize` scores them."""
    start = np.asarray(start, dtype=np.float64) + problem.origin
    n = problem.n
    return Schedule(workload=problem.workload, config=problem.config, resources=problem.resources,
                    capacity=problem.capacity.astype(np.float64), req=problem.demand.astype(np.float64),
                    submit=problem.release.astype(np.float64) + problem.origin, start=start,
                    end=start + problem.duration, mode=np.zeros(n, np.int64), killed=problem.killed.copy(),
                    requeues=np.zeros(n, np.int64), wasted=np.zeros(n))


def replay(problem: Problem, start: np.ndarray) -> float:
    """The metric of a schedule given by its start times, through our metric code; ValueError where the start times
    are not a feasible schedule."""
    why = infeasible(problem, start)
    if why is not None:
        raise ValueError(f"not a feasible schedule: {why}")
    return summarize(schedule(problem, start)).value(problem.metric)


def objective(problem: Problem, start: np.ndarray) -> float:
    """The metric in closed form (no feasibility check): mean wait, or mean of 1 + max(0, wait - slack) / divisor.
    `replay` is the authority; tests pin the two equal."""
    wait = np.asarray(start, dtype=np.float64) - problem.release
    if problem.metric == "wait":
        return float(wait.mean())
    return float((1.0 + np.maximum(wait - problem.slack, 0.0) / problem.divisor).mean())
