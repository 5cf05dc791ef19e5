"""Episodes of the discrete-time cluster for evaluation: sequences, the episode metric, heuristics and trained policies.

No ray/torch: a trained policy comes in as any object with `act(sim)` (`policy.RLSchertPolicy`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.dtsim import DTSim, JobRecords, JobSequence, JobTable, sample_sequence
from schedrl.dtsim.heuristics import HEURISTICS, make_policy, run

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
    """The aggregates an env reports at the end of an episode."""
    r = sim.records()
    done = r.finish >= 0
    return {"slowdown": episode_slowdown(r, sim.now),
            "completion": float(np.mean(r.finish[done] - r.arrival[done])) if done.any() else float("nan"),
            "kills": float(r.kills.sum()), "dropped": float(r.dropped.sum()), "finished": float(done.sum()),
            "jobs": float(len(r.arrival)), "steps": float(sim.now), "truncated": float(sim.truncated)}


def sequence_for(table: JobTable, config: RLSchertEnvConfig, seed: int) -> JobSequence:
    """The job sequence of `seed`: Bernoulli arrivals over `simu_len` steps, redrawn (same generator) until non-empty."""
    rng = np.random.default_rng(seed)
    cluster = config.dtsim_config()
    for _ in range(1000):
        sequence = sample_sequence(table, cluster, rng)
        if len(sequence):
            return sequence
    raise ValueError(f"job_rate={config.job_rate} x simu_len={config.simu_len} gave no arrival in 1000 draws")


def validation_seeds(n: int, seed: int = 0) -> list[int]:
    """`n` sequence seeds for held-out sequences (disjoint in practice from training draws: derived with SeedSequence)."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence([seed, 12]).spawn(n)]


def run_sequences(make_policy_for: Callable[[int], object], config: RLSchertEnvConfig, seeds: Sequence[int],
                  table: JobTable | None = None) -> list[dict[str, float]]:
    """Each sequence of `seeds` run to its end with `make_policy_for(i)` (a fresh policy per sequence); summaries."""
    table = config.job_table() if table is None else table
    out = []
    for i, seed in enumerate(seeds):
        sim = DTSim(table, sequence_for(table, config, seed), config.dtsim_config())
        run(sim, make_policy_for(i))
        out.append(episode_summary(sim))
    return out


def heuristic_values(config: RLSchertEnvConfig, seeds: Sequence[int], kill: bool = False,
                     names: Sequence[str] = BASELINES, table: JobTable | None = None) -> dict[str, list[float]]:
    """Average slowdown per sequence of each heuristic (with RLSchert's kill rule when `kill`)."""
    table = config.job_table() if table is None else table
    label = "+kill" if kill else ""
    return {name + label: [s["slowdown"] for s in run_sequences(lambda i, n=name: make_policy(n, seed=i, kill=kill),
                                                                 config, seeds, table)]
            for name in names}
