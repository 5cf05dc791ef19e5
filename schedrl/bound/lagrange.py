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

`cut_bound` prices the same relaxation with more constraints, found where its LP breaks them: two jobs that cannot
run at once (q_ir + q_jr > C_r for a resource r) spend at most a slot's length in it between them, at every instant
at most one of them runs. The time-indexed LP lets a full-machine job run 255/256 of the way beside a one-processor
job; the pair's row forbids it. Each row is a capacity of its own (the pair's jobs priced mu per second in that slot,
the slot's length as the capacity): L stays a sum of each job's own minimum over its starts, now with a price per job
and slot, and a bound for any prices >= 0. The prices are HiGHS's duals of the LP over each job's candidate starts
(its columns are the same candidates as the subgradient's: between two of them each job's term and its time in each
slot are linear, so the LP is the Lagrangian dual exactly), re-solved with the broken pairs' rows added, a few rounds.
Whatever HiGHS returns, the bound is L evaluated at its duals, so a loose or inexact LP costs tightness, not validity.
With `covers`, a set of three or more jobs whose demands exceed the capacity gets a row too: at every instant all but
one of them at most, so their times in a slot add up to at most (k - 1) times its length; with `sets`, a slot's k
widest jobs whose t + 1 narrowest exceed it, at most t of them (t = 1: a clique).

`branch_bound` branches on the relaxation: every schedule starts a job by some second t or after it, so the lesser of
the two halves' bounds (the job's candidate starts held to each half) is a bound, and never under the whole's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from schedrl.bound.problem import Problem


PATIENCE = 10
MIN_SCALE = 1e-4
CUT_ROUNDS = 8
"""`cut_bound`'s LP solves after the first: each adds the pairs' rows the last one broke."""
BRANCH_ROUNDS = 2
"""`branch_bound`'s rounds of new rows in each branch, on top of its parent's."""
CUT_BATCH = 5000
"""At most this many rows per round, the most broken first."""


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
    cuts: int = 0
    """`cut_bound`: the rows (jobs that cannot all run at once, and a slot) its last LP had."""
    rows: tuple[tuple[int, tuple[int, ...], int], ...] = ()
    """`cut_bound`: its last LP's rows as (slot, jobs (indices among the jobs that run), how many of them at once)."""
    branch: tuple[int, int] | None = None
    """`cut_bound`: (job, t) where its best LP spreads the job's start most (by its term) on both sides of t + 1/2,
    for `branch_bound` to split there: starts up to t, and from t + 1. None: no job spread."""
    lp: object = field(default=None, repr=False, compare=False)
    """`cut_bound`: its LP (`schedrl.bound.pricing.PricingLP`), holding its last rows and basis."""


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


def _floor(problem: Problem) -> float:
    """The metric's least value for a job: bounded slowdown 1, wait 0."""
    return 1.0 if problem.metric == "bsld" else 0.0


@dataclass(frozen=True)
class _Relaxation:
    """The relaxation both bounds price (module docstring): the jobs that run, the price slots, and each job's candidate
    starts (`_candidates`) with its own term at each."""

    n: int
    floor: float
    run: np.ndarray
    """The jobs of positive duration (the others cost `floor` each: `constant`)."""
    p: np.ndarray
    q: np.ndarray
    """Demand per running job and resource, (m, R)."""
    capacity: np.ndarray
    bounds: np.ndarray
    """The slots' boundaries (`schedrl.bound.lp.grid`); `length` their lengths."""
    length: np.ndarray
    owner: np.ndarray
    """Per candidate, its job (an index into `run`), sorted; `s` its start, `f` the job's term there."""
    s: np.ndarray
    f: np.ndarray
    first: np.ndarray
    """Each job's first candidate."""
    lo: np.ndarray
    """Each job's earliest start (its arrival) and latest (`hi`: `schedrl.bound.cpsat.latest_starts` under the upper
    side), its candidates' domain."""
    hi: np.ndarray
    knee: np.ndarray
    """Where each job's term starts to grow (bsld: its arrival plus its slack; wait: its arrival), and by 1 / `divisor`
    per second from there."""
    divisor: np.ndarray

    @property
    def constant(self) -> float:
        return self.floor * (self.n - self.run.size)


