"""`Simulator.reservation`: the blocked job's shadow time and spare capacity at a backfill decision point (what the
learned-backfilling agent observes, issue 37). Hand-computed on a fixture; on a generated trace with inexact
estimates, for any choice of candidate, it is exactly the rule that made the candidates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from schedrl.heuristics import get_heuristic
from schedrl.sim import DECIDE_BACKFILL, DECIDE_PICK, FINISHED, SimConfig, Simulator
from schedrl.workload import read_swf
from schedrl.workload.lublin import generate_lublin
from schedrl.workload.sampling import sequence

FIXTURES = Path(__file__).parent / "fixtures"


def test_the_reservation_of_the_hand_computed_fixture():
    # backfill_policy.swf: job 2 (index 1) blocks at t=1, shadow 100, 2 spare processors (its header says why)
    sim = Simulator(read_swf(FIXTURES / "backfill_policy.swf", use_cache=False),
                    SimConfig(backfill="easy", backfill_choice="policy"))
    seen = []
    while (code := sim.advance()) != FINISHED:
        if code == DECIDE_PICK:
            sim.pick(int(sim.queue[0]))
            continue
        shadow, spare = sim.reservation
        seen.append((sim.now, shadow, spare.tolist(), sim.candidates.tolist()))
        sim.backfill({2: 3, 62: 2}.get(int(sim.now)) if len(seen) != 2 else None)
    # t=62: job 3 (index 2) runs past the shadow time on the spare processors
    assert seen == [(2.0, 100.0, [2.0], [2, 3]), (2.0, 100.0, [2.0], [2]), (62.0, 100.0, [2.0], [2])]
    assert sim.reservation is None  # nothing is blocked any more


def inexact(n: int, seed: int):
    """A generated trace whose requested times overstate the run times by up to 4x (jobs end early)."""
    jobs = generate_lublin(n, nodes=64, seed=seed)
    over = np.random.default_rng(seed).uniform(1.0, 4.0, len(jobs))
    return jobs.with_columns(time_req=np.ceil(jobs.run * over) + 1)


@pytest.mark.parametrize("config", [SimConfig(backfill="easy", backfill_choice="policy"),
                                    SimConfig(discipline="list", window=10, backfill="easy", backfill_choice="policy"),
                                    SimConfig.preset("rlscheduler", backfill="rlscheduler", backfill_choice="policy")],
                         ids=["easy", "list-easy", "rlscheduler"])
def test_the_candidates_are_exactly_the_jobs_the_reservation_admits(config):
    sim = Simulator(sequence(inexact(600, 1), 0, 400), config)
    base = get_heuristic("f1")
    rng = np.random.default_rng(0)
    s = sim.state
    points = 0
    while (code := sim.advance()) != FINISHED:
        if code == DECIDE_PICK:
            assert sim.reservation is None or sim.blocked >= 0
            sim.pick(base.pick(sim))
            continue
        assert code == DECIDE_BACKFILL
        shadow, spare = sim.reservation
        blocked = sim.blocked
        waiting = np.array([j for j in sim.queue if j != blocked], dtype=np.int64)
        fits = waiting[sim.fits(waiting)] if len(waiting) else waiting
        ends_by = sim.now + s.est[fits] <= shadow if config.backfill == "easy" else sim.now + s.est[fits] < shadow
        in_spare = (s.req[fits] <= spare + 1e-9).all(axis=1) if config.backfill == "easy" else np.zeros(len(fits), bool)
        assert sim.candidates.tolist() == fits[ends_by | in_spare].tolist()
        assert shadow >= sim.now and (spare >= -1e-9).all()
        points += 1
        cands = sim.candidates
        sim.backfill(int(cands[rng.integers(len(cands))]))
    assert points > 20
