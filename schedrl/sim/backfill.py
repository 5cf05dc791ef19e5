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
- `slurm`: Slurm's backfill scheduler (sched/backfill; the pass model `schedrl.slurm.passes` is its Python twin,
  and `tests/sim/test_slurm_backfill.py` holds the two to the same schedules). Jobs start only at passes, every
  `bf_interval` seconds on a grid from time 0, and only at a pass something changed before (an arrival or an end
  since the last one, or at its instant when it started a job). A pass tests at most `bf_max_job_test` jobs: the
  policy's picks, then the queue in submit order. Its plan is the running jobs' procs until their estimated ends;
  a job starts if it fits now and the plan leaves its procs free through its estimate (both ends included); a job
  that cannot is reserved from its earliest such start (if within `bf_window`), the reservation's start and end
  rounded down to `bf_resolution` and its procs rounded up to whole nodes of `node_procs`, against every job
  tested after it in the pass. So one short job reserved for the next minute can hold whole nodes while procs
  sit idle, as Slurm does. Reservations last one pass: each pass plans afresh.

Starting a backfill job never turns another queued job into a candidate: it only takes free
resources, leaves the shadow time where it is and, if it runs past the shadow time, takes its
resources from the extra ones (in the conservative profile it simply occupies its own
reservation). So one pass over the queue in FCFS order, starting each candidate as it is met,
gives the same schedule as starting the first candidate and looking again; and EASY's
reservation is computed once per event and then kept up to date by `on_backfill`.
"""

from __future__ import annotations

import numpy as np
from schedrl.jit import njit

from schedrl.sim.state import (
    BF_CONSERVATIVE, BF_EASY, BF_RLSCHEDULER, BF_SLURM, C_BACKFILL, C_BF_RESOLUTION, C_BF_WINDOW, C_NODE_PROCS,
    HEAP_LEN, NOW, PLAN_ON, PLAN_TAKES, PROF_LEN, SHADOW, SHADOW_JOB,
)

EPS = 1e-9


@njit
def fits_in(s, j, avail):
    for r in range(avail.shape[0]):
        if s.req[j, r] > avail[r] + EPS:
            return False
    return True


@njit
def fits_now(s, j):
    return fits_in(s, j, s.free)


@njit
def fits_now_each(s, jobs):
    """Whether each job in `jobs` (indices; negative ones count from the end) fits in the free capacity now."""
    n = s.submit.shape[0]
    out = np.empty(jobs.shape[0], np.bool_)
    for k in range(jobs.shape[0]):
        j = jobs[k]
        if j < -n or j >= n:
            raise IndexError("job index out of range")
        out[k] = fits_now(s, j if j >= 0 else j + n)
    return out


@njit
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


@njit
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


@njit
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


@njit
def _sort_running(s):
    """The running jobs by estimated end, at least `now` (an overdue job may end any moment), in place and in the order
    `_running_by_estimated_end` gives (stable): ends ascending in `s.work[:h]`, their jobs in `s.iwork[:h]`; returns h.
    A plan is built once a pass, so a few running jobs are sorted by insertion, without allocating."""
    h = s.iv[HEAP_LEN]
    work, iwork = s.work, s.iwork
    if h > 32:
        order, h = _running_by_estimated_end(s, True)
        ends, jobs = work[:h][order], iwork[:h][order]
        work[:h] = ends
        iwork[:h] = jobs
        return h
    now = s.fv[NOW]
    for k in range(h):
        j = s.heap_j[k]
        e = max(s.start[j] + s.est[j], now)
        m = k
        while m > 0 and work[m - 1] > e:
            work[m] = work[m - 1]
            iwork[m] = iwork[m - 1]
            m -= 1
        work[m] = e
        iwork[m] = j
    return h


@njit
def _profile_build(s):
    """The free capacity from now on as the running jobs end (by their estimates): `s.prof_t`/`s.prof_f`; its length."""
    h = _sort_running(s)
    prof_t, prof_f, free, req = s.prof_t, s.prof_f, s.free, s.req
    n_r = free.shape[0]
    prof_t[0] = s.fv[NOW]
    for r in range(n_r):
        prof_f[0, r] = free[r]
    p = 1
    for k in range(h):
        t = s.work[k]
        j = s.iwork[k]
        if t > prof_t[p - 1]:
            prof_t[p] = t
            for r in range(n_r):
                prof_f[p, r] = prof_f[p - 1, r]
            p += 1
        for r in range(n_r):
            prof_f[p - 1, r] += req[j, r]
    return p


@njit
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


@njit
def _profile_reserve(s, p, j):
    """Earliest profile point where `j` fits for its whole estimate; reserve it there. Returns (start, p)."""
    dur = s.est[j]
    k = 0
    while k < p:
        t0 = s.prof_t[k]
        m = k
        while m < p and s.prof_t[m] < t0 + dur and fits_in(s, j, s.prof_f[m]):
            m += 1
        if m == p or s.prof_t[m] >= t0 + dur:
            k0, p = _profile_split(s, p, t0)
            k1, p = _profile_split(s, p, t0 + dur)
            for m in range(k0, k1):
                s.prof_f[m] -= s.req[j]
            return t0, p
        # it does not fit from point m: neither does any start up to m, whose window covers m
        k = m + 1
    return np.inf, p


@njit
def _plan_split(prof_t, prof_f, p, t):
    """`_profile_split` on the plan's arrays (make `t` a point; its index and the new length), without row views."""
    # the first point at or after t, by bisection (the points are increasing)
    k, hi = 0, p
    while k < hi:
        mid = (k + hi) // 2
        if prof_t[mid] < t:
            k = mid + 1
        else:
            hi = mid
    if k < p and prof_t[k] == t:
        return k, p
    n_r = prof_f.shape[1]
    for m in range(p, k, -1):
        prof_t[m] = prof_t[m - 1]
        for r in range(n_r):
            prof_f[m, r] = prof_f[m - 1, r]
    prof_t[k] = t
    for r in range(n_r):
        prof_f[k, r] = prof_f[k - 1, r]
    return k, p + 1


