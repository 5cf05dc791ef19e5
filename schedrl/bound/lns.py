"""The upper side's local search: large-neighbourhood search over a schedule, CP-SAT re-solving a slice of it with the
rest fixed.

A neighbourhood is `size` jobs consecutive in the current schedule's start order (a time slice of it). Every other job
keeps its start and becomes a fixed interval of the capacity; the slice's jobs may move anywhere from their arrival to
their latest start (`schedrl.bound.cpsat.latest_starts` under the current best), into any hole the fixed jobs leave.
CP-SAT solves that small model from the current starts (its hint) for at most `step` seconds; the new schedule is
kept where its metric, replayed in closed form over the whole window and checked feasible, is lower. The slices'
anchors are drawn at random (seeded); their size grows while CP-SAT proves them optimal quickly and shrinks when it
runs out of time.

Every schedule this returns is feasible (`schedrl.bound.problem.infeasible` is checked before one is kept), and
`schedrl.bound.windows.bound_window` replays it again through the metric code, like every schedule it reports.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from schedrl.bound.problem import Problem, infeasible, objective

SIZE = 40
"""The first neighbourhood's jobs."""
SIZES = (12, 160)
"""The least and the most jobs of a neighbourhood as it adapts."""
STEP = 2.0
"""CP-SAT's limit per neighbourhood, seconds."""


@dataclass(frozen=True)
class Searched:
    """What one local search did."""

    start: np.ndarray
    """The best schedule's start times (the window's clock)."""
    value: float
    """Its metric (closed form; `replay` agrees)."""
    neighbourhoods: int
    improved: int
    seconds: float


def _weights(problem: Problem, jobs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer weights of the jobs' terms (bsld: 1,000 x the jobs' longest divisor / divisor, rounded; wait: 1) and
    each job's slack. Rounded weights only steer the search: what is kept is scored in closed form."""
    if problem.metric == "wait":
        return np.ones(len(jobs), np.int64), np.zeros(len(jobs), np.int64)
    divisor = problem.divisor[jobs].astype(np.float64)
    return np.round(1000 * divisor.max() / divisor).astype(np.int64), problem.slack[jobs].astype(np.int64)


