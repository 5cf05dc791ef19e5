"""Episodes of the discrete-time cluster for evaluation: sequences, the episode metric, heuristics and trained policies.

No ray/torch: a trained policy comes in as any object with `act(sim)` (`policy.RLSchertPolicy`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.dtsim import JobSequence, JobTable
from schedrl.dtsim.episodes import (  # noqa: F401  (re-exported: the agent's env and tests read them here)
    BASELINES, episode_slowdown, episode_summary, heuristic_summaries, run_episodes, seeded_sequence,
)
from schedrl.dtsim.episodes import held_out_seeds as validation_seeds  # noqa: F401


def sequence_for(table: JobTable, config: RLSchertEnvConfig, seed: int) -> JobSequence:
    """The job sequence of `seed` on the env's cluster (`schedrl.dtsim.episodes.seeded_sequence`)."""
    return seeded_sequence(table, config.dtsim_config(), seed)


def run_sequences(make_policy_for: Callable[[int], object], config: RLSchertEnvConfig, seeds: Sequence[int],
                  table: JobTable | None = None) -> list[dict[str, float]]:
    """Each sequence of `seeds` run to its end with `make_policy_for(i)` (a fresh policy per sequence); summaries."""
    table = config.job_table() if table is None else table
    return run_episodes(make_policy_for, table, config.dtsim_config(), seeds)


def heuristic_values(config: RLSchertEnvConfig, seeds: Sequence[int], kill: bool = False,
                     names: Sequence[str] = BASELINES, table: JobTable | None = None) -> dict[str, list[float]]:
    """Average slowdown per sequence of each heuristic (with RLSchert's kill rule when `kill`)."""
    table = config.job_table() if table is None else table
    return {name: [s["slowdown"] for s in summaries]
            for name, summaries in heuristic_summaries(table, config.dtsim_config(), seeds, kill, names).items()}
