"""The decision points of learned backfilling, shared by the env and the trained policy (so both see the same ones).

The simulator runs with `backfill_choice="policy"`: it stops at DECIDE_PICK (the base heuristic answers, never the
network) and at DECIDE_BACKFILL (the candidates: waiting jobs that fit now and, by their requested times, do not delay
the blocked job's reservation). The network is asked only where there is a choice: two or more candidates, or, with
`skip`, one candidate (start it or start none before the next event). A single candidate without `skip` starts, as
under EASY. The network sees the first `slots` candidates in queue order; action `k < slots` starts the k-th,
action `slots` (allowed only with `skip`) starts none.
"""

from __future__ import annotations

import numpy as np

from schedrl.sim import DECIDE_PICK, FINISHED, Simulator


def forced(candidates: np.ndarray, skip: bool) -> int | None:
    """The candidate to start without asking the network (the only one, without `skip`), or None: the network
    decides."""
    return int(candidates[0]) if len(candidates) == 1 and not skip else None


def choices(sim: Simulator, slots: int) -> np.ndarray:
    """The candidates the network chooses among at a DECIDE_BACKFILL point (the first `slots`, queue order)."""
    return sim.candidates[:slots].copy()


def next_decision(sim: Simulator, base, skip: bool, slots: int) -> np.ndarray | None:
    """Advance `sim` to the next point where the network decides: its candidates (see `choices`), or None when the
    sequence is scheduled. Picks go to `base`; forced backfills start."""
    while True:
        code = sim.advance()
        if code == FINISHED:
            return None
        if code == DECIDE_PICK:
            sim.pick(int(base.pick(sim)))
            continue
        cands = choices(sim, slots)
        job = forced(cands, skip)
        if job is None:
            return cands
        sim.backfill(job)


def apply(sim: Simulator, candidates: np.ndarray, action: int, slots: int) -> None:
    """Carry out `action` at a decision with `candidates` (action `slots`: start none before the next event)."""
    sim.backfill(None if action == slots else int(candidates[action]))
