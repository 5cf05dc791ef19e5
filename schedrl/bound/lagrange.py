"""A lower bound from the Lagrangian relaxation of the capacities: every job non-preemptive and whole, each on its own.

Price each resource r at lambda_r(t) >= 0 per unit and second, piecewise constant on time slots. For any prices,

    L(lambda) = sum_j min_s [ f_j(s) + sum_r q_jr * (integral of lambda_r over [s, s + p_j)) ] - sum_r C_r * integral of lambda_r

is at most the window's optimum: the optimal schedule's starts are candidates for each job's minimum, and its usage is
within the capacity C_r at every instant, so its priced usage is at most C_r times the integral. f_j is the job's term
of the metric (bsld's max(1, 1 + (s - a_j - slack_j) / divisor_j), or the wait s - a_j), s ranges over
[a_j, latest_j] (`schedrl.bound.cpsat.latest_starts`: a schedule as good as the best found starts j by then). Unlike
the LP of `schedrl.bound.lp`, each job runs without a break, at its own width, for its whole duration, started at any
instant (not on the slots' grid): only the prices are coarse. g_j(s) is piecewise linear in s, with knots where s or
s + p_j meets a slot's boundary and at a_j + slack_j, so its minimum is at one of those.

The prices are raised where the minimising starts overfill a slot and lowered where they leave it idle (projected
subgradient ascent with Polyak steps toward the best schedule found); every iterate's value is a valid bound, and the
largest is kept. No solver is needed: numpy only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from schedrl.bound.problem import Problem


PATIENCE = 10
MIN_SCALE = 1e-4


@dataclass(frozen=True)
class LagrangeBound:
    lower: float
    """The largest L(lambda) seen, as the window's mean metric (at least the trivial bound)."""
    iterations: int
    seconds: float
    slots: int
    starts: list[np.ndarray] | None = None
    """Per job, the starts (rows of whole-second [first, last] intervals, the window's clock) that any schedule
    whose metric is at most `upper` can use: reduced-cost fixing at the best prices (`allowed`). None: not asked."""


def _candidates(a, latest, p, knots, bounds):
    """Per job (a, latest, p, knots = extra knots such as a + slack), the starts where g_j can be least: the domain's
    ends, the knots, and every s in the domain with s or s + p on a slot boundary. (owner, start), sorted by owner."""
    owners, starts = [], []
    for j in range(len(a)):
        lo, hi = a[j], latest[j]
        inside = bounds[(bounds > lo) & (bounds < hi)]
        shifted = bounds - p[j]
        shifted = shifted[(shifted > lo) & (shifted < hi)]
        extra = knots[j][(knots[j] > lo) & (knots[j] < hi)]
        s = np.unique(np.concatenate([[lo, hi], inside, shifted, extra]))
        owners.append(np.full(len(s), j))
        starts.append(s)
    return np.concatenate(owners), np.concatenate(starts)