def _relaxation(problem: Problem, upper: float, slots: int, until: int | None) -> _Relaxation | None:
    """The relaxation of `problem` for schedules of metric at most `upper` (which bounds each job's latest start), or
    None where no job runs."""
    from schedrl.bound.cpsat import latest_starts
    from schedrl.bound.lp import grid

    floor = _floor(problem)
    run = np.flatnonzero(problem.duration > 0)
    if run.size == 0:
        return None
    a = problem.release[run].astype(np.float64)
    p = problem.duration[run].astype(np.float64)
    latest = latest_starts(problem, upper)[run].astype(np.float64)  # never before the arrival
    bounds = grid(problem, int((latest + p).max()), slots, until)
    if problem.metric == "bsld":
        d = problem.divisor[run].astype(np.float64)
        knee = a + problem.slack[run]
    else:
        d, knee = np.ones(run.size), a.copy()
    owner, s = _candidates(a, latest, p, knee[:, None], bounds)
    return _Relaxation(n=problem.n, floor=floor, run=run, p=p, q=problem.demand[run].astype(np.float64),
                       capacity=problem.capacity.astype(np.float64), bounds=bounds, length=np.diff(bounds),
                       owner=owner, s=s, f=np.maximum(floor, floor + (s - knee[owner]) / d[owner]),
                       first=np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]), lo=a, hi=latest, knee=knee,
                       divisor=d)


def lagrangian_bound(problem: Problem, upper: float, slots: int = 256, iterations: int = 300,
                     until: int | None = None, time_limit: float = 120.0, fix: bool = False) -> LagrangeBound:
    """max over prices of L(lambda) (module docstring), by `iterations` steps of projected subgradient ascent (or
    `time_limit` seconds); `upper`, a schedule's metric, bounds each job's latest start and aims the steps; the prices'
    slots are `schedrl.bound.lp.grid`'s (`slots`, `until`). `fix`: each job's starts left after reduced-cost fixing
    at the best prices (`LagrangeBound.starts`)."""
    t0 = time.perf_counter()
    x = _relaxation(problem, upper, slots, until)
    if x is None:
        return LagrangeBound(lower=_floor(problem), iterations=0, seconds=0.0, slots=0)
    n, floor, run, p, q, capacity, bounds, length = x.n, x.floor, x.run, x.p, x.q, x.capacity, x.bounds, x.length
    owner, s, f, first, constant = x.owner, x.s, x.f, x.first, x.constant
    K, R = len(length), q.shape[1]
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
    # g_j(S_j) <= upper * n - best + min g_j for every job of a schedule of metric <= upper (`allowed`)
    starts = _fixing(problem, run, s, first, best_g, best_mins, target, best) if fix else None
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


def _fixing(problem: Problem, run: np.ndarray, s: np.ndarray, first: np.ndarray, g: np.ndarray, mins: np.ndarray,
            target: float, best: float) -> list[np.ndarray]:
    """Reduced-cost fixing (`LagrangeBound.starts`) from one price vector's terms g (per candidate start `s`, jobs
    `run` from their `first` candidate on), their minima, and its value `best` (the sum, not the mean)."""
    starts = [np.array([[a, a]], np.int64) for a in problem.release]  # no duration: at its arrival
    room = target - best + mins
    ends = np.r_[first[1:], len(s)]
    for i, j in enumerate(run):
        starts[j] = allowed(s[first[i]:ends[i]], g[first[i]:ends[i]], room[i] + 1e-7 * max(1.0, target))
    return starts


