"""A lower bound from a time-indexed transportation LP with a rate limit (scipy's HiGHS, a core dependency).

Cut time into slots [b_k, b_k+1). Any non-preemptive schedule gives y[j, k] = the time job j runs in slot k. Then
sum_k y[j, k] = p_j (its duration); y[j, k] <= the part of slot k after j's arrival (and before the latest completion
a schedule as good as the best found allows it, `schedrl.bound.cpsat.latest_starts`); and for each resource
sum_j q_j y[j, k] <= capacity x slot length. Unlike the load-based bound's single fluid machine, a job never runs
faster than its own width allows: it needs at least p_j of time.

j's mean busy time is its start plus p_j / 2, and at least (1 / p_j) sum_k (y lo + y^2 / 2), lo = max(b_k, a_j): in a
slot, the time j spends there is earliest when it runs from lo without a break. y^2 / 2 is bounded below by its tangent
at the slot's largest y (epigraph variable s >= 0). So every schedule maps to an LP point whose objective is at most
its metric: per job, bsld's max(1, 1 + (S - a - slack) / max(p, 10)) and wait's S - a are convex and non-decreasing in
S, written as epigraph variables over the lower bound on S. The LP's optimum is a lower bound on the window's optimum.

The LP has one column per job and slot it may use: n x slots, about n^2 / 2 with a slot per arrival. `slots` caps the
slots (arrivals merged into coarser slots: still valid, looser).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from schedrl.bound.problem import Problem


@dataclass(frozen=True)
class LPBound:
    """What one LP solve gave."""

    lower: float
    """The lower bound on the window's mean metric (the trivial one where the LP was not solved)."""
    status: str
    """HiGHS's message, shortened: `optimal`, or why not."""
    seconds: float
    columns: int
    rows: int
    slots: int


def grid(problem: Problem, horizon: int, slots: int) -> np.ndarray:
    """Slot boundaries: the distinct arrivals (at most `slots` of them, evenly among the arrivals' order), then slots
    after the last arrival growing geometrically to `horizon` (the backlog's tail, where coarser slots cost little)."""
    arrivals = np.unique(problem.release)
    if len(arrivals) > slots:
        arrivals = np.unique(arrivals[np.linspace(0, len(arrivals) - 1, slots).round().astype(np.int64)])
    step = float(np.median(np.diff(arrivals))) if len(arrivals) > 1 else float(max(1, problem.duration.max()))
    step = max(step, 1.0)
    tail, at = [], float(arrivals[-1])
    while at < horizon:
        at = min(float(horizon), at + step)
        tail.append(at)
        step *= 1.15
    return np.unique(np.concatenate([arrivals.astype(np.float64), tail]))


def lp_bound(problem: Problem, upper: float, slots: int = 512, time_limit: float = 60.0) -> LPBound:
    """The LP's lower bound on the window's mean metric (module docstring). `upper`: a schedule's metric, which only
    narrows each job's slots (a better schedule completes every job before its latest start plus its duration)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    from schedrl.bound.cpsat import latest_starts

    t0 = time.perf_counter()
    n = problem.n
    run = np.flatnonzero(problem.duration > 0)  # jobs of no duration start at their arrival, at no cost
    a = problem.release.astype(np.float64)
    p = problem.duration.astype(np.float64)
    deadline = latest_starts(problem, upper).astype(np.float64) + p
    bounds = grid(problem, int(deadline[run].max()) if run.size else 1, slots)
    lo_k, hi_k = bounds[:-1], bounds[1:]
    K = len(lo_k)
    # columns y[j, k] for each job and slot it may run in (part of the slot in [a_j, deadline_j))
    first = np.searchsorted(hi_k, a[run], side="right")  # the first slot ending after a_j
    last = np.searchsorted(lo_k, deadline[run], side="left")  # slots starting before the deadline
    counts = np.maximum(last - first, 0)
    job = np.repeat(np.arange(run.size), counts)
    slot = np.concatenate([np.arange(f, f + c) for f, c in zip(first, counts)]) if run.size else np.zeros(0, int)
    jj = run[job]
    lo = np.maximum(lo_k[slot], a[jj])
    room = np.minimum(hi_k[slot], deadline[jj]) - lo
    cap = np.minimum(room, p[jj])  # the most j can run in the slot
    m = job.size
    # objective terms: per job, the lower bound on its start S_j >= (1/p) sum (y lo + s) - p/2, s >= cap y - cap^2/2
    # variables: y (m), s (m), z (run.size)
    nz = run.size
    metric = problem.metric
    if metric == "bsld":
        d = problem.divisor[run].astype(np.float64)
        base = a[run] + problem.slack[run] + p[run] / 2.0  # z >= 1 + (M - base) / d
    else:
        d = np.ones(nz)
        base = a[run] + p[run] / 2.0  # z >= M - base, z >= 0
    c = np.concatenate([np.zeros(2 * m), np.ones(nz)])
    rows, cols, vals, rhs_ub = [], [], [], []
    r = 0
    # (1) epigraph: (1/(p d)) sum_k (lo y + s) - z <= base / d - (1 if bsld else 0)
    rows += [job + r, job + r, np.arange(nz) + r]
    cols += [np.arange(m), m + np.arange(m), 2 * m + np.arange(nz)]
    vals += [lo / (p[jj] * d[job]), 1.0 / (p[jj] * d[job]), -np.ones(nz)]
    rhs_ub.append(base / d - (1.0 if metric == "bsld" else 0.0))
    r += nz
    # (2) s >= cap y - cap^2 / 2:  cap y - s <= cap^2 / 2
    rows += [np.arange(m) + r, np.arange(m) + r]
    cols += [np.arange(m), m + np.arange(m)]
    vals += [cap, -np.ones(m)]
    rhs_ub.append(cap ** 2 / 2.0)
    r += m
    # (3) capacity per resource and slot
    for res in range(problem.demand.shape[1]):
        q = problem.demand[jj, res].astype(np.float64)
        used = q > 0
        rows.append(r + slot[used])
        cols.append(np.flatnonzero(used))
        vals.append(q[used])
        rhs_ub.append(problem.capacity[res] * (hi_k - lo_k))
        r += K
    A_ub = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, 2 * m + nz))
    # (4) each job runs its duration
    A_eq = coo_matrix((np.ones(m), (job, np.arange(m))), shape=(nz, 2 * m + nz))
    var_bounds = np.zeros((2 * m + nz, 2))
    var_bounds[:, 1] = np.inf
    var_bounds[:m, 1] = np.minimum(room, p[jj])
    var_bounds[2 * m:, 0] = 1.0 if metric == "bsld" else 0.0
    res_ = linprog(c, A_ub=A_ub.tocsr(), b_ub=np.concatenate(rhs_ub), A_eq=A_eq.tocsr(), b_eq=p[run],
                   bounds=var_bounds, method="highs", options={"time_limit": float(time_limit)})
    seconds = time.perf_counter() - t0
    floor = 1.0 if metric == "bsld" else 0.0
    if res_.status != 0:
        return LPBound(lower=floor, status=str(res_.message).split(".")[0][:60], seconds=seconds,
                       columns=2 * m + nz, rows=r + nz, slots=K)
    # HiGHS's dual bound would be the safe side; the primal optimum of an LP solved to optimality equals it up to
    # its tolerances, taken off here relative to the value
    total = float(res_.fun) + floor * (n - nz)
    value = total / n * (1 - 1e-7)
    return LPBound(lower=max(floor, value), status="optimal", seconds=seconds, columns=2 * m + nz, rows=r + nz,
                   slots=K)