@njit
def _plan_fits(prof_f, m, req, j):
    """Whether job `j`'s request (`req[j]`) fits the plan's free capacity at point `m` (the test `fits_in` makes,
    without a row view)."""
    for r in range(req.shape[1]):
        if req[j, r] > prof_f[m, r] + EPS:
            return False
    return True


@njit
def _slurm_earliest(s, p, j):
    """Earliest plan point from which `j` fits through its whole estimate, both ends included (Slurm tests a node
    over [start, start + limit]); inf if never (wider than the machine)."""
    # the arrays bound once: every pass runs this for each job it tests
    prof_t, prof_f, req = s.prof_t, s.prof_f, s.req
    dur = s.est[j]
    k = 0
    while True:
        # the first point from k where j fits at all; then whether it fits through the window from there
        while k < p and not _plan_fits(prof_f, k, req, j):
            k += 1
        if k == p:
            return np.inf
        t0 = prof_t[k]
        end = t0 + dur
        m = k + 1
        while m < p and prof_t[m] <= end and _plan_fits(prof_f, m, req, j):
            m += 1
        if m == p or prof_t[m] > end:
            return t0
        # it does not fit at point m: neither does any start up to m, whose window covers m
        k = m + 1


@njit
def _plan_take(s, p, begin, end, j, procs):
    """Take `procs` of resource 0 (and `j`'s request of the others) from the plan over [begin, end)."""
    prof_t, prof_f, need = s.prof_t, s.prof_f, s.req[j]
    s.iv[PLAN_TAKES] += 1
    k0, p = _plan_split(prof_t, prof_f, p, begin)
    k1, p = _plan_split(prof_t, prof_f, p, end)
    for m in range(k0, k1):
        prof_f[m, 0] -= procs
        for r in range(1, need.shape[0]):
            prof_f[m, r] -= need[r]
    return p


@njit
def _slurm_test(s, j):
    """Slurm's test of `j` in a pass: True if it may start now; otherwise it is reserved in the plan (if its earliest
    start is within bf_window), its window rounded down to bf_resolution, its procs up to whole nodes."""
    now = s.fv[NOW]
    p = s.iv[PROF_LEN]
    t0 = _slurm_earliest(s, p, j)
    if t0 <= now and fits_now(s, j):
        return True
    if t0 > now + 60.0 * s.cfg[C_BF_WINDOW]:
        return False
    res = s.cfg[C_BF_RESOLUTION]
    begin = max(np.floor(t0 / res) * res, now)
    end = np.floor((t0 + s.est[j]) / res) * res
    if end > begin:
        procs = s.req[j, 0]
        node = s.cfg[C_NODE_PROCS]
        if node > 0:
            procs = min(s.cap[0], np.ceil(procs / node - EPS) * node)
        s.iv[PROF_LEN] = _plan_take(s, p, begin, end, j, procs)
    return False