def _broken_rows(share: np.ndarray, q: np.ndarray, capacity: np.ndarray, wide, covers: bool, sets: bool = False
                 ) -> list[tuple[float, int, tuple[int, ...], int]]:
    """The rows of jobs that cannot all run at once that an LP solution breaks, as (by how much, a share of the slot;
    slot; jobs; how many of them can run at once): every pair of `wide`'s (resource, its jobs wider than half of it)
    with a partner it cannot run beside, and with `covers` one set of three or more jobs per slot and resource, found
    greedily. With `sets`, per slot and resource also the most broken of the sets of the slot's widest jobs (the k
    widest, for every k): where the t + 1 narrowest of a set exceed the capacity, at most t of it run at once (t = 1:
    a clique). `share`: each job's time in each slot over the slot's length, (m, K)."""
    R, K = q.shape[1], share.shape[1]
    found: list[tuple[float, int, tuple[int, ...]]] = []
    for r, heavy in wide:
        for i in heavy:
            partner = np.flatnonzero(q[:, r] > capacity[r] - q[i, r])
            partner = partner[partner != i]
            over = share[i][None, :] + share[partner] - 1.0
            jj, kk = np.nonzero(over > 1e-6)
            found += [(float(over[x, k]), int(k), tuple(sorted((int(i), int(partner[x])))), 1) for x, k in zip(jj, kk)]
    covered: list[tuple[float, int, tuple[int, ...], int]] = []
    widest: list[tuple[float, int, tuple[int, ...], int]] = []
    for r in range(R) if covers or sets else ():
        for k in range(K):
            y = share[:, k]
            active = np.flatnonzero((y > 1e-9) & (q[:, r] > 0))
            if q[active, r].sum() <= capacity[r]:
                continue
            if covers:
                # the cheapest cover, greedily: least (1 - y) per unit of demand first, then drop what it can spare
                order = active[np.argsort((1 - y[active]) / q[active, r], kind="stable")]
                cover = list(order[:int(np.searchsorted(np.cumsum(q[order, r]), capacity[r], "right")) + 1])
                for i in sorted(cover, key=lambda i: -(1 - y[i])):
                    if q[cover, r].sum() - q[i, r] > capacity[r]:
                        cover.remove(i)
                over = 1.0 - float((1 - y[cover]).sum())
                if len(cover) >= 3 and over > 1e-6:
                    covered.append((over, k, tuple(sorted(int(i) for i in cover)), len(cover) - 1))
            if sets and active.size >= 2:
                order = active[np.argsort(-q[active, r], kind="stable")]
                width, load = q[order, r], np.cumsum(y[order])
                best = None
                for size in range(2, order.size + 1):
                    # the prefix's narrowest jobs first: at most t of them fit at once
                    t = int(np.searchsorted(np.cumsum(width[:size][::-1]), capacity[r], "right"))
                    over = float(load[size - 1]) - t
                    if t < size and over > 1e-6 and (best is None or over > best[0]):
                        best = (over, size, t)
                if best is not None:
                    widest.append((best[0], k, tuple(sorted(int(i) for i in order[:best[1]])), best[2]))
    found += covered + widest  # in the order the two kinds were always found: every cover, then every set
    return found


def cut_bound(problem: Problem, upper: float, slots: int = 256, until: int | None = None, time_limit: float = 30.0,
              fix: bool = False, rounds: int = CUT_ROUNDS, covers: bool = False, sets: bool = False,
              domains: dict[int, tuple[int, int]] | None = None,
              rows: tuple[tuple[int, tuple[int, ...], int], ...] = ()) -> LagrangeBound:
    """L at the prices of the LP dual of the relaxation with conflicting pairs' rows (module docstring): the first LP
    solve is the Lagrangian dual itself; each of up to `rounds` more adds the rows of the pairs its solution breaks
    (at most `time_limit` seconds in all, HiGHS's own limit included). `covers`: also rows for sets of three or more
    jobs whose demands exceed a capacity (at most all but one of them at once), one per slot and resource, found
    greedily. `sets`: also rows for the widest jobs of a slot, at most as many at once as fit (`_broken_rows`).
    `domains`: jobs (the problem's indices) held to starts [first, last]. `rows`: rows to start from (slot, jobs, how
    many at once; `LagrangeBound.rows` of another call on the same window and slots). `LagrangeBound.iterations`
    counts the LP solves; `fix` as in `lagrangian_bound`. The LP (`schedrl.bound.pricing.PricingLP`) is kept in
    `LagrangeBound.lp`, for `branch_bound` to go on from."""
    from schedrl.bound.pricing import PricingLP

    t0 = time.perf_counter()
    x = _relaxation(problem, upper, slots, until)
    if x is None:
        return LagrangeBound(lower=_floor(problem), iterations=0, seconds=0.0, slots=0)
    lp = PricingLP(x, upper * problem.n)
    lp.add_rows([row for row in rows if row[0] < len(x.length)])
    lp.hold(_held(x, domains or {}))
    return _rounds(problem, lp, rounds, time_limit, t0, covers, sets, fix)


