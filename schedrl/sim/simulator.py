"""`Simulator`: the Python face of the compiled event loop.

Two ways to drive it, giving identical schedules:

    sim = Simulator(workload, SimConfig(backfill="easy"))
    schedule = sim.run(policy)            # policy.pick(sim) -> job index

    while (decision := sim.advance()) != FINISHED:   # step by step (an RL environment)
        if decision == DECIDE_PICK:
            sim.pick(my_choice(sim.queue))
        else:
            sim.backfill(sim.candidates[0])
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from schedrl.sim import engine
from schedrl.sim.backfill import fits_now_each
from schedrl.sim.config import SimConfig
from schedrl.sim.state import DONE as DONE_STATUS
from schedrl.sim.state import (
    DECIDE_BACKFILL, DECIDE_PICK, FINISHED, HELD, N_CAND, N_DONE, NOW, Q_LEN, RESERVED, SHADOW, SHADOW_JOB, SimArrays,
    StateRef, as_ref, new_state,
)
from schedrl.workload.workload import Workload

_APPLY_ERRORS = {
    engine.NOT_QUEUED: "is not waiting in the queue",
    engine.NOT_IN_WINDOW: "is outside the window of visible jobs",
    engine.NOT_A_CANDIDATE: "is not a backfill candidate",
    engine.WRONG_PHASE: "cannot be picked now (a job is already held/reserved)",
}


_SHARED = frozenset({"submit", "run", "limit", "req", "cap", "cfg"})
"""State arrays no step writes (`est` is revisable): `Simulator.copy` shares them."""


class Policy(Protocol):
    """What `Simulator.run` asks a policy; only `pick` is required.

    At every DECIDE_PICK point `run` first calls `kill(sim)` when the policy defines it, then
    `pick(sim)`; at every DECIDE_BACKFILL point it calls `backfill(sim)` when defined.

    - `pick(sim) -> int` (required): a job index from `sim.queue` (`sim.window` under the `list`
      discipline) to start now, or to hold/reserve when it does not fit.
    - `backfill(sim) -> int | None` (optional): a job from `sim.candidates` to start, or None to
      start no more until the next event. Without it the simulator starts the first candidate
      (queue order), as first-fit backfilling does.
    - `kill(sim) -> int | None` (optional): a running job (see `sim.running()`) to kill and requeue
      before the pick (`sim.kill`: its progress is lost, RLSchert's preemption), or None to kill
      nothing. Without it nothing is ever killed by the policy (walltime kills still apply).
    - `defer(sim) -> bool` (optional, asked first at a DECIDE_PICK point): True to start nothing now
      and be asked again at the next arrival or completion (`sim.defer`; the inspector agent's
      rejection). It must answer False where `sim.has_event` is False (nothing would ever wake it).
      Without it the policy never defers.
    """

    def pick(self, sim: "Simulator") -> int: ...


@dataclass(frozen=True)
class Schedule:
    """The outcome of a simulation: one entry per job (trace order)."""

    workload: Workload
    """The simulated jobs."""
    config: SimConfig
    """How they were scheduled."""
    resources: tuple[str, ...]
    """Resource names; column r of `req` and entry r of `capacity`."""
    capacity: np.ndarray
    """Machine capacity per resource."""
    req: np.ndarray
    """(n, R) requests."""
    submit: np.ndarray
    """Submit times."""
    start: np.ndarray
    """Start time of each job's final run."""
    end: np.ndarray
    """Completion times."""
    mode: np.ndarray
    """MODE_* of each job's final start (ready / reserved / backfilled)."""
    killed: np.ndarray
    """True where the job was killed at its walltime limit."""
    requeues: np.ndarray
    """Times each job was killed and requeued."""
    wasted: np.ndarray
    """Resource-0 seconds lost to kill-and-requeue."""
    completed: np.ndarray | None = None
    """True where the job has completed (None: not recorded; every job with an end time counts)."""

    @property
    def unfinished(self) -> np.ndarray:
        """Positions of jobs that have not completed."""
        done = self.end >= 0 if self.completed is None else self.completed & (self.end >= 0)
        return np.flatnonzero(~done)

    @property
    def wait(self) -> np.ndarray:
        """start - submit."""
        return self.start - self.submit

    @property
    def runtime(self) -> np.ndarray:
        """Time each job actually ran in its final run (end - start)."""
        return self.end - self.start


def resource_names(workload: Workload, config: SimConfig) -> tuple[str, ...]:
    """The resources a schedule of `workload` under `config` has, in column order: `nodes` or `procs` (the
    allocation unit), then the workload's extra resources (burst buffer, power) by name."""
    return ("nodes" if config.allocation == "nodes" else "procs", *sorted(workload.resources))


def _requests(workload: Workload, config: SimConfig) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    procs = np.asarray(workload.procs_req, dtype=np.float64)
    if config.allocation == "nodes":
        first, caps = np.ceil(procs / workload.procs_per_node), [float(workload.max_nodes)]
    else:
        first, caps = procs, [float(workload.max_procs)]
    names = resource_names(workload, config)
    cols = [first] + [np.asarray(workload.resources[key], dtype=np.float64) for key in names[1:]]
    caps += [float(workload.capacity[key]) for key in names[1:]]
    return np.stack(cols, axis=1), np.array(caps), names



def job_index(j, decision: str = "pick") -> int:
    """A policy's decision as a job index: a Python or numpy integer (or a 0-d integer array). Anything else — a
    float such as 3.5 or 3.0, a string such as "0", a bool — is refused (ValueError), never truncated or parsed."""
    if isinstance(j, (bool, np.bool_)) or isinstance(j, (str, bytes)):
        raise ValueError(f"the policy's {decision} returned {j!r}: a job index is an integer (from sim.queue)")
    try:
        return operator.index(j)
    except TypeError:
        raise ValueError(f"the policy's {decision} returned {j!r} ({type(j).__name__}): a job index is an integer "
                         "(from sim.queue), not truncated from another type") from None

class Simulator:
    """A discrete-event simulation of one workload on one cluster."""

    def __init__(self, workload: Workload, config: SimConfig = SimConfig(), *, estimates: np.ndarray | None = None):
        if len(workload) == 0:
            raise ValueError("cannot simulate an empty workload")
        submit = np.asarray(workload.submit, dtype=np.float64)
        first = int(np.argmin(submit))
        if submit[first] < 0:
            # -1 marks "not started/ended" in the schedule arrays, so times must not go below 0
            raise ValueError(f"job {int(workload.job_id[first])} has a negative submit time ({submit[first]:g}): clean "
                             f"the trace (cleaning rule negative_submit drops or shifts such jobs)")
        if (submit[1:] < submit[:-1]).any():
            raise ValueError("jobs must be in submit order (clean the trace with sort_by_submit)")
        run = np.asarray(workload.run, dtype=np.float64)
        limit = np.asarray(workload.time_req, dtype=np.float64)
        bad = np.flatnonzero((run < 0) | (limit <= 0))
        if bad.size:
            j = int(bad[0])
            raise ValueError(f"job {int(workload.job_id[j])} (position {j}) has run time {run[j]:g} and requested time "
                             f"{limit[j]:g}: run times must be >= 0 and requested times > 0 (clean the trace first)")
        req, cap, names = _requests(workload, config)
        too_big = (req > cap).any(axis=1)
        if too_big.any():
            j = int(np.argmax(too_big))
            r = int(np.argmax(req[j] > cap))
            raise ValueError(
                f"job {int(workload.job_id[j])} (position {j}) requests {req[j, r]:g} {names[r]}, "
                f"more than the machine's {cap[r]:g}: drop it (cleaning rule drop_wider_than_machine)")
        if (req[:, 0] <= 0).any():
            raise ValueError("every job must request at least one processor (clean the trace first)")
        est = limit if estimates is None else np.asarray(estimates, dtype=np.float64)
        if est.shape != run.shape:
            raise ValueError(f"estimates has shape {est.shape}, expected {run.shape}")
        self.workload = workload
        self.config = config
        self.resources = names
        self.state = new_state(submit, run, est, limit, req, cap, config)

    @property
    def state(self) -> SimArrays:
        """All simulator state, as numpy arrays (see `schedrl.sim.state`)."""
        return self._state

    @state.setter
    def state(self, arrays: SimArrays) -> None:
        self._state = arrays
        self._state_ref = as_ref(arrays)

    @property
    def state_ref(self) -> StateRef:
        """The arrays of `state` behind one reference: what compiled functions are handed (see StateRef)."""
        return self._state_ref

    # --- what a policy sees -------------------------------------------------------------
    @property
    def now(self) -> float:
        """Current simulated time."""
        return float(self.state.fv[NOW])

    @property
    def queue(self) -> np.ndarray:
        """Indices of waiting jobs in FCFS order (a view: read it before the next call)."""
        return self.state.queue[: self.state.iv[Q_LEN]]

    @property
    def window(self) -> np.ndarray:
        """The jobs a `list` policy may pick from (the first `window` of the queue)."""
        w = self.config.window
        q = self.queue
        return q[:w] if w > 0 else q

    @property
    def candidates(self) -> np.ndarray:
        """Backfill candidates at a DECIDE_BACKFILL point, in queue order."""
        return self.state.cand[: self.state.iv[N_CAND]]

    @property
    def free(self) -> np.ndarray:
        """Free capacity per resource."""
        return self.state.free

    @property
    def capacity(self) -> np.ndarray:
        """Machine capacity per resource."""
        return self.state.cap

    @property
    def blocked(self) -> int:
        """The held (pick-and-wait) or reserved (list) job, or -1."""
        return int(self.state.iv[HELD] if self.config.discipline == "pick-and-wait" else self.state.iv[RESERVED])

    @property
    def reservation(self) -> tuple[float, np.ndarray] | None:
        """The blocked job's reservation under `easy` or `rlscheduler` backfilling, as the backfill candidates were
        judged against it: (its shadow time, the capacity per resource it leaves spare then). Under `easy` a candidate
        that runs past the shadow time must fit in that spare capacity (EASY's "extra"; it shrinks as such candidates
        start); under `rlscheduler` every candidate ends before the shadow time and the spare capacity is zeros.
        None where no job is blocked, under other backfilling, or (`easy`) when the reservation is stale, i.e. between
        an event and the next backfill pass: at a DECIDE_BACKFILL point it is always there."""
        s = self.state
        blocked = self.blocked
        mode = self.config.backfill
        if blocked < 0 or mode not in ("easy", "rlscheduler"):
            return None
        if mode == "rlscheduler":
            return float(s.fv[SHADOW]), np.zeros_like(s.extra)
        if int(s.iv[SHADOW_JOB]) != blocked:
            return None
        return float(s.fv[SHADOW]), s.extra.copy()

    @property
    def done(self) -> bool:
        """All jobs completed."""
        return int(self.state.iv[N_DONE]) == len(self.workload)

    def fits(self, jobs: np.ndarray) -> np.ndarray:
        """Whether each job in `jobs` (an array of job indices, such as `queue`) fits in the free capacity now."""
        jobs = np.asarray(jobs)
        if jobs.ndim != 1 or jobs.dtype.kind not in "iu":
            raise TypeError(f"fits takes a 1-d array of job indices, got {jobs.dtype} with shape {jobs.shape}")
        return fits_now_each(self.state_ref, jobs.astype(np.int64, copy=False))

    def running(self) -> np.ndarray:
        """Indices of running jobs."""
        return np.flatnonzero(self.state.status == 2)

    # --- driving ------------------------------------------------------------------------
    def advance(self) -> int:
        """Run to the next decision point: DECIDE_PICK, DECIDE_BACKFILL or FINISHED."""
        code = engine.advance(self.state_ref)
        if code == engine.STUCK:
            raise RuntimeError("simulation stuck: a waiting job can never fit the machine")
        return int(code)

    def _check(self, code: int, j) -> None:
        if code != engine.OK:
            raise ValueError(f"job {j} {_APPLY_ERRORS[code]}")

    def pick(self, j: int) -> None:
        """Choose queued job `j` at a DECIDE_PICK point."""
        self._check(engine.apply_pick(self.state_ref, job_index(j, "pick")), j)

    def backfill(self, j: int | None) -> None:
        """Start candidate `j` at a DECIDE_BACKFILL point, or None to stop backfilling until the next event."""
        self._check(engine.apply_backfill(self.state_ref, -1 if j is None else job_index(j, "backfill")), j)

    @property
    def has_event(self) -> bool:
        """Whether a job is running or will arrive (`defer` has something to wait for)."""
        return bool(engine.has_event(self.state_ref))

    def defer(self) -> None:
        """At a DECIDE_PICK point, start nothing now: time moves to the next event (an arrival or a completion),
        after which `advance` offers the queue again. ValueError where no event is left (`has_event`) or a job is
        held or reserved."""
        code = engine.apply_defer(self.state_ref)
        if code == engine.NO_EVENT:
            raise ValueError("cannot defer: no job is running and none will arrive, so nothing would happen again")
        if code != engine.OK:
            raise ValueError("cannot defer now: defer only at a DECIDE_PICK point with no job held or reserved")

    def kill(self, j: int) -> None:
        """Kill running job `j` and requeue it (its progress is lost)."""
        j = job_index(j, "kill")
        if not 0 <= j < len(self.workload) or engine.kill_requeue(self.state_ref, j) != engine.OK:
            raise ValueError(f"job {j} is not running")

    def copy(self) -> "Simulator":
        """An independent simulator in this one's state, e.g. to try a decision and see how the sequence ends (the
        hindsight bounds, `schedrl.eval.hindsight`). The inputs that never change (submit and run times, limits,
        requests, capacity, configuration) are shared; everything a step writes is copied."""
        other = object.__new__(Simulator)
        other.workload, other.config, other.resources = self.workload, self.config, self.resources
        other.state = SimArrays(*(a if name in _SHARED else a.copy() for name, a in zip(SimArrays._fields, self.state)))
        return other

    def run(self, policy: Policy) -> Schedule:
        """Run to completion, asking `policy` at every decision point (see `Policy`)."""
        backfill = getattr(policy, "backfill", None)
        kill = getattr(policy, "kill", None)
        defer = getattr(policy, "defer", None)
        while True:
            code = self.advance()
            if code == FINISHED:
                return self.schedule()
            if code == DECIDE_PICK:
                if defer is not None and defer(self):
                    self.defer()
                    continue
                if kill is not None:
                    victim = kill(self)
                    if victim is not None:
                        self.kill(victim)
                self.pick(policy.pick(self))
            elif code == DECIDE_BACKFILL:
                self.backfill(backfill(self) if backfill else int(self.candidates[0]))

    def schedule(self) -> Schedule:
        """The schedule so far (complete once `advance` returned FINISHED)."""
        s = self.state
        return Schedule(self.workload, self.config, self.resources, s.cap.copy(), s.req, s.submit, s.start.copy(),
                        s.end.copy(), s.mode.copy(), s.killed.astype(bool), s.requeues.copy(), s.wasted.copy(),
                        s.status == DONE_STATUS)


__all__ = ["DECIDE_BACKFILL", "DECIDE_PICK", "FINISHED", "Policy", "Schedule", "Simulator"]
