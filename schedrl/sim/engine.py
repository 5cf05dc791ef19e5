"""The event loop: advance to the next decision point, apply a choice, kill and requeue.

Compiled with numba; the same three functions serve a policy run to completion inside compiled
code (the heuristics' fast path) and a caller driving the simulation decision by decision (an RL
environment), so both paths give identical schedules by construction.
"""

from __future__ import annotations

import numpy as np
from schedrl.jit import njit

from schedrl.sim.backfill import (
    begin_pass, fits_now, forget_reservation, on_backfill, on_block, qualifies, slurm_first_may_start, slurm_pick,
    slurm_started,
)
from schedrl.sim.queues import heap_pop, heap_push, heap_remove, queue_insert, queue_position, queue_remove
from schedrl.sim.state import (
    BF_DONE, BF_NONE, BF_SLURM, C_BACKFILL, C_BF_INTERVAL, C_BF_MAX_JOB_TEST, C_BF_POLICY, C_DISCIPLINE,
    C_EVENT_ORDER, C_KILL, C_POLICY_TOP, C_WINDOW, DECIDE_BACKFILL, DECIDE_PICK, DONE, FINISHED, HEAP_LEN, HELD,
    LAST_RESERVED, LIST, MODE_BACKFILLED, MODE_READY, MODE_RESERVED, N_CAND, N_DONE, N_SIDE, N_STARTS, NEXT_ARRIVAL,
    NOW, ORDER_RLSCHEDULER, PASS_EDGE, PASS_PICKS, PASS_STARTS, PASS_T, PH_BACKFILL, PH_IDLE, PH_PICK, PHASE,
    PLAN_TAKES, Q_LEN, QUEUED, RESERVED, RUNNING,
)

STUCK = -1  # no event left but jobs remain: a job can never fit (wider than the machine)

# apply_* results
OK, NOT_QUEUED, NOT_IN_WINDOW, NOT_A_CANDIDATE, WRONG_PHASE, NO_EVENT = 0, 1, 2, 3, 4, 5


@njit
def start_job(s, j, mode):
    now = s.fv[NOW]
    s.status[j] = RUNNING
    s.start[j] = now
    s.mode[j] = mode
    duration = s.run[j]
    s.killed[j] = 0
    if s.cfg[C_KILL] == 1 and duration > s.limit[j]:
        duration = s.limit[j]
        s.killed[j] = 1
    s.end[j] = now + duration
    s.free[:] -= s.req[j]
    heap_push(s, now + duration, j)
    queue_remove(s, j)
    s.iv[N_STARTS] += 1
    if mode == MODE_BACKFILLED:
        on_backfill(s, j)


@njit
def _complete(s, j):
    s.status[j] = DONE
    s.free[:] += s.req[j]
    s.iv[N_DONE] += 1


@njit
def _arrive(s):
    j = s.iv[NEXT_ARRIVAL]
    s.status[j] = QUEUED
    queue_insert(s, j)
    s.iv[NEXT_ARRIVAL] = j + 1


@njit
def _next_pass(s, t_event):
    """Slurm's next pass that can start anything: the first grid point at or after the next event, or the next grid
    point when the last pass started a job and an event fell on its instant (as the pass model counts changes)."""
    interval = float(s.cfg[C_BF_INTERVAL])
    last = s.fv[PASS_T]
    if s.iv[N_STARTS] > s.iv[PASS_STARTS] and (s.iv[PASS_EDGE] == 1 or t_event == last):
        return last + interval
    t = np.ceil(t_event / interval) * interval
    if t < t_event:
        t += interval
    return t if t > last else last + interval


