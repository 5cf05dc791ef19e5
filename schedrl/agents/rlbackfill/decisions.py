"""The decision points of learned backfilling, shared by the env and the trained policy (so both see the same ones).

The simulator runs with `backfill_choice="policy"`: it stops at DECIDE_PICK (the base heuristic answers, never the
network) and at DECIDE_BACKFILL (the candidates: waiting jobs that fit now and, by their requested times, do not delay
the blocked job's reservation). The network is asked only where there is a choice: two or more candidates, or, with
`skip`, one candidate (start it or start none before the next event). A single candidate without `skip` starts, as
under EASY. The network sees the first `slots` candidates in queue order; action `k < slots` starts the k-th,
action `slots` (allowed only with `skip`) starts none.

Between two choices the base's picks and the forced backfills run inside compiled code (`_to_choice`) for a named
heuristic or a tuned rule; any other base object is asked through `pick(sim)` in Python. Both give the same schedule
(`tests/agents/rlbackfill/test_rlbackfill_env.py`).
"""

from __future__ import annotations

import numpy as np

from schedrl.heuristics import keys
from schedrl.jit import njit
from schedrl.sim import DECIDE_PICK, FINISHED, Simulator
from schedrl.sim.engine import STUCK, advance, apply_backfill, apply_pick
from schedrl.sim.state import N_CAND


def forced(candidates: np.ndarray, skip: bool) -> int | None:
    """The candidate to start without asking the network (the only one, without `skip`), or None: the network
    decides."""
    return int(candidates[0]) if len(candidates) == 1 and not skip else None


def choices(sim: Simulator, slots: int) -> np.ndarray:
    """The candidates the network chooses among at a DECIDE_BACKFILL point (the first `slots`, queue order)."""
    return sim.candidates[:slots].copy()


@njit
def _to_choice(s, kind, coef, procs, rand, skip):
    """Advance with the base's picks and the forced backfills until a choice (DECIDE_BACKFILL), FINISHED or STUCK."""
    while True:
        code = advance(s)
        if code == FINISHED or code == STUCK:
            return code
        if code == DECIDE_PICK:
            apply_pick(s, keys.choose_rule(kind, coef, s, procs, rand))
        elif s.iv[N_CAND] == 1 and not skip:
            apply_backfill(s, s.cand[0])
        else:
            return code


def compiled_base(base, sim: Simulator):
    """(kind, coefficients, processors, random numbers) of the base for `_to_choice`, or None for a base object that
    has no compiled key (asked through `pick`)."""
    from schedrl.heuristics.heuristic import Heuristic
    from schedrl.heuristics.tuned import TunedRule

    procs = np.asarray(sim.workload.procs_req, dtype=np.float64)
    if type(base) is Heuristic:
        return base.kind, keys.NO_COEFFICIENTS, procs, base._rand
    if type(base) is TunedRule:
        base._check(sim.workload)  # a rule fitted on another trace is refused, as its `pick` refuses it
        return keys.LINEAR, base.coefficients, procs, base._rand
    return None


def next_decision(sim: Simulator, base, skip: bool, slots: int, compiled: bool = True) -> np.ndarray | None:
    """Advance `sim` to the next point where the network decides: its candidates (see `choices`), or None when the
    sequence is scheduled. Picks go to `base`; forced backfills start. `compiled=False` asks `base.pick` in Python
    (the reference the compiled path is tested against)."""
    fast = compiled_base(base, sim) if compiled else None
    while True:
        if fast is not None:
            code = int(_to_choice(sim.state_ref, *fast, bool(skip)))
            if code == STUCK:
                raise RuntimeError("simulation stuck: a waiting job can never fit the machine")
        else:
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
