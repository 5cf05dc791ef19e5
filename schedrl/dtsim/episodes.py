"""Whole episodes of the discrete-time cluster: a seeded sequence, run to its end, and its summary.

One implementation for every caller: the RLSchert/DeepRM agents (validation, the final table, `evaluate`),
the generated scenarios (`schedrl.scenarios`) and the sweeps. A policy is any object with `act(sim)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from schedrl.dtsim.cluster import DTSim
from schedrl.dtsim.config import DTSimConfig
from schedrl.dtsim.heuristics import HEURISTICS, make_policy, run
from schedrl.dtsim.jobs import JobTable
from schedrl.dtsim.metrics import JobRecords
from schedrl.dtsim.sequence import JobSequence, sample_sequence

BASELINES = tuple(HEURISTICS)
"""RLSchert Table 7's heuristics, in its column order: tetris, random, sjf, tetris*, saf."""


def episode_slowdown(records: JobRecords, now: int) -> float:
    """Average slowdown (finish - arrival) / real over the jobs that arrived and were not dropped (RLSchert Eq. 13).

    A job still unfinished (an episode cut at `max_seq`) counts as finishing `now`: a lower bound on its
    slowdown, so a truncated episode is never scored better than the jobs it left waiting would allow.
    """
    arrived = (records.arrival <= now) & ~records.dropped
    if not arrived.any():
        return float("nan")
    finish = np.where(records.finish >= 0, records.finish, now)[arrived]
    return float(np.mean((finish - records.arrival[arrived]) / records.real[arrived]))


def episode_summary(sim: DTSim) -> dict[str, float]:
    """The aggregates an episode reports at its end."""
    r = sim.records()
    done = r.finish >= 0
    return {"slowdown": episode_slowdown(r, sim.now),
            "completion": float(np.mean(r.finish[done] - r.arrival[done])) if done.any() else float("nan"),
            "kills": float(r.kills.sum()), "dropped": float(r.dropped.sum()), "finished": float(done.sum()),
            "jobs": float(len(r.arrival)), "steps": float(sim.now), "truncated": float(sim.truncated)}


def seeded_sequence(table: JobTable, cluster: DTSimConfig, seed: int) -> JobSequence:
    """The job sequence of `seed`: Bernoulli arrivals over `simu_len` steps, redrawn (same generator) until non-empty."""
    rng = np.random.default_rng(seed)
    for _ in range(1000):
        drawn = sample_sequence(table, cluster, rng)
        if len(drawn):
            return drawn
    raise ValueError(f"job_rate={cluster.job_rate} x simu_len={cluster.simu_len} gave no arrival in 1000 draws")


def held_out_seeds(n: int, seed: int = 0) -> list[int]:
    """`n` sequence seeds for held-out sequences (disjoint in practice from training draws: derived with SeedSequence)."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence([seed, 12]).spawn(n)]


def run_episodes(make_policy_for: Callable[[int], object], table: JobTable, cluster: DTSimConfig,
                 seeds: Sequence[int]) -> list[dict[str, float]]:
    """Each sequence of `seeds` run to its end with `make_policy_for(i)` (a fresh policy per sequence); summaries."""
    out = []
    for i, seed in enumerate(seeds):
        sim = DTSim(table, seeded_sequence(table, cluster, seed), cluster)
        run(sim, make_policy_for(i))
        out.append(episode_summary(sim))
    return out


def heuristic_summaries(table: JobTable, cluster: DTSimConfig, seeds: Sequence[int], kill: bool = False,
                        names: Sequence[str] = BASELINES) -> dict[str, list[dict[str, float]]]:
    """Every summary per sequence of each heuristic (with RLSchert's kill rule when `kill`), keyed `name[+kill]`."""
    label = "+kill" if kill else ""
    return {name + label: run_episodes(lambda i, n=name: make_policy(n, seed=i, kill=kill), table, cluster, seeds)
            for name in names}
