"""Where the inspector may reject the base's proposal: the one rule the env's action mask, the trained policy (and
its export) and the hindsight teacher's labels all read (`RejectMask`), so a student is never taught a rejection its
mask forbids and a policy never takes one its env never offered.

Three conditions, each a reason a rejection cannot help:

- **an event to wait for** (always): a rejection waits for the next arrival or completion; with no job running and
  none to arrive, nothing would ever happen again.
- **the starvation guard** (`starvation_wait` > 0 seconds): a proposal that has waited that long is always accepted,
  so a policy cannot win on the mean by holding back a few jobs for ever.
- **the queue guard** (`queue_wait` > 0 seconds, issue 55): while any waiting job has waited that long, nothing is
  rejected. The starvation guard protects only the job proposed; a job the base rule never proposes (F1 ranks a wide
  job last) can wait on while rejections of others lengthen the backlog. On Sandia-Ross one window's mean bounded
  slowdown went from F1's 129 to 513 under a 24 h guard alone (its longest wait 48 h to 89 h); with this guard at 12 h
  it was 107 (docs/experiments/inspector-trusted.md, 2026-11-29, "Can the base be chosen online?").
- **only where it can pay** (`where="pays"`, issue 55): a rejection is offered only where some other waiting job
  competes with the proposal for the machine (`rejection_can_pay`). On a lightly loaded machine, where the proposal
  is the only job waiting or every waiting job fits beside it, the policy is then its base rule by construction:
  no network's mistake can make a job wait there. What it gives up: the rejections that pay only through a job not
  yet submitted (holding a wide job back for a burst of small ones that has not arrived), which the teacher's
  hindsight sees and an online mask cannot.
- **and cheaply** (`where="cheap"`): `pays`, and the wait the rejection is expected to impose on the proposal (until
  the next completion by estimate or the next arrival at the recent rate, `expected_delay`) is at most a tenth of its
  requested time: a rejection waits for the next event, which on a quiet machine may be hours away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from schedrl.sim import Simulator

WHERE = ("any", "pays", "cheap")
"""`RejectMask.where`: `any` (wherever an event is left and the guard allows: the inspector of runs before issue 55),
`pays` (also only where `rejection_can_pay`) or `cheap` (`pays`, and the wait it imposes is short: `rejection_is_cheap`)."""
DELAY_SHARE = 0.1
"""`cheap`: the longest expected wait a rejection may impose on the proposal, as a share of its requested time."""
RECENT_ARRIVALS = 32
"""`cheap`: the arrivals whose mean gap estimates when the next one comes."""


def rejection_can_pay(sim: Simulator, proposal: int) -> bool:
    """Whether rejecting `proposal` can help another job already waiting, judged on what an online scheduler knows
    (the queue, the free capacity, the running jobs' estimated ends).

    - The proposal fits now: accepting starts it, and it holds its request until its estimated end. The rejection can
      pay only if another waiting job is blocked by it: at some moment before that end (now, or after running jobs
      end by their estimates) the other job would fit in the free capacity, but not in what is left once the
      proposal takes its share.
    - The proposal does not fit: accepting holds the machine for it. The rejection can pay only if another waiting
      job fits in the capacity free now.
    """
    s = sim.state
    queue = sim.queue
    others = queue[queue != proposal]
    if others.size == 0:
        return False
    need = s.req[proposal]
    free = s.free
    wants = s.req[others]
    if not sim.fits(np.array([proposal], np.int64))[0]:
        return bool(sim.fits(others.astype(np.int64)).any())
    running = sim.running()
    now = sim.now
    ends = np.maximum(s.start[running] + s.est[running], now)
    before = ends < now + s.est[proposal]
    order = np.argsort(ends[before], kind="stable")
    levels = np.vstack([free[None, :], free[None, :] + np.cumsum(s.req[running[before][order]], axis=0)])
    if levels.shape[1] == 1:  # one resource: the free capacity only grows, so a binary search per waiting job
        level = levels[:, 0]
        first = np.searchsorted(level, wants[:, 0], side="left")  # the first level the job fits in
        inside = first < len(level)
        return bool((level[first[inside]] < wants[inside, 0] + need[0]).any())
    wants = np.unique(wants, axis=0)
    fits = (wants[:, None, :] <= levels[None, :, :]).all(-1)
    beside = (wants[:, None, :] <= (levels - need)[None, :, :]).all(-1)
    return bool((fits & ~beside).any())


def expected_delay(sim: Simulator) -> float:
    """How long a rejection now is expected to wait, by what is known: until the earlier of the next completion by
    the running jobs' estimates and the next arrival at the mean gap of the last `RECENT_ARRIVALS` submissions
    (infinite where neither is known)."""
    s = sim.state
    now = sim.now
    running = sim.running()
    completion = float(np.maximum(s.start[running] + s.est[running], now).min()) - now if running.size else np.inf
    seen = int(np.searchsorted(s.submit, now, side="right"))
    recent = s.submit[max(0, seen - RECENT_ARRIVALS - 1):seen]
    arrival = float(np.diff(recent).mean()) if len(recent) > 1 else np.inf
    return min(completion, arrival)


def rejection_is_cheap(sim: Simulator, proposal: int) -> bool:
    """Whether the wait a rejection is expected to impose on `proposal` (`expected_delay`) is at most `DELAY_SHARE`
    of its requested time: on a quiet machine, where the next event may be hours away, a short job is never held."""
    return expected_delay(sim) <= DELAY_SHARE * float(sim.state.est[proposal])


@dataclass(frozen=True)
class RejectMask:
    """Where a rejection is allowed (see the module): the inspector env's `starvation_wait` and `reject_where`."""

    starvation_wait: float = 0.0
    """Seconds after which a proposal cannot be rejected (0: no guard)."""
    where: str = "any"
    """`any`, `pays` or `cheap` (`WHERE`)."""
    queue_wait: float = 0.0
    """Seconds: while a waiting job has waited this long, nothing is rejected (0: no queue guard)."""

    def __post_init__(self) -> None:
        if self.where not in WHERE:
            raise ValueError(f"reject_where must be one of {', '.join(WHERE)}, got {self.where!r}")
        if not self.queue_wait >= 0:
            raise ValueError(f"queue_starvation_wait must be >= 0 seconds (0: off); got {self.queue_wait}")

    @classmethod
    def of(cls, env_config: Mapping[str, Any]) -> "RejectMask":
        """The mask of an inspector env config (a dict or an `InspectorEnvConfig`; records before issue 55 have no
        `reject_where`: `any`)."""
        get = env_config.get if isinstance(env_config, Mapping) else lambda k, d: getattr(env_config, k, d)
        return cls(float(get("starvation_wait", 0.0) or 0.0), str(get("reject_where", "any") or "any"),
                   float(get("queue_starvation_wait", 0.0) or 0.0))

    def guarded(self, sim: Simulator, proposal: int) -> bool:
        """A guard forbids rejecting `proposal`: it has waited `starvation_wait`, or some waiting job has waited
        `queue_wait` (`queue_guarded`)."""
        if self.starvation_wait > 0 and proposal >= 0 and sim.now - sim.state.submit[proposal] >= self.starvation_wait:
            return True
        return self.queue_guarded(sim)

    def queue_guarded(self, sim: Simulator) -> bool:
        """The queue guard holds: a waiting job has waited at least `queue_wait` (the queue is in submit order, so
        its first job has waited longest)."""
        queue = sim.queue
        return self.queue_wait > 0 and queue.size > 0 and sim.now - float(sim.state.submit[queue[0]]) >= self.queue_wait

    def allows(self, sim: Simulator, proposal: int = -1) -> bool:
        """Whether rejecting `proposal` is allowed at this point."""
        if not sim.has_event or self.guarded(sim, proposal):
            return False
        if self.where == "any" or proposal < 0:
            return True
        if self.where == "cheap" and not rejection_is_cheap(sim, proposal):
            return False
        return rejection_can_pay(sim, proposal)


def reject_allowed(sim: Simulator, proposal: int = -1, starvation_wait: float = 0.0, where: str = "any") -> bool:
    """`RejectMask(starvation_wait, where).allows(sim, proposal)`."""
    return RejectMask(starvation_wait, where).allows(sim, proposal)


__all__ = ["RejectMask", "WHERE", "expected_delay", "reject_allowed", "rejection_can_pay", "rejection_is_cheap"]