def _held(x: _Relaxation, domains: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """`domains` by the problem's job indices, by the relaxation's (its running jobs; a job of no duration has none)."""
    out = {}
    for j, domain in domains.items():
        i = int(np.searchsorted(x.run, j))
        if i < x.run.size and x.run[i] == j:
            out[i] = domain
    return out


def _rounds(problem: Problem, lp, rounds: int, time_limit: float, t0: float, covers: bool, sets: bool,
            fix: bool) -> LagrangeBound:
    """Up to `rounds` + 1 solves of `lp` as it holds now, each after the first with the rows the last one broke (at
    most `CUT_BATCH`, the most broken first), within `time_limit` seconds from `t0`: L's best, as `cut_bound` says."""
    x = lp.x
    wide = [(r, np.flatnonzero(2 * x.q[:, r] > x.capacity[r])) for r in range(x.q.shape[1])]
    best, solves = None, 0
    for _ in range(rounds + 1):
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0:
            break
        priced = lp.solve(left)
        if priced is None:  # HiGHS stopped without an optimum: the prices so far stand
            break
        solves += 1
        if best is None or priced.value > best.value:
            best = priced
        found = _broken_rows(lp.usage(priced.weights), x.q, x.capacity, wide, covers, sets)
        kept: dict[tuple[int, tuple[int, ...]], int] = {}
        for _over, k, jobs, most in sorted(found, key=lambda c: -c[0]):
            if (k, jobs) not in lp.seen and (k, jobs) not in kept and len(kept) < CUT_BATCH:
                kept[(k, jobs)] = most
        if not kept:
            break
        lp.add_rows([(k, jobs, most) for (k, jobs), most in kept.items()])
    seconds = time.perf_counter() - t0
    if best is None:
        return LagrangeBound(lower=x.floor, iterations=0, seconds=seconds, slots=len(x.length))
    starts = None
    if fix:  # the allowed candidates by job and start, as `_fixing` reads them
        order = np.flatnonzero(np.isfinite(best.g))
        order = order[np.lexsort((lp.s[order], lp.owner[order]))]
        owner = lp.owner[order]
        starts = _fixing(problem, x.run, lp.s[order], np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]),
                         best.g[order], best.mins, lp.target, best.value)
    return LagrangeBound(lower=max(x.floor, best.value / problem.n), iterations=solves, seconds=seconds,
                         slots=len(x.length), starts=starts, cuts=len(lp.row_slot),
                         branch=_spread(x.run, lp.owner, lp.s, lp.f, best.weights), rows=tuple(lp.rows), lp=lp)


def _spread(run: np.ndarray, owner: np.ndarray, s: np.ndarray, f: np.ndarray, x: np.ndarray) -> tuple[int, int] | None:
    """The job whose start the LP solution x (over the candidates: `owner`, start `s`, term `f`) spreads most, by the
    mean distance of its terms from their mean, with its mean start t (rounded down), where it has weight on both
    sides of [t, t + 1) (`LagrangeBound.branch`); None where every job has one start. Split at the mean, neither half
    keeps the LP's solution for the job; split where its weight is halved instead, the half with the heavier end
    moved it by a second, and the branching split the same job a second at a time (docs/experiments/bound.md)."""
    mean = np.bincount(owner, weights=x * f, minlength=run.size)
    spread = np.bincount(owner, weights=x * np.abs(f - mean[owner]), minlength=run.size)
    for i in np.argsort(-spread, kind="stable"):
        if spread[i] <= 1e-9:
            return None
        cols = np.flatnonzero((owner == i) & (x > 1e-9))
        t = int(np.floor(x[cols] @ s[cols] / x[cols].sum()))
        if s[cols].min() <= t and s[cols].max() >= t + 1:  # weight at or under t, and from t + 1 on
            return int(run[i]), t
    return None


