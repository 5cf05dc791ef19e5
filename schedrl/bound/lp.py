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


def grid(problem: Problem, horizon: int, slots: int, until: int | None = None) -> np.ndarray:
    """Slot boundaries (any grid keeps the bound valid; a finer one tightens it where the machine is busy): the
    distinct arrivals (at most `slots` of them, evenly among the arrivals' order); then `slots` / 2 even slots from the
    last arrival to `until` (a schedule's last completion: where the backlog drains); then slots growing geometrically
    to `horizon`."""
    arrivals = np.unique(problem.release).astype(np.float64)
    if len(arrivals) > slots:
        arrivals = np.unique(arrivals[np.linspace(0, len(arrivals) - 1, slots).round().astype(np.int64)])
    last = float(arrivals[-1])
    edges = [arrivals]
    if until is not None and until > last:
        edges.append(np.linspace(last, float(min(until, horizon)), max(2, slots // 2 + 1))[1:])
        last = float(min(until, horizon))
    step = float(np.median(np.diff(np.concatenate(edges)))) if sum(map(len, edges)) > 1 else 1.0
    step = max(step, 1.0, float(np.median(problem.duration)))
    tail, at = [], last
    while at < horizon:
        at = min(float(horizon), at + step)
        tail.append(at)
        step *= 1.15
    return np.unique(np.concatenate(edges + [np.asarray(tail, np.float64)]))


class _Rows:
    """A sparse LP assembled block by block: rows of A_ub x <= b_ub and A_eq x = b_eq."""

    def __init__(self) -> None:
        self.ub: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.b_ub: list[np.ndarray] = []
        self.eq: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.b_eq: list[np.ndarray] = []
        self.n_ub = self.n_eq = 0

    def add(self, rows, cols, vals, rhs, equal: bool = False) -> None:
        """Rows numbered 0.. within the block (`rhs` one value per row)."""
        rhs = np.asarray(rhs, dtype=np.float64)
        offset = self.n_eq if equal else self.n_ub
        entry = (np.asarray(rows, np.int64) + offset, np.asarray(cols, np.int64), np.asarray(vals, np.float64))
        (self.eq if equal else self.ub).append(entry)
        (self.b_eq if equal else self.b_ub).append(rhs)
        if equal:
            self.n_eq += len(rhs)
        else:
            self.n_ub += len(rhs)

    def matrix(self, which, shape_cols: int):
        from scipy.sparse import coo_matrix

        blocks = self.eq if which == "eq" else self.ub
        rows = self.n_eq if which == "eq" else self.n_ub
        if not blocks:
            return None, None
        r, c, v = (np.concatenate([b[i] for b in blocks]) for i in range(3))
        rhs = np.concatenate(self.b_eq if which == "eq" else self.b_ub)
        return coo_matrix((v, (r, c)), shape=(rows, shape_cols)).tocsr(), rhs


def _ranges(first: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, index) of every element of the ranges [first_i, first_i + counts_i)."""
    owner = np.repeat(np.arange(len(first)), counts)
    offsets = np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, np.repeat(first, counts) + offsets


def lp_bound(problem: Problem, upper: float, slots: int = 512, time_limit: float = 60.0, starts: bool = False,
             wide: bool = True, until: int | None = None) -> LPBound:
    """The LP's lower bound on the window's mean metric (module docstring). `upper`: a schedule's metric, which only
    narrows each job's slots (a better schedule completes every job before its latest start plus its duration);
    `until` (that schedule's last completion) where the even slots after the last arrival end (`grid`). `wide`: at
    most m jobs wider than capacity / (m + 1) run at once (m = 1, 2, 3). `starts`: each job's start slot as a
    distribution too, which ties its time in each slot to where it starts (non-preemption, fractionally)."""
    from scipy.optimize import linprog

    from schedrl.bound.cpsat import latest_starts

    t0 = time.perf_counter()
    n = problem.n
    run = np.flatnonzero(problem.duration > 0)  # jobs of no duration start at their arrival, at no cost
    nz = run.size
    floor = 1.0 if problem.metric == "bsld" else 0.0
    if nz == 0:
        return LPBound(lower=floor, status="optimal", seconds=0.0, columns=0, rows=0, slots=0)
    a = problem.release[run].astype(np.float64)
    p = problem.duration[run].astype(np.float64)
    latest = latest_starts(problem, upper)[run].astype(np.float64)
    deadline = latest + p
    bounds = grid(problem, int(deadline.max()), slots, until)
    lo_k, hi_k = bounds[:-1], bounds[1:]
    K = len(lo_k)
    # y[j, k]: the time j runs in slot k, for the slots meeting [a_j, deadline_j)
    first = np.searchsorted(hi_k, a, side="right")
    last = np.searchsorted(lo_k, deadline, side="left")
    job, slot = _ranges(first, np.maximum(last - first, 0))
    lo = np.maximum(lo_k[slot], a[job])
    room = np.minimum(hi_k[slot], deadline[job]) - lo
    cap = np.minimum(room, p[job])  # the most j can run in the slot
    m = job.size
    Y, S, Z = 0, m, 2 * m  # column offsets: y, s (the tangent epigraph), z (each job's term)
    columns = 2 * m + nz
    if problem.metric == "bsld":
        d = problem.divisor[run].astype(np.float64)
        base = a + problem.slack[run]  # z >= 1 + (S - base) / d
    else:
        d = np.ones(nz)
        base = a  # z >= S - base
    lp = _Rows()
    # S_j >= (1/p) sum_k (lo y + s) - p / 2, so z >= floor + ((1/p) sum (lo y + s) - p/2 - base) / d
    lp.add(np.concatenate([job, job, np.arange(nz)]), np.concatenate([Y + np.arange(m), S + np.arange(m), Z +
                                                                     np.arange(nz)]),
           np.concatenate([lo / (p[job] * d[job]), 1.0 / (p[job] * d[job]), -np.ones(nz)]),
           (base + p / 2.0) / d - floor)
    # s >= cap y - cap^2 / 2
    lp.add(np.concatenate([np.arange(m)] * 2), np.concatenate([Y + np.arange(m), S + np.arange(m)]),
           np.concatenate([cap, -np.ones(m)]), cap ** 2 / 2.0)
    length = hi_k - lo_k
    for r in range(problem.demand.shape[1]):
        q = problem.demand[run, r].astype(np.float64)[job]
        used = q > 0
        lp.add(slot[used], Y + np.flatnonzero(used), q[used], problem.capacity[r] * length)
        if wide:
            for k in (1, 2, 3):
                big = q > problem.capacity[r] / (k + 1)
                if big.any():
                    lp.add(slot[big], Y + np.flatnonzero(big), np.ones(int(big.sum())), k * length)
    lp.add(job, Y + np.arange(m), np.ones(m), p, equal=True)  # each job runs its duration
    col_lo = np.zeros(columns)
    col_hi = np.full(columns, np.inf)
    col_hi[Y:Y + m] = cap
    col_lo[Z:Z + nz] = floor
    if starts:
        columns = _start_rows(lp, problem, run, a, p, latest, lo_k, hi_k, job, slot, cap, base, d, floor, columns)
        col_lo = np.concatenate([col_lo, np.zeros(columns - len(col_lo))])
        col_hi = np.concatenate([col_hi, np.ones(columns - len(col_hi))])
    A_ub, b_ub = lp.matrix("ub", columns)
    A_eq, b_eq = lp.matrix("eq", columns)
    c = np.zeros(columns)
    c[Z:Z + nz] = 1.0
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=np.stack([col_lo, col_hi], axis=1),
                  method="highs", options={"time_limit": float(time_limit)})
    seconds = time.perf_counter() - t0
    shape = dict(columns=columns, rows=lp.n_ub + lp.n_eq, slots=K)
    if res.status != 0:
        return LPBound(lower=floor, status=str(res.message).split(".")[0][:60], seconds=seconds, **shape)
    # the primal optimum of an LP solved to optimality equals its dual bound up to HiGHS's tolerances (1e-7),
    # taken off here relative to the value
    total = float(res.fun) + floor * (n - nz)
    return LPBound(lower=max(floor, total / n * (1 - 1e-6)), status="optimal", seconds=seconds, **shape)


def _start_rows(lp: _Rows, problem: Problem, run, a, p, latest, lo_k, hi_k, job, slot, cap, base, d, floor,
                columns: int) -> int:
    """x[j, k] = 1 where j starts in slot k: sum_k x = 1; S_j >= sum_k x (j's earliest start in slot k); and j's time in
    slot m at least what every start in slot k surely runs there ([k's last start, k's first start + p)) and at most
    what some start could. Starts are whole seconds (`Problem`): a slot's are ceil(max(lo, a_j)) to
    min(ceil(hi) - 1, latest_j), and a slot holding none gets no column. Returns the new column count."""
    nz = run.size
    sfirst = np.searchsorted(hi_k, a, side="right")
    slast = np.searchsorted(lo_k, latest, side="right")  # slots starting at or before the latest start
    sj, sk = _ranges(sfirst, np.maximum(slast - sfirst, 0))
    s_lo = np.ceil(np.maximum(lo_k[sk], a[sj]))  # the slot's first whole start for j
    s_last = np.minimum(np.ceil(hi_k[sk]) - 1, latest[sj])  # and its last
    keep = s_last >= s_lo
    sj, sk, s_lo, s_last = sj[keep], sk[keep], s_lo[keep], s_last[keep]
    s_hi = s_last + 1  # starts in [s_lo, s_hi), whole seconds
    X = columns
    mx = sj.size
    lp.add(sj, X + np.arange(mx), np.ones(mx), np.ones(nz), equal=True)
    lp.add(np.concatenate([sj, np.arange(nz)]), np.concatenate([X + np.arange(mx), np.arange(nz) + 2 * len(job)]),
           np.concatenate([s_lo / d[sj], -np.ones(nz)]), base / d - floor)
    # linking, job by job: y[j, m] >= sum_k sure(k, m) x[j, k], y[j, m] <= sum_k maybe(k, m) x[j, k]
    ycol = np.arange(len(job))
    r_sure, c_sure, v_sure, r_may, c_may, v_may = [], [], [], [], [], []
    ybounds = np.searchsorted(job, np.arange(nz + 1))
    xbounds = np.searchsorted(sj, np.arange(nz + 1))
    for j in range(nz):
        ys = slice(ybounds[j], ybounds[j + 1])
        xs = slice(xbounds[j], xbounds[j + 1])
        ylo, yhi = lo_k[slot[ys]], hi_k[slot[ys]]
        klo, khi = s_lo[xs], s_hi[xs]
        sure = np.clip(np.minimum(klo[:, None] + p[j], yhi[None, :]) - np.maximum(khi[:, None] - 1, ylo[None, :]),
                       0, None)
        may = np.clip(np.minimum(khi[:, None] - 1 + p[j], yhi[None, :]) - np.maximum(klo[:, None], ylo[None, :]),
                      0, None)
        may = np.minimum(may, cap[ys][None, :])
        for mat, rr, cc, vv in ((sure, r_sure, c_sure, v_sure), (may, r_may, c_may, v_may)):
            kk, mm = np.nonzero(mat)
            rr.append(ycol[ys][mm])
            cc.append(X + xbounds[j] + kk)
            vv.append(mat[kk, mm])
    m = len(job)
    # sum_k sure x - y <= 0
    lp.add(np.concatenate(r_sure + [np.arange(m)]), np.concatenate(c_sure + [np.arange(m)]),
           np.concatenate(v_sure + [-np.ones(m)]), np.zeros(m))
    # y - sum_k maybe x <= 0
    lp.add(np.concatenate(r_may + [np.arange(m)]), np.concatenate(c_may + [np.arange(m)]),
           np.concatenate([-v for v in v_may] + [np.ones(m)]), np.zeros(m))
    return columns + mx