@njit
def process_events(s):
    """Advance time to the next event(s) (under `slurm`, to the next pass, with every event up to it). Returns False
    when no event is left."""
    n = s.submit.shape[0]
    has_run = s.iv[HEAP_LEN] > 0
    has_arr = s.iv[NEXT_ARRIVAL] < n
    slurm = s.cfg[C_BACKFILL] == BF_SLURM
    if not has_run and not has_arr:
        if not (slurm and s.iv[Q_LEN] > 0 and s.iv[N_STARTS] > s.iv[PASS_STARTS] and s.iv[PASS_EDGE] == 1):
            return False
    t_run = s.heap_t[0] if has_run else np.inf
    t_arr = s.submit[s.iv[NEXT_ARRIVAL]] if has_arr else np.inf
    if s.cfg[C_EVENT_ORDER] == ORDER_RLSCHEDULER:
        # SchedGym: one event per step, an arrival before a completion at the same instant
        if has_arr and t_arr <= t_run:
            _arrive(s)
            s.fv[NOW] = max(s.fv[NOW], t_arr)
        else:
            _complete(s, heap_pop(s))
            s.fv[NOW] = max(s.fv[NOW], t_run)
    else:
        t = min(t_run, t_arr)
        if slurm:
            t = _next_pass(s, t)
            s.iv[PASS_EDGE] = 0
        # completions are processed before arrivals at the same instant so freed resources are visible
        while s.iv[HEAP_LEN] > 0 and s.heap_t[0] <= t:
            if slurm and s.heap_t[0] == t:
                s.iv[PASS_EDGE] = 1
            _complete(s, heap_pop(s))
        while s.iv[NEXT_ARRIVAL] < n and s.submit[s.iv[NEXT_ARRIVAL]] <= t:
            if slurm and s.submit[s.iv[NEXT_ARRIVAL]] == t:
                s.iv[PASS_EDGE] = 1
            _arrive(s)
        s.fv[NOW] = max(s.fv[NOW], t)
        if slurm:
            s.fv[PASS_T] = t
            s.iv[PASS_STARTS] = s.iv[N_STARTS]
            s.iv[PASS_PICKS] = 0
    s.iv[BF_DONE] = 0
    forget_reservation(s)
    return True


@njit
def _pass_full(s):
    """Under `slurm`: the pass has tested bf_max_job_test jobs already (every start in it was one)."""
    return s.cfg[C_BACKFILL] == BF_SLURM and s.iv[N_STARTS] - s.iv[PASS_STARTS] >= s.cfg[C_BF_MAX_JOB_TEST]


@njit
def _backfill_pass(s, blocked):
    """Backfill around `blocked`; True when the policy must choose among the candidates in `s.cand`.

    First-fit: one pass over the queue starts every candidate in FCFS order (see `backfill`: this is
    the same as starting the first candidate and looking again). Policy choice: the candidates are
    listed, and the policy starts one, or none, per decision.
    """
    if s.cfg[C_BACKFILL] == BF_NONE or s.iv[BF_DONE] == 1:
        return False
    first_fit = s.cfg[C_BF_POLICY] == 0
    # every rule needs a candidate to fit now, so the pass stops after the last queued job that does
    stop = s.iv[Q_LEN]
    while stop > 0 and (s.queue[stop - 1] == blocked or not fits_now(s, s.queue[stop - 1])):
        stop -= 1
    # Slurm tests at most bf_max_job_test jobs a pass: those started in it, the blocked one, then the queue's
    slurm = s.cfg[C_BACKFILL] == BF_SLURM
    budget = s.iv[Q_LEN]
    if slurm:
        if s.cfg[C_POLICY_TOP] > 0:  # the policy's picks were this pass's first tests
            budget = s.cfg[C_BF_MAX_JOB_TEST] - s.iv[PASS_PICKS]
        else:
            budget = s.cfg[C_BF_MAX_JOB_TEST] - (s.iv[N_STARTS] - s.iv[PASS_STARTS]) - 1
    if stop > 0 and budget > 0:
        begin_pass(s, blocked)
    else:
        stop = 0
    # under `slurm`, a witness: the first position from k whose job may still start in this pass. Once there is none,
    # the rest of the pass could only reserve (each job tested costs a reservation in the plan), so it stops; the plan
    # and the free procs only shrink in a pass, so the witness only moves on, checked again when either changes
    witness = -1
    takes = 0
    n_cand = 0
    tested = 0
    k = 0
    while k < stop and tested < budget:
        if slurm:
            if witness < k:
                witness = slurm_first_may_start(s, k, stop, blocked)
            if witness >= stop:
                break
            takes = s.iv[PLAN_TAKES]
        j = s.queue[k]
        if j != blocked:
            tested += 1
        if j != blocked and qualifies(s, j):
            if first_fit:
                # starting removes j from the queue: position k now holds the next job
                start_job(s, j, MODE_BACKFILLED)
                stop -= 1
                if slurm:
                    witness = -1 if witness == k else slurm_first_may_start(s, witness - 1, stop, blocked)
                continue
            s.cand[n_cand] = j
            n_cand += 1
        k += 1
        if slurm and s.iv[PLAN_TAKES] != takes:
            witness = slurm_first_may_start(s, max(witness, k), stop, blocked)
    s.iv[N_CAND] = n_cand
    if n_cand == 0:
        s.iv[BF_DONE] = 1
    return n_cand > 0


