"""Backfilling: which queued jobs may start now without delaying the blocked job.

- `easy` (Lifka 1995; Mu'alem & Feitelson 2001): the blocked job is reserved at its shadow time
  (when enough resources free up, by the running jobs' estimates). A candidate may start if it fits
  now and either ends by the shadow time or uses only the resources the reservation leaves spare
  at the shadow time (the "extra" resources), in every resource dimension.
- `conservative` (Mu'alem & Feitelson 2001): every queued job, blocked job first then queue order,
  gets a reservation in an availability profile; a job starts now only if its reservation is now,
  so no earlier reservation is delayed.
- `rlscheduler`: the variant in RLScheduler's released code (SchedGym). The shadow time is computed
  once, when the job blocks, from running jobs ordered by start + requested time, counting resource
  0 only; afterwards any queued job (FCFS order) that fits now and ends strictly before that shadow
  time starts. There is no extra-resources rule and the shadow time is not updated as jobs finish
  early, so it backfills less than EASY. Kept to reproduce RLScheduler's published tables.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from schedrl.sim.state import BF_CONSERVATIVE, BF_EASY, BF_RLSCHEDULER, C_BACKFILL, HEAP_LEN, N_CAND, NOW, Q_LEN, SHADOW

EPS = 1e-9


@njit(cache=True)
def fits_in(s, j, avail):
    for r in range(avail.shape[0]):
        if s.req[j, r] > avail[r] + EPS:
            return False
    return True


@njit(cache=True)
def fits_now(s, j):
    return fits_in(s, j, s.free)


@njit(cache=True)
def _running_by_estimated_end(s, clamp):
    # estimated end of each running job (at least `now` when clamped: an overdue job may end any moment)
    h = s.iv[HEAP_LEN]
    now = s.fv[NOW]
    for k in range(h):
        j = s.heap_j[k]
        e = s.start[j] + s.est[j]
        s.work[k] = max(e, now) if clamp else e
        s.iwork[k] = j
    return np.argsort(s.work[:h], kind="mergesort"), h


@njit(cache=True)
def easy_shadow(s, blocked):
    """Shadow time of `blocked`; leaves the spare capacity at that time in `s.extra`."""
    order, h = _running_by_estimated_end(s, True)
    avail = s.extra
    avail[:] = s.free
    shadow = s.fv[NOW]
    k = 0
    while k < h and not fits_in(s, blocked, avail):
        shadow = s.work[order[k]]
        # every job estimated to end at this same instant frees its resources too
        while k < h and s.work[order[k]] == shadow:
            avail += s.req[s.iwork[order[k]]]
            k += 1
    avail -= s.req[blocked]
    return shadow


@njit(cache=True)
def rlscheduler_shadow(s, blocked):
    """SchedGym's earliest start time of `blocked`: resource 0 only, estimates unclamped."""
    order, h = _running_by_estimated_end(s, False)
    free0 = s.free[0]
    shadow = s.fv[NOW]
    for k in range(h):
        free0 += s.req[s.iwork[order[k]], 0]
        shadow = s.work[order[k]]
        if free0 >= s.req[blocked, 0]:
            break
    return shadow


@njit(cache=True)
def _profile_build(s):
    order, h = _running_by_estimated_end(s, True)
    s.prof_t[0] = s.fv[NOW]
    s.prof_f[0] = s.free
    p = 1
    for k in range(h):
        t = s.work[order[k]]
        j = s.iwork[order[k]]
        if t > s.prof_t[p - 1]:
            s.prof_t[p] = t
            s.prof_f[p] = s.prof_f[p - 1]
            p += 1
        s.prof_f[p - 1] += s.req[j]
    return p


@njit(cache=True)
def _profile_split(s, p, t):
    # make `t` a breakpoint of the profile; returns (its index, new length)
    k = 0
    while k < p and s.prof_t[k] < t:
        k += 1
    if k < p and s.prof_t[k] == t:
        return k, p
    for m in range(p, k, -1):
        s.prof_t[m] = s.prof_t[m - 1]
        s.prof_f[m] = s.prof_f[m - 1]
    s.prof_t[k] = t
    s.prof_f[k] = s.prof_f[k - 1]
    return k, p + 1


@njit(cache=True)
def _profile_reserve(s, p, j):
    """Earliest profile point where `j` fits for its whole estimate; reserve it there. Returns (start, p)."""
    dur = s.est[j]
    for k in range(p):
        t0 = s.prof_t[k]
        ok = True
        m = k
        while m < p and s.prof_t[m] < t0 + dur:
            if not fits_in(s, j, s.prof_f[m]):
                ok = False
                break
            m += 1
        if ok:
            k0, p = _profile_split(s, p, t0)
            k1, p = _profile_split(s, p, t0 + dur)
            for m in range(k0, k1):
                s.prof_f[m] -= s.req[j]
            return t0, p
    return np.inf, p


@njit(cache=True)
def compute_candidates(s, blocked):
    """Fill `s.cand` with the queued jobs that may start now without delaying `blocked`."""
    mode = s.cfg[C_BACKFILL]
    now = s.fv[NOW]
    n_cand = 0
    if mode == BF_CONSERVATIVE:
        p = _profile_build(s)
        _, p = _profile_reserve(s, p, blocked)
        for k in range(s.iv[Q_LEN]):
            j = s.queue[k]
            if j == blocked:
                continue
            t0, p = _profile_reserve(s, p, j)
            if t0 == now and fits_now(s, j):
                s.cand[n_cand] = j
                n_cand += 1
    else:
        if mode == BF_EASY:
            shadow = easy_shadow(s, blocked)
        else:
            shadow = s.fv[SHADOW]
        for k in range(s.iv[Q_LEN]):
            j = s.queue[k]
            if j == blocked or not fits_now(s, j):
                continue
            if mode == BF_RLSCHEDULER:
                ok = now + s.est[j] < shadow
            else:
                ok = now + s.est[j] <= shadow or fits_in(s, j, s.extra)
            if ok:
                s.cand[n_cand] = j
                n_cand += 1
    s.iv[N_CAND] = n_cand
    return n_cand


@njit(cache=True)
def on_block(s, blocked):
    """Bookkeeping when a job blocks: RLScheduler's variant fixes its shadow time now."""
    if s.cfg[C_BACKFILL] == BF_RLSCHEDULER:
        s.fv[SHADOW] = rlscheduler_shadow(s, blocked)