def branch_bound(problem: Problem, upper: float, slots: int = 256, until: int | None = None,
                 time_limit: float = 30.0, rounds: int = CUT_ROUNDS, covers: bool = False, sets: bool = False,
                 root: LagrangeBound | None = None, nodes: int | None = None,
                 branch_rounds: int = BRANCH_ROUNDS, log: Callable[[str], None] | None = None,
                 every: float = 60.0) -> tuple[float, int]:
    """`cut_bound` branched on the jobs its LP spreads (`LagrangeBound.branch`), best first: the least bound's branch
    is split into the starts up to t and those from t + 1 of its spread job, each half bounded by the same LP held to
    it (`schedrl.bound.pricing.PricingLP.hold`, solved from the last basis, or its parent's bound, where that is
    higher or the LP stops short; where no schedule as good as `upper` is in it, the elastic columns' prices pass
    `upper`), with `branch_rounds` rounds of new rows. Every schedule, the optimum among them, starts that job in one
    half, so the least bound over the open branches is a lower bound on the optimum, and it never falls. `root`:
    `cut_bound`'s result on the whole window, if already made. At most `time_limit` seconds (or `nodes` branches
    bounded): (the bound, as the window's mean metric, capped at `upper`; branches bounded). `log`: a progress line
    every `every` seconds."""
    import heapq

    t0 = time.perf_counter()
    left = lambda: time_limit - (time.perf_counter() - t0)  # noqa: E731
    if root is None or root.lp is None:
        root = cut_bound(problem, upper, slots=slots, until=until, time_limit=max(left(), 0.0), rounds=rounds,
                         covers=covers, sets=sets, rows=() if root is None else root.rows)
    if root.iterations == 0:
        return min(root.lower, upper), 0
    lp = root.lp
    lp.hold({})
    again = lp.solve(max(left(), 1.0))  # the root's LP again, from its own basis
    if again is not None:
        lp.fix(again)
    open_ = [(min(root.lower, upper), 0, {}, root.branch, lp.basis())]
    made, said = 0, time.perf_counter()
    while open_ and left() > 0 and (nodes is None or made < nodes):
        if log is not None and time.perf_counter() - said >= every:
            said = time.perf_counter()
            log(f"branching: {made} branches, bound {min(open_[0][0], upper):,.4f}, "
                f"{said - t0:.0f} s of {time_limit:.0f} s")
        value, _, domains, branch, basis = open_[0]
        if branch is None or value >= upper:
            break  # nothing to split in the least branch: its bound is the bound
        heapq.heappop(open_)
        j, t = branch
        first, last = domains.get(j, (int(problem.release[j]), np.iinfo(np.int64).max // 4))
        for part in ((first, t), (t + 1, last)):
            child = {**domains, j: part}
            made += 1
            if not lp.hold(_held(lp.x, child)):  # the root's fixing leaves a job no start here: no schedule as
                heapq.heappush(open_, (upper, made, child, None, basis))  # good as `upper` is in this half
                continue
            lp.restore(basis)  # the parent's optimal basis: a few pivots from the child's
            c = _rounds(problem, lp, branch_rounds, max(left(), 1.0), time.perf_counter(), covers, sets, False)
            ok = c.iterations > 0
            heapq.heappush(open_, (min(max(c.lower if ok else value, value), upper), made, child,
                                   c.branch if ok else None, lp.basis() if ok else basis))
    return min(open_[0][0], upper), made
