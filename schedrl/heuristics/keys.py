"""Heuristic choices, compiled: one function serves the Python `pick` and the compiled run loop.

Priority keys are "lower runs first"; ties go to the earlier job in FCFS order (submit time, then
trace position), because the queue is scanned in that order and only a strictly better key wins.
The kind LINEAR is a rule fitted to a trace (`schedrl.heuristics.tuned`): its key is a coefficient
vector, passed beside the kind, times `linear_terms`; the other kinds ignore the coefficients.
"""

from __future__ import annotations

import math

import numpy as np
from schedrl.jit import njit

from schedrl.sim.backfill import fits_now
from schedrl.sim.engine import FINISHED, STUCK, advance, apply_backfill, apply_pick
from schedrl.sim.state import C_WINDOW, DECIDE_PICK, NOW, Q_LEN, RAND_POS

(FCFS, SJF, WFP3, UNICEP, F1, SAF, SMALLEST, LJF, WFP3_RLSCHED, UNICEP_RLSCHED, LARGEST,
 BINPACKING, RANDOM, TETRIS, TETRIS_STAR, OPTIMIZATION, LINEAR) = range(17)

LINEAR_TERMS = ("log10(r)*n", "log10(s)", "log10(r)", "log10(n)", "log10(1+w)", "log10(r)*log10(n)",
                "log10(1+w)*n", "log10(1+w)*log10(r)")
"""The LINEAR rule's features, in `linear_terms` order: r the requested time (estimate), n the processors, s the
submit time (floored at 1 s, as F1 floors it), w the wait so far. The first two are F1's terms, so F1 is the rule
(1, 870, 0, ...); log10(r) alone orders as SJF does."""

NO_COEFFICIENTS = np.zeros(len(LINEAR_TERMS))
"""The coefficients passed with the kinds other than LINEAR (unused)."""

# Tetris*: weight of the packing score against the SJF score (our reading of DeepRM §5's "Tetris*")
TETRIS_STAR_ALPHA = 0.5


@njit
def priority_key(kind, s, j, now, procs):
    """Key of job `j` (lower first). `procs` is the processor count (resource 0 may count nodes)."""
    submit = s.submit[j]
    est = s.est[j]
    n = procs[j]
    if kind == FCFS:
        return submit
    if kind == SJF:
        return est
    if kind == WFP3 or kind == WFP3_RLSCHED:
        # Tang et al. 2009: WFP3 = -(w / r)^3 * n; RLScheduler's code takes w = -1 - submit
        w = now - submit if kind == WFP3 else -1.0 - submit
        return -((w / est) ** 3) * n
    if kind == UNICEP or kind == UNICEP_RLSCHED:
        # Tang et al. 2009: UNICEP = -w / (log2(n) * r); log2(1) = 0 is floored so serial jobs rank first, not NaN
        w = now - submit if kind == UNICEP else -1.0 - submit
        return -w / (max(math.log2(n), 1e-9) * est)
    if kind == F1:
        # Carastan-Santos & de Camargo 2017 (RLScheduler Table V): log10(r) * n + 870 * log10(s)
        return math.log10(est) * n + 870.0 * math.log10(max(submit, 1.0))
    if kind == SAF:
        return est * n
    if kind == SMALLEST:
        return n
    if kind == LJF:
        return -est
    if kind == LARGEST:
        return -n
    return submit


@njit
def linear_terms(est, n, submit, now):
    """The values of `LINEAR_TERMS` for a job of estimate `est`, `n` processors and submit time `submit` at `now`."""
    log_r = math.log10(est)
    log_w = math.log10(1.0 + max(now - submit, 0.0))
    log_n = math.log10(n)
    return (log_r * n, math.log10(max(submit, 1.0)), log_r, log_n, log_w, log_r * log_n, log_w * n, log_w * log_r)


@njit
def linear_term_table(est, n, submit, now):
    """`linear_terms` of many jobs at once: one row per job, one column per `LINEAR_TERMS` entry."""
    out = np.empty((est.shape[0], len(LINEAR_TERMS)))
    for i in range(est.shape[0]):
        out[i] = linear_terms(est[i], n[i], submit[i], now[i])
    return out


@njit
def linear_key(coef, s, j, now, procs):
    """Key of job `j` under the LINEAR rule with coefficients `coef` (one per `LINEAR_TERMS` entry)."""
    t0, t1, t2, t3, t4, t5, t6, t7 = linear_terms(s.est[j], procs[j], s.submit[j], now)
    # summed in term order from F1's two, so F1's coefficients give F1's key to the bit
    return (coef[0] * t0 + coef[1] * t1 + coef[2] * t2 + coef[3] * t3 + coef[4] * t4 + coef[5] * t5
            + coef[6] * t6 + coef[7] * t7)