@njit
def advance(s):
    """Run until a decision is needed: DECIDE_PICK, DECIDE_BACKFILL, FINISHED or STUCK."""
    n = s.submit.shape[0]
    if s.cfg[C_DISCIPLINE] == LIST:
        return _advance_list(s, n)
    if s.cfg[C_POLICY_TOP] > 0:
        return _advance_top(s, n)
    while True:
        if s.iv[N_DONE] == n:
            return FINISHED
        held = s.iv[HELD]
        if held >= 0:
            if fits_now(s, held):
                start_job(s, held, MODE_RESERVED)
                s.iv[HELD] = -1
                continue
            if _backfill_pass(s, held):
                return DECIDE_BACKFILL
            if not process_events(s):
                return STUCK
            continue
        if s.iv[Q_LEN] > 0 and not _pass_full(s):
            return DECIDE_PICK
        if not process_events(s):
            return FINISHED if s.iv[N_DONE] == n else STUCK


@njit
def _restore_side(s):
    """The end of a pass under `policy_top`: the policy's reserved picks wait in the queue again."""
    for k in range(s.iv[N_SIDE]):
        queue_insert(s, s.cand[k])
    s.iv[N_SIDE] = 0


@njit
def _advance_top(s, n):
    # Slurm with the policy's top K: at each pass up to K picks (`apply_pick` tests each), then the queue in submit
    # order (`_backfill_pass` with no blocked job), then the next pass
    while True:
        if s.iv[N_DONE] == n:
            _restore_side(s)
            return FINISHED
        if s.iv[Q_LEN] > 0 and s.iv[PASS_PICKS] < min(s.cfg[C_POLICY_TOP], s.cfg[C_BF_MAX_JOB_TEST]):
            return DECIDE_PICK
        _backfill_pass(s, -1)
        _restore_side(s)
        if not process_events(s):
            return FINISHED if s.iv[N_DONE] == n else STUCK


@njit
def _advance_list(s, n):
    while True:
        if s.iv[N_DONE] == n:
            return FINISHED
        phase = s.iv[PHASE]
        if phase == PH_PICK:
            if s.iv[Q_LEN] > 0 and s.iv[RESERVED] < 0 and not _pass_full(s):
                return DECIDE_PICK
            s.iv[PHASE] = PH_BACKFILL
        elif phase == PH_BACKFILL:
            blocked = s.iv[RESERVED]
            if blocked >= 0 and _backfill_pass(s, blocked):
                return DECIDE_BACKFILL
            s.iv[PHASE] = PH_IDLE
        else:
            if not process_events(s):
                return FINISHED if s.iv[N_DONE] == n else STUCK
            # a new scheduling instance: the policy orders the window afresh
            s.iv[PHASE] = PH_PICK
            s.iv[RESERVED] = -1


