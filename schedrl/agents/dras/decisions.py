"""DRAS's two decision levels on the simulator's `list` discipline, shared by the env and the policy.

The simulator stops at DECIDE_PICK (choose from the window) and DECIDE_BACKFILL (choose among the
backfill candidates). DRAS (§III-B) turns these into its two levels:

- **Level 1** (DECIDE_PICK): pick one of the W oldest waiting jobs. If it fits it starts ("ready");
  the first pick that does not fit becomes the **reserved** job. A reservation is held until the job
  starts: the simulator's list discipline asks afresh at every scheduling instance, so while the
  reserved job waits, level 1 is skipped and the reserved job is picked again automatically (it
  starts, as "reserved", as soon as it fits; otherwise it is reserved again at its new earliest start).
- **Level 2** (DECIDE_BACKFILL): pick one of the first W backfill candidates (queue order), one at a
  time, until none is left. `easy` candidates are EASY's (they end by the reservation or use only
  nodes the reservation leaves spare), `holes` only those that end by the reservation (the paper's
  wording). Either way a backfilled job never delays the reserved one. There is no "stop" action:
  the paper backfills "until no more job candidates", and starting a candidate can only use nodes
  that would otherwise idle until the reservation.
- **Starvation guard** (ours, `starvation_wait` > 0, two-level only): at a level-1 point with no held
  reservation, when the oldest waiting job has waited at least `starvation_wait`, it is picked without
  asking the agent: it starts if it fits, else it becomes the reserved job, as under FCFS+EASY.
- **Flat** (Decima-PG, `two_level=False`): level 1 only, no reservation and no backfilling; the mask
  allows only window jobs that fit now. When none fits, time advances to the next event (done by
  picking the oldest window job, which the simulator then holds until the next event).

Decisions the agent does not make (the held reservation, a flat wait, a level 2 with no candidate)
are taken here, so the env and the trained policy see exactly the same decision points.
"""

from __future__ import annotations

import numpy as np

from schedrl.agents.dras.config import DRASEnvConfig
from schedrl.sim import DECIDE_PICK, FINISHED, SimConfig, Simulator
from schedrl.sim.state import LAST_RESERVED, QUEUED, RESERVED, SHADOW, SHADOW_JOB

LEVEL_DONE, LEVEL_PICK, LEVEL_BACKFILL = 0, 1, 2


def sim_config_for(config: DRASEnvConfig) -> SimConfig:
    """The simulator semantics of a DRAS env: list discipline over a window of W jobs."""
    if config.two_level:
        return SimConfig(discipline="list", window=config.window, backfill="easy", backfill_choice="policy")
    return SimConfig(discipline="list", window=config.window, backfill="none")


def held_reservation(sim: Simulator) -> int:
    """The job reserved at an earlier scheduling instance and still waiting, or -1."""
    j = int(sim.state.iv[LAST_RESERVED])
    return j if j >= 0 and sim.state.status[j] == QUEUED else -1


def forced_pick(sim: Simulator, config: DRASEnvConfig) -> int:
    """At a DECIDE_PICK point: the pick DRAS makes without asking the agent, or -1 when the agent decides."""
    if config.two_level:
        held = held_reservation(sim)
        if held >= 0 or config.starvation_wait <= 0:
            return held
        oldest = int(sim.window[0])  # the queue is in submit order
        return oldest if sim.now - sim.state.submit[oldest] >= config.starvation_wait else -1
    window = sim.window
    if not sim.fits(window).any():
        return int(window[0])  # nothing fits: wait for the next event
    return -1


def pick_choices(sim: Simulator, config: DRASEnvConfig) -> tuple[np.ndarray, np.ndarray]:
    """(window jobs in slot order, 1.0 where the agent may pick the slot) at a level-1 decision."""
    window = sim.window.copy()
    valid = np.ones(len(window), dtype=bool) if config.two_level else sim.fits(window)
    return window, valid


def backfill_choices(sim: Simulator, config: DRASEnvConfig) -> np.ndarray:
    """The first W level-2 candidates (queue order) at a DECIDE_BACKFILL point."""
    cands = sim.candidates
    if config.backfill_rule == "holes" and len(cands):
        s = sim.state
        # EASY computed the reservation (shadow time) of the reserved job when it listed the candidates
        assert s.iv[SHADOW_JOB] == s.iv[RESERVED]
        cands = cands[sim.now + s.est[cands] <= s.fv[SHADOW]]
    return cands[: config.window].copy()


def next_decision(sim: Simulator, config: DRASEnvConfig) -> tuple[int, np.ndarray, np.ndarray]:
    """Advance to the next decision the agent makes: (level, slot jobs, valid slots); level 0 when finished."""
    while True:
        code = sim.advance()
        if code == FINISHED:
            return LEVEL_DONE, np.zeros(0, np.int64), np.zeros(0, bool)
        if code == DECIDE_PICK:
            forced = forced_pick(sim, config)
            if forced >= 0:
                sim.pick(forced)
                continue
            jobs, valid = pick_choices(sim, config)
            return LEVEL_PICK, jobs, valid
        jobs = backfill_choices(sim, config)
        if len(jobs) == 0:
            sim.backfill(None)
            continue
        return LEVEL_BACKFILL, jobs, np.ones(len(jobs), dtype=bool)
