"""Job sequences: Bernoulli arrivals over discrete steps, each job drawn from a job table (RLSchert §4.1.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedrl.dtsim.config import DTSimConfig
from schedrl.dtsim.jobs import JobTable


@dataclass(frozen=True)
class JobSequence:
    """The jobs of one episode in arrival order."""

    arrival: np.ndarray
    """Arrival step of each job, non-decreasing (int32)."""
    row: np.ndarray
    """Row of each job in the job table (int64)."""
    predictability: np.ndarray | None = None
    """One uniform draw in [0, 1) per job (float64), or None: job j follows its re-estimates when its draw is
    below the cluster's `DTSimConfig.predictable` (RLSchert Table 9). `sample_sequence` draws them when the
    config's `predictable` is below 1; None means no draws were made, which only `predictable=1.0` accepts."""

    def __post_init__(self) -> None:
        if len(self.arrival) != len(self.row):
            raise ValueError(f"JobSequence: {len(self.arrival)} arrivals but {len(self.row)} rows")
        if self.predictability is not None:
            if len(self.predictability) != len(self.row):
                raise ValueError(f"JobSequence: {len(self.row)} jobs but {len(self.predictability)} predictability draws")
            self.predictability.flags.writeable = False
        if len(self.arrival) and np.any(np.diff(self.arrival) < 0):
            raise ValueError("JobSequence.arrival must be non-decreasing")
        self.arrival.flags.writeable = False
        self.row.flags.writeable = False

    def __len__(self) -> int:
        return len(self.arrival)


def sample_sequence(table: JobTable, config: DTSimConfig, rng: np.random.Generator) -> JobSequence:
    """One job arrives at each of the first `simu_len` steps with probability `job_rate`, drawn uniformly from the table.

    With `config.predictable` below 1, one more uniform draw per job follows (its `predictability`), from the
    same generator after the arrivals and rows: the arrivals and jobs are those of `predictable=1.0`, and
    every fraction below 1 sees the same draws, so the predictable jobs at 0.5 are a subset of those at 0.8.
    At 1.0 nothing more is drawn (the generator ends where it always did).
    """
    arrives = rng.random(config.simu_len) < config.job_rate
    steps = np.flatnonzero(arrives).astype(np.int32)
    rows = rng.integers(0, len(table), size=len(steps))
    draws = rng.random(len(steps)) if config.predictable < 1.0 else None
    return JobSequence(arrival=steps, row=rows, predictability=draws)