@njit
def apply_pick(s, j):
    """The policy picks queued job `j`: start it if it fits, else hold/reserve it."""
    if j < 0 or j >= s.submit.shape[0] or s.status[j] != QUEUED:
        return NOT_QUEUED
    if s.cfg[C_DISCIPLINE] == LIST:
        if s.iv[PHASE] != PH_PICK or s.iv[RESERVED] >= 0:
            return WRONG_PHASE
        window = s.cfg[C_WINDOW]
        if window > 0 and queue_position(s, j) >= window:
            return NOT_IN_WINDOW
        if fits_now(s, j):
            start_job(s, j, MODE_RESERVED if j == s.iv[LAST_RESERVED] else MODE_READY)
        else:
            s.iv[RESERVED] = j
            s.iv[LAST_RESERVED] = j
            s.iv[BF_DONE] = 0
            on_block(s, j)
        return OK
    if s.cfg[C_POLICY_TOP] > 0:
        if s.iv[PASS_PICKS] >= min(s.cfg[C_POLICY_TOP], s.cfg[C_BF_MAX_JOB_TEST]):
            return WRONG_PHASE
        s.iv[PASS_PICKS] += 1
        if slurm_pick(s, j):
            start_job(s, j, MODE_READY)
            slurm_started(s, j)
        else:  # reserved in this pass; the rest of the pass is tested without it, and it waits for the next
            queue_remove(s, j)
            s.cand[s.iv[N_SIDE]] = j
            s.iv[N_SIDE] += 1
        return OK
    if s.iv[HELD] >= 0:
        return WRONG_PHASE
    if fits_now(s, j):
        start_job(s, j, MODE_READY)
    else:
        s.iv[HELD] = j
        s.iv[BF_DONE] = 0
        on_block(s, j)
    return OK


@njit
def has_event(s):
    """Whether a job is running or will arrive: an event to wait for."""
    return s.iv[HEAP_LEN] > 0 or s.iv[NEXT_ARRIVAL] < s.submit.shape[0]


@njit
def apply_defer(s):
    """At a DECIDE_PICK point, start nothing now: time moves to the next event (an arrival or a completion, all
    events of that instant), where the queue is offered again (under `list`, a new scheduling instance). NO_EVENT
    when there is none (deferring would wait for ever); WRONG_PHASE when a job is held or reserved."""
    if s.cfg[C_DISCIPLINE] == LIST:
        if s.iv[PHASE] != PH_PICK or s.iv[RESERVED] >= 0:
            return WRONG_PHASE
    elif s.iv[HELD] >= 0:
        return WRONG_PHASE
    if s.iv[Q_LEN] == 0:
        return WRONG_PHASE
    _restore_side(s)
    if not process_events(s):
        return NO_EVENT
    if s.cfg[C_DISCIPLINE] == LIST:
        s.iv[PHASE] = PH_PICK
        s.iv[RESERVED] = -1
    return OK


@njit
def apply_backfill(s, j):
    """Start backfill candidate `j`, or (j = -1) start no more backfill jobs until the next event."""
    if j < 0:
        s.iv[BF_DONE] = 1
        return OK
    for k in range(s.iv[N_CAND]):
        if s.cand[k] == j:
            start_job(s, j, MODE_BACKFILLED)
            return OK
    return NOT_A_CANDIDATE


@njit
def kill_requeue(s, j):
    """Kill running job `j` and put it back in the queue; its progress is lost (RLSchert)."""
    if s.status[j] != RUNNING:
        return NOT_QUEUED
    heap_remove(s, j)
    now = s.fv[NOW]
    s.free[:] += s.req[j]
    s.wasted[j] += (now - s.start[j]) * s.req[j, 0]
    s.requeues[j] += 1
    s.status[j] = QUEUED
    s.end[j] = -1.0
    queue_insert(s, j)
    s.iv[BF_DONE] = 0
    forget_reservation(s)
    return OK
