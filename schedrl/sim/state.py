"""The simulator's state: numpy arrays that compiled code reads and writes.

No per-job Python objects: a job is an index into the arrays. Scalars live in the small arrays
`iv` (ints), `fv` (floats) and `cfg` (configuration codes), addressed by the constants below.
Python code reads the arrays through the named tuple `SimArrays`; compiled code is handed the same
arrays as a `StateRef`, and every compiled function accepts either.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import types
from numba.experimental import structref

from schedrl.jit import njit
from schedrl.sim.config import SimConfig

# job status
FUTURE, QUEUED, RUNNING, DONE = 0, 1, 2, 3
# execution mode of a started job (DRAS Table IV reports these shares)
MODE_NONE, MODE_READY, MODE_RESERVED, MODE_BACKFILLED = 0, 1, 2, 3
MODE_NAMES = ("none", "ready", "reserved", "backfilled")

# decision codes returned by `advance`
DECIDE_PICK, DECIDE_BACKFILL, FINISHED = 1, 2, 3

# iv slots (SHADOW_JOB: the blocked job EASY's reservation was computed for, -1 when stale;
# PROF_LEN: points in the conservative profile, or Slurm's plan, during a backfill pass;
# PASS_STARTS: N_STARTS when Slurm's current pass began; PASS_EDGE: 1 when an event fell on that pass's instant;
# PLAN_ON: 1 once the pass's plan is built; PASS_PICKS: the policy's picks in the pass (`policy_top`); N_SIDE: its
# picks reserved in the pass, set aside in `cand` until the pass ends; PLAN_TAKES: changes to the plan, counted)
(Q_LEN, HEAP_LEN, NEXT_ARRIVAL, HELD, N_DONE, SEQ, N_CAND, PHASE, RESERVED, LAST_RESERVED, BF_DONE, N_STARTS, RAND_POS,
 SHADOW_JOB, PROF_LEN, PASS_STARTS, PASS_EDGE, PLAN_ON, PASS_PICKS, N_SIDE, PLAN_TAKES) = range(21)
N_IV = 21
# fv slots (SHADOW: the blocked job's shadow time; under EASY valid for job iv[SHADOW_JOB] only; PASS_T: the time of
# Slurm's last pass)
NOW, SHADOW, PASS_T = 0, 1, 2
N_FV = 3
# cfg slots (C_BF_*: Slurm's parameters, seconds except C_BF_WINDOW, minutes)
(C_DISCIPLINE, C_BACKFILL, C_EVENT_ORDER, C_KILL, C_WINDOW, C_BF_POLICY, C_BF_INTERVAL, C_BF_RESOLUTION, C_BF_WINDOW,
 C_BF_MAX_JOB_TEST, C_NODE_PROCS, C_POLICY_TOP) = range(12)
N_CFG = 12
# codes
PICK_AND_WAIT, LIST = 0, 1
BF_NONE, BF_EASY, BF_CONSERVATIVE, BF_RLSCHEDULER, BF_SLURM = 0, 1, 2, 3, 4
ORDER_STANDARD, ORDER_RLSCHEDULER = 0, 1
# list-discipline phases
PH_IDLE, PH_PICK, PH_BACKFILL = 0, 1, 2


class SimArrays(NamedTuple):
    """All simulator state. Static inputs first, then dynamic state."""

    submit: np.ndarray  # f8[n] submit time
    run: np.ndarray  # f8[n] true run time (completions)
    est: np.ndarray  # f8[n] run-time estimate (reservations, backfilling); revisable
    limit: np.ndarray  # f8[n] requested time: the walltime limit
    req: np.ndarray  # f8[n, R] resource request (resource 0: procs or nodes)
    cap: np.ndarray  # f8[R] machine capacity
    status: np.ndarray  # i8[n] FUTURE/QUEUED/RUNNING/DONE
    start: np.ndarray  # f8[n] last start time (-1 before)
    end: np.ndarray  # f8[n] completion time of the current/last run (-1 before)
    mode: np.ndarray  # i8[n] MODE_* of the last start
    killed: np.ndarray  # i8[n] 1 if killed at its walltime limit
    requeues: np.ndarray  # i8[n] times killed and requeued
    wasted: np.ndarray  # f8[n] resource-0-seconds lost to kill-and-requeue
    queue: np.ndarray  # i8[n] queued jobs in FCFS order (submit, then index)
    heap_t: np.ndarray  # f8[n] running jobs: min-heap on (end, start sequence)
    heap_s: np.ndarray  # i8[n]
    heap_j: np.ndarray  # i8[n]
    free: np.ndarray  # f8[R] free capacity now
    extra: np.ndarray  # f8[R] EASY: capacity left at the shadow time after the reservation (and backfill jobs past it)
    cand: np.ndarray  # i8[n] backfill candidates at a DECIDE_BACKFILL point (queue order)
    prof_t: np.ndarray  # f8[2n + 2] conservative: availability profile times
    prof_f: np.ndarray  # f8[2n + 2, R] conservative: free capacity from each profile time
    work: np.ndarray  # f8[n] scratch (estimated ends)
    iwork: np.ndarray  # i8[n] scratch (indices)
    iv: np.ndarray  # i8[N_IV] integer scalars
    fv: np.ndarray  # f8[N_FV] float scalars
    cfg: np.ndarray  # i8[N_CFG] configuration codes


@structref.register
class StateRefType(types.StructRef):
    """The numba type of a `StateRef`: one field per `SimArrays` field."""


class StateRef(structref.StructRefProxy):
    """The arrays of a `SimArrays` behind one reference: what the simulator hands to compiled code.

    Numba passes a named tuple field by field: each of its arrays is unboxed on every call from
    Python and copied and reference-counted on every call between compiled functions. A structref
    is a single pointer. The arrays are shared, not copied, so the named tuple stays a live view.
    """


structref.define_constructor(StateRef, StateRefType, SimArrays._fields)
structref.define_boxing(StateRefType, StateRef)


@njit
def _bundle(arrays):
    return StateRef(*arrays)


def as_ref(arrays: SimArrays) -> StateRef:
    """`arrays` as a StateRef of the same arrays (with NUMBA_DISABLE_JIT, `arrays` itself: plain Python takes either)."""
    if numba.config.DISABLE_JIT:
        return arrays
    return _bundle(arrays)


def config_codes(config: SimConfig) -> np.ndarray:
    """SimConfig as the integer codes compiled code reads."""
    from schedrl.sim.config import BACKFILLS, EVENT_ORDERS

    cfg = np.zeros(N_CFG, dtype=np.int64)
    cfg[C_DISCIPLINE] = PICK_AND_WAIT if config.discipline == "pick-and-wait" else LIST
    cfg[C_BACKFILL] = BACKFILLS.index(config.backfill)
    cfg[C_EVENT_ORDER] = EVENT_ORDERS.index(config.event_order)
    cfg[C_KILL] = int(config.kill_at_limit)
    cfg[C_WINDOW] = config.window
    cfg[C_BF_POLICY] = int(config.backfill_choice == "policy")
    cfg[C_BF_INTERVAL] = config.bf_interval
    cfg[C_BF_RESOLUTION] = config.bf_resolution
    cfg[C_BF_WINDOW] = config.bf_window
    cfg[C_BF_MAX_JOB_TEST] = config.bf_max_job_test
    cfg[C_NODE_PROCS] = config.node_procs
    cfg[C_POLICY_TOP] = config.policy_top
    return cfg


def new_state(submit, run, est, limit, req, cap, config: SimConfig) -> SimArrays:
    """Fresh state at the first submit time, every job in the future.

    The inputs are copied, so every array is writable and C-contiguous: one array type per field,
    hence one compiled specialisation of each function."""
    n, r = req.shape
    f8 = np.float64
    state = SimArrays(
        submit=np.array(submit, dtype=f8, order="C"),
        run=np.array(run, dtype=f8, order="C"),
        est=np.array(est, dtype=f8, order="C"),
        limit=np.array(limit, dtype=f8, order="C"),
        req=np.array(req, dtype=f8, order="C"),
        cap=np.array(cap, dtype=f8, order="C"),
        status=np.zeros(n, np.int64),
        start=np.full(n, -1.0),
        end=np.full(n, -1.0),
        mode=np.zeros(n, np.int64),
        killed=np.zeros(n, np.int64),
        requeues=np.zeros(n, np.int64),
        wasted=np.zeros(n, f8),
        queue=np.zeros(n, np.int64),
        heap_t=np.zeros(n, f8),
        heap_s=np.zeros(n, np.int64),
        heap_j=np.zeros(n, np.int64),
        free=np.array(cap, dtype=f8),
        extra=np.zeros(r, f8),
        cand=np.zeros(n, np.int64),
        prof_t=np.zeros(2 * n + 2, f8),
        prof_f=np.zeros((2 * n + 2, r), f8),
        work=np.zeros(n, f8),
        iwork=np.zeros(n, np.int64),
        iv=np.zeros(N_IV, np.int64),
        fv=np.zeros(N_FV, f8),
        cfg=config_codes(config),
    )
    state.iv[HELD] = -1
    state.iv[RESERVED] = -1
    state.iv[LAST_RESERVED] = -1
    state.iv[SHADOW_JOB] = -1
    state.fv[PASS_T] = -np.inf
    state.fv[NOW] = state.submit[0] if n else 0.0
    return state