@njit
def slurm_first_may_start(s, q, stop, blocked):
    """The first queue position from `q` (before `stop`) whose job (not `blocked`) `_slurm_test` would start now: it
    fits now and the plan leaves its procs free from now through its estimate; `stop` if none. The plan and the free
    procs only shrink during a pass, so a job that may not start now will not in this pass either."""
    # the state's arrays bound once for the whole scan, and no row views: each read of a field of the state (or a
    # view) takes and drops a reference count; read job by job they made this scan, with its counts, about a third of
    # a `slurm` run's compiled time on SDSC-SP2 (docs/experiments/slurm-model.md, 2026-11-29)
    queue, req, free, est, prof_t, prof_f = s.queue, s.req, s.free, s.est, s.prof_t, s.prof_f
    p = s.iv[PROF_LEN]
    n_r = req.shape[1]
    while q < stop:
        j = queue[q]
        if j != blocked:
            fits = True
            for r in range(n_r):  # `fits_now`
                if req[j, r] > free[r] + EPS:
                    fits = False
                    break
            if fits:
                # the plan's first point is now: `_slurm_earliest` returns now exactly when every point through
                # now + est fits
                end = prof_t[0] + est[j]
                m = 0
                while m < p and prof_t[m] <= end and _plan_fits(prof_f, m, req, j):
                    m += 1
                if m == p or prof_t[m] > end:
                    return q
        q += 1
    return q


@njit
def easy_reservation(s, blocked):
    """EASY shadow time of `blocked` (spare capacity then in `s.extra`), recomputed only when stale."""
    if s.iv[SHADOW_JOB] != blocked:
        s.fv[SHADOW] = easy_shadow(s, blocked)
        s.iv[SHADOW_JOB] = blocked
    return s.fv[SHADOW]


@njit
def forget_reservation(s):
    """Time, the running jobs or their estimates changed: EASY's reservation and Slurm's plan must be recomputed."""
    s.iv[SHADOW_JOB] = -1
    s.iv[PLAN_ON] = 0


@njit
def begin_pass(s, blocked):
    """Prepare a pass over the queue: EASY's reservation, or the conservative profile with `blocked` reserved first."""
    mode = s.cfg[C_BACKFILL]
    if mode == BF_EASY:
        easy_reservation(s, blocked)
    elif mode == BF_CONSERVATIVE:
        p = _profile_build(s)
        _, s.iv[PROF_LEN] = _profile_reserve(s, p, blocked)
    elif mode == BF_SLURM:
        slurm_plan(s)
        if blocked >= 0:
            _slurm_test(s, blocked)


@njit
def slurm_plan(s):
    """Slurm's plan for this pass, built once: the running jobs' procs until their estimated ends."""
    if s.iv[PLAN_ON] == 0:
        s.iv[PROF_LEN] = _profile_build(s)
        s.iv[PLAN_ON] = 1


@njit
def slurm_pick(s, j):
    """The policy's pick `j` tested in Slurm's pass (`policy_top`): True if it may start now; else it is reserved."""
    slurm_plan(s)
    return _slurm_test(s, j)


@njit
def slurm_started(s, j):
    """Job `j` started in Slurm's pass: it holds its own procs in the plan until its estimated end."""
    if s.iv[PLAN_ON] == 1:
        now = s.fv[NOW]
        s.iv[PROF_LEN] = _plan_take(s, s.iv[PROF_LEN], now, now + s.est[j], j, s.req[j, 0])


@njit
def qualifies(s, j):
    """Whether queued job `j` may start now. Call it for the queued jobs in FCFS order after `begin_pass`
    (the conservative rule reserves each in the profile)."""
    mode = s.cfg[C_BACKFILL]
    now = s.fv[NOW]
    if mode == BF_CONSERVATIVE:
        t0, s.iv[PROF_LEN] = _profile_reserve(s, s.iv[PROF_LEN], j)
        return t0 == now and fits_now(s, j)
    if mode == BF_SLURM:
        return _slurm_test(s, j)
    if not fits_now(s, j):
        return False
    if mode == BF_RLSCHEDULER:
        return now + s.est[j] < s.fv[SHADOW]
    return now + s.est[j] <= s.fv[SHADOW] or fits_in(s, j, s.extra)


@njit
def on_backfill(s, j):
    """Bookkeeping when backfill job `j` starts: under EASY, one running past the shadow time takes extra resources;
    in Slurm's plan it holds its own procs until its estimated end."""
    mode = s.cfg[C_BACKFILL]
    if mode == BF_EASY and s.fv[NOW] + s.est[j] > s.fv[SHADOW]:
        s.extra[:] -= s.req[j]
    elif mode == BF_SLURM:
        slurm_started(s, j)


@njit
def on_block(s, blocked):
    """Bookkeeping when a job blocks: RLScheduler's variant fixes its shadow time now."""
    forget_reservation(s)
    if s.cfg[C_BACKFILL] == BF_RLSCHEDULER:
        s.fv[SHADOW] = rlscheduler_shadow(s, blocked)