def lagrangian_bound(problem: Problem, upper: float, slots: int = 256, iterations: int = 300,
                     until: int | None = None, time_limit: float = 120.0, fix: bool = False) -> LagrangeBound:
    """max over prices of L(lambda) (module docstring), by `iterations` steps of projected subgradient ascent (or
    `time_limit` seconds); `upper`, a schedule's metric, bounds each job's latest start and aims the steps; the prices'
    slots are `schedrl.bound.lp.grid`'s (`slots`, `until`). `fix`: each job's starts left after reduced-cost fixing
    at the best prices (`LagrangeBound.starts`)."""
    from schedrl.bound.cpsat import latest_starts
    from schedrl.bound.lp import grid

    t0 = time.perf_counter()
    n = problem.n
    floor = 1.0 if problem.metric == "bsld" else 0.0
    run = np.flatnonzero(problem.duration > 0)
    if run.size == 0:
        return LagrangeBound(lower=floor, iterations=0, seconds=0.0, slots=0)
    a = problem.release[run].astype(np.float64)
    p = problem.duration[run].astype(np.float64)
    latest = latest_starts(problem, upper)[run].astype(np.float64)
    q = problem.demand[run].astype(np.float64)  # (m, R)
    capacity = problem.capacity.astype(np.float64)
    bounds = grid(problem, int((latest + p).max()), slots, until)
    length = np.diff(bounds)
    K, R = len(length), q.shape[1]
    if problem.metric == "bsld":
        d = problem.divisor[run].astype(np.float64)
        knee = a + problem.slack[run]
    else:
        d, knee = np.ones(run.size), a.copy()
    owner, s = _candidates(a, latest, p, knee[:, None], bounds)
    f = np.maximum(floor, floor + (s - knee[owner]) / d[owner])  # each candidate's own term
    first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])  # each job's first candidate
    constant = floor * (n - run.size)
    # the best schedule found would set the step; its total is upper * n
    target = upper * n
    price = np.zeros((R, K))
    best, step_scale, stall = -np.inf, 1.0, 0
    best_g = best_mins = None
    steps = 0
    while steps < iterations:
        steps += 1
        cum = np.concatenate([np.zeros((R, 1)), np.cumsum(price * length, axis=1)], axis=1)  # (R, K + 1)
        priced = np.zeros(len(s))
        for r in range(R):
            priced += q[owner, r] * (np.interp(s + p[owner], bounds, cum[r]) - np.interp(s, bounds, cum[r]))
        g = f + priced
        mins = np.minimum.reduceat(g, first)
        value = float(mins.sum() - (capacity[:, None] * price * length).sum() + constant)
        if value > best + 1e-12:
            best, stall, best_g, best_mins = value, 0, g, mins
        else:
            stall += 1
            if stall >= PATIENCE:
                step_scale, stall = step_scale / 2, 0
        # each job's minimising start, and the usage it puts in each slot
        choice = np.minimum.reduceat(np.where(g <= np.repeat(mins, np.diff(np.r_[first, len(g)])) + 1e-12,
                                              np.arange(len(g)), len(g)), first)
        start = s[choice]
        overlap = np.clip(np.minimum(bounds[1:][None, :], (start + p)[:, None]) -
                          np.maximum(bounds[:-1][None, :], start[:, None]), 0, None)  # (m, K)
        usage = q.T @ overlap  # (R, K)
        grad = usage - capacity[:, None] * length
        grad = np.where((price <= 0) & (grad < 0), 0.0, grad)  # the projection's face
        norm = float((grad ** 2).sum())
        if norm <= 0 or time.perf_counter() - t0 > time_limit or step_scale < MIN_SCALE:
            break
        price = np.maximum(0.0, price + step_scale * max(target - value, 1e-9 * abs(target)) / norm * grad)
    starts = None
    if fix:
        starts = [np.array([[a, a]], np.int64) for a in problem.release]  # no duration: at its arrival
        # g_j(S_j) <= upper * n - best + min g_j for every job of a schedule of metric <= upper (`allowed`)
        room = target - best + best_mins
        ends = np.r_[first[1:], len(s)]
        for i, j in enumerate(run):
            starts[j] = allowed(s[first[i]:ends[i]], best_g[first[i]:ends[i]], room[i] + 1e-7 * max(1.0, target))
    return LagrangeBound(lower=max(floor, best / n), iterations=steps, seconds=time.perf_counter() - t0, slots=K,
                         starts=starts)


def allowed(s: np.ndarray, g: np.ndarray, threshold: float) -> np.ndarray:
    """The whole starts where the piecewise linear g (knots `s`, values `g`, linear between) is at most `threshold`,
    as rows [first, last] of intervals, each end rounded outwards (what the rounding adds is only more room)."""
    keep = g <= threshold
    rows: list[list[int]] = []
    for k in range(len(s)):
        lo = hi = None
        if keep[k]:
            lo = hi = s[k]
        if k + 1 < len(s) and (keep[k] or keep[k + 1]):
            # the part of the segment [s_k, s_k+1] under the threshold
            g0, g1 = g[k], g[k + 1]
            if keep[k] and keep[k + 1]:
                lo, hi = s[k], s[k + 1]
            elif keep[k]:
                lo, hi = s[k], s[k] + (threshold - g0) / (g1 - g0) * (s[k + 1] - s[k])
            else:
                lo, hi = s[k + 1] - (threshold - g1) / (g0 - g1) * (s[k + 1] - s[k]), s[k + 1]
        if lo is None:
            continue
        first, last = int(np.floor(lo)), int(np.ceil(hi))
        if rows and first <= rows[-1][1] + 1:
            rows[-1][1] = max(rows[-1][1], last)
        else:
            rows.append([first, last])
    return np.array(rows, np.int64).reshape(-1, 2)