def resolve(problem: Problem, start: np.ndarray, jobs: np.ndarray, latest: np.ndarray, limit: float,
            seed: int = 0, work: float | None = None) -> tuple[np.ndarray | None, str, float]:
    """The jobs `jobs` re-placed by CP-SAT with every other job fixed at `start`: (new start times of the whole window
    or None where CP-SAT found none, CP-SAT's status, the work units it used). `work`: CP-SAT's deterministic limit
    instead of `limit` seconds."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    free = np.zeros(problem.n, bool)
    free[jobs] = True
    weight, slack = _weights(problem, jobs)
    lo = int(problem.release[jobs].min())
    hi = int((np.maximum(latest[jobs], start[jobs]) + problem.duration[jobs]).max())
    others = np.flatnonzero(~free & (problem.duration > 0) & (start < hi) & (start + problem.duration > lo))
    variables, intervals, terms = [], [], []
    for k, j in enumerate(jobs):
        a = int(problem.release[j])
        s = model.NewIntVar(a, int(max(latest[j], start[j])), f"s{j}")
        model.AddHint(s, int(start[j]))
        variables.append(s)
        intervals.append(model.NewFixedSizeIntervalVar(s, int(problem.duration[j]), f"i{j}"))
        if slack[k] > 0:
            e = model.NewIntVar(0, int(max(latest[j], start[j])) - a, f"e{j}")
            model.Add(e >= s - (a + int(slack[k])))
            model.AddHint(e, max(0, int(start[j]) - a - int(slack[k])))
            terms.append(int(weight[k]) * e)
        else:
            terms.append(int(weight[k]) * s)
    for j in others:
        intervals.append(model.NewFixedSizeIntervalVar(int(start[j]), int(problem.duration[j]), f"f{j}"))
    demand = np.concatenate([problem.demand[jobs], problem.demand[others]])
    durations = np.concatenate([problem.duration[jobs], problem.duration[others]])
    for r in range(demand.shape[1]):
        used = np.flatnonzero((demand[:, r] > 0) & (durations > 0))
        if used.size and demand[used, r].sum() > problem.capacity[r]:
            model.AddCumulative([intervals[i] for i in used], [int(q) for q in demand[used, r]],
                                int(problem.capacity[r]))
    model.Minimize(sum(terms))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(limit) if work is None else 1e9
    if work is not None:
        solver.parameters.max_deterministic_time = float(work)
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(seed)
    status = solver.Solve(model)
    name = solver.StatusName(status)
    if name not in ("OPTIMAL", "FEASIBLE"):
        return None, name, solver.deterministic_time
    out = start.copy()
    out[jobs] = [solver.Value(s) for s in variables]
    return out, name, solver.deterministic_time


KINDS = ("slice", "costly")
"""The neighbourhoods, taken in turn: `slice`, jobs consecutive in start order from a random one; `costly`, a job drawn
by its term of the metric and the jobs that start between its arrival and its start (those that hold it back), then
the ones nearest in start time. `blocked` (not in the default turn): a job drawn by its term and every job that runs
at some instant between its arrival and its end (the ones that started before it arrived too), the nearest to its
arrival first."""


def neighbourhood(problem: Problem, start: np.ndarray, active: np.ndarray, size: int, kind: str,
                  rng: np.random.Generator) -> np.ndarray:
    """The positions of `size` jobs of `active` to re-place (`KINDS`)."""
    order = active[np.argsort(start[active], kind="stable")]
    if kind == "slice":
        anchor = int(rng.integers(0, order.size - size + 1))
        return np.sort(order[anchor:anchor + size])
    wait = (start - problem.release)[active].astype(np.float64)
    if problem.metric == "bsld":
        wait = np.maximum(wait - problem.slack[active], 0) / problem.divisor[active]
    if wait.sum() <= 0:
        anchor = int(rng.integers(0, order.size - size + 1))
        return np.sort(order[anchor:anchor + size])
    j = int(active[rng.choice(active.size, p=wait / wait.sum())])
    if kind == "blocked":
        a, end = problem.release[j], start[j] + problem.duration[j]
        running = (start[order] < end) & (start[order] + problem.duration[order] > a)
        chosen = order[np.lexsort((np.abs(start[order] - a), ~running))[:size]]
        if j not in chosen:
            chosen[-1] = j
        return np.sort(chosen)
    # the jobs starting in [arrival, start] of j, then outwards by start time from that span's middle
    middle = (problem.release[j] + start[j]) / 2
    reach = np.maximum(np.abs(start[order] - middle) - (start[j] - problem.release[j]) / 2, 0)
    chosen = order[np.argsort(reach, kind="stable")[:size]]
    if j not in chosen:
        chosen[-1] = j
    return np.sort(chosen)


def search(problem: Problem, start: np.ndarray, time_limit: float, *, seed: int = 0, size: int = SIZE,
           step: float = STEP, log: Callable[[str], None] | None = None, work: float | None = None,
           kinds: tuple[str, ...] = KINDS) -> Searched:
    """Large-neighbourhood search from the feasible schedule `start` for `time_limit` seconds (module docstring), or,
    with `work`, until CP-SAT has used that many of its deterministic work units (each neighbourhood at most
    `step` of them, the neighbourhoods' sizes adapting to the work, not the seconds): the same search at any load."""
    from schedrl.bound.cpsat import latest_starts

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    best = np.asarray(start, dtype=np.int64).copy()
    value = objective(problem, best)
    tried = improved = 0
    active = np.flatnonzero(problem.duration > 0)
    if active.size < 2:
        return Searched(start=best, value=value, neighbourhoods=0, improved=0, seconds=0.0)
    size = int(min(size, active.size))
    stats: dict[str, list[int]] = {}
    used = 0.0
    while (time.perf_counter() - t0 < time_limit) if work is None else (used < work):
        left = (time_limit - (time.perf_counter() - t0)) if work is None else (work - used)
        kind = kinds[tried % len(kinds)]
        jobs = neighbourhood(problem, best, active, int(min(size, active.size)), kind, rng)
        latest = latest_starts(problem, value)
        t1 = time.perf_counter()
        limit = min(step, max(left, 0.05))
        candidate, status, units = resolve(problem, best, jobs, latest, limit, seed=seed + tried,
                                           work=None if work is None else limit)
        used += max(units, 1e-3)  # a neighbourhood presolved away still counts: the search always ends
        spent = time.perf_counter() - t1 if work is None else units
        tried += 1
        gain = 0
        if candidate is not None and infeasible(problem, candidate) is None:
            v = objective(problem, candidate)
            if v < value - 1e-12:
                best, value, improved, gain = candidate, v, improved + 1, 1
            elif v <= value + 1e-12:
                best = candidate  # a sideways move: the same metric, another schedule to cut from
        stats.setdefault(kind, [0, 0, 0])
        stats[kind][0] += 1
        stats[kind][1] += gain
        stats[kind][2] += status == "OPTIMAL"
        if len(jobs) >= active.size and status == "OPTIMAL":
            break  # the whole window solved: nothing left to gain
        if status == "OPTIMAL" and spent < step / 4:
            size = min(SIZES[1], int(size * 1.25) + 1, active.size)
        elif status != "OPTIMAL":
            size = max(SIZES[0], int(size / 1.25))
        if log is not None and tried % 50 == 0:
            log(f"lns: {tried} neighbourhoods, {improved} improved, best {value:,.4f}, size {size}, "
                f"{time.perf_counter() - t0:.0f} s ({used:.0f} work units); " + ", ".join(f"{k} {v[0]} tried {v[1]} better {v[2]} optimal"
                                                                  for k, v in stats.items()))
    return Searched(start=best, value=value, neighbourhoods=tried, improved=improved,
                    seconds=time.perf_counter() - t0)