@njit
def _lowest_linear(coef, s, q, now, procs):
    # the scan at the end of `choose_rule` with the linear key: a branch on the kind inside that loop made every
    # heuristic 2-6x slower (numba does not hoist it), so the LINEAR kind has its own loop
    best = s.queue[0]
    best_key = linear_key(coef, s, best, now, procs)
    for k in range(1, q):
        j = s.queue[k]
        key = linear_key(coef, s, j, now, procs)
        if key < best_key:
            best_key = key
            best = j
    return best


@njit
def key_ranks(kind, s, jobs, now, procs):
    """Each of `jobs`' rank (0 = first) under a priority-key heuristic, ties to the earlier of `jobs` as in `choose`."""
    m = jobs.shape[0]
    key = np.empty(m)
    for i in range(m):
        key[i] = priority_key(kind, s, jobs[i], now, procs)
    order = np.argsort(key, kind="mergesort")  # stable: equal keys keep queue order
    ranks = np.empty(m, np.int64)
    for r in range(m):
        ranks[order[r]] = r
    return ranks


@njit
def _knapsack_pick(s, window, free0):
    # DRAS §IV-A Optimization: 0-1 knapsack over the window maximising the processors put to work
    cap = int(free0)
    m = window.shape[0]
    if cap <= 0 or m == 0:
        return -1
    best = np.zeros((m + 1, cap + 1), np.int64)
    for i in range(m):
        w = int(s.req[window[i], 0])
        for c in range(cap + 1):
            best[i + 1, c] = best[i, c]
            if w <= c and best[i, c - w] + w > best[i + 1, c]:
                best[i + 1, c] = best[i, c - w] + w
    # walk back; the earliest chosen job in queue order runs first
    c = cap
    chosen = -1
    for i in range(m - 1, -1, -1):
        if best[i + 1, c] != best[i, c]:
            chosen = window[i]
            c -= int(s.req[window[i], 0])
    return chosen


@njit
def choose(kind, s, procs, rand):
    """The job a heuristic picks from the visible queue (the whole queue, or the list window)."""
    return choose_rule(kind, NO_COEFFICIENTS, s, procs, rand)


@njit
def choose_rule(kind, coef, s, procs, rand):
    """`choose`, where kind LINEAR ranks by the linear rule with coefficients `coef`."""
    q = s.iv[Q_LEN]
    w = s.cfg[C_WINDOW]
    if w > 0 and w < q:
        q = w
    now = s.fv[NOW]
    if kind == RANDOM:
        n_fit = 0
        for k in range(q):
            if fits_now(s, s.queue[k]):
                n_fit += 1
        u = rand[s.iv[RAND_POS] % rand.shape[0]]
        s.iv[RAND_POS] += 1
        target = int(u * (n_fit if n_fit > 0 else q))
        for k in range(q):
            j = s.queue[k]
            if n_fit == 0 or fits_now(s, j):
                if target == 0:
                    return j
                target -= 1
        return s.queue[0]
    if kind == OPTIMIZATION:
        j = _knapsack_pick(s, s.queue[:q], s.free[0])
        return j if j >= 0 else s.queue[0]
    if kind == BINPACKING or kind == TETRIS or kind == TETRIS_STAR:
        best = -1
        best_score = -np.inf
        min_est = np.inf
        for k in range(q):
            min_est = min(min_est, s.est[s.queue[k]])
        for k in range(q):
            j = s.queue[k]
            if not fits_now(s, j):
                continue
            if kind == BINPACKING:
                score = s.req[j, 0]
            else:
                # DeepRM §5 Tetris: alignment of the request with the free resources, both normalised
                score = 0.0
                for r in range(s.cap.shape[0]):
                    score += (s.req[j, r] / s.cap[r]) * (s.free[r] / s.cap[r])
                if kind == TETRIS_STAR:
                    score = TETRIS_STAR_ALPHA * score + (1.0 - TETRIS_STAR_ALPHA) * (min_est / s.est[j])
            if score > best_score:
                best_score = score
                best = j
        return best if best >= 0 else s.queue[0]
    if kind == LINEAR:
        return _lowest_linear(coef, s, q, now, procs)
    best = s.queue[0]
    best_key = priority_key(kind, s, best, now, procs)
    for k in range(1, q):
        j = s.queue[k]
        key = priority_key(kind, s, j, now, procs)
        if key < best_key:
            best_key = key
            best = j
    return best


@njit
def run_heuristic(s, kind, procs, rand):
    """Run a heuristic to completion inside compiled code (backfill candidates first-fit)."""
    return run_rule(s, kind, NO_COEFFICIENTS, procs, rand)


@njit
def run_rule(s, kind, coef, procs, rand):
    """`run_heuristic`, where kind LINEAR ranks by the linear rule with coefficients `coef`."""
    while True:
        code = advance(s)
        if code == FINISHED or code == STUCK:
            return code
        if code == DECIDE_PICK:
            apply_pick(s, choose_rule(kind, coef, s, procs, rand))
        else:
            apply_backfill(s, s.cand[0])
