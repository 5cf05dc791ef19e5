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

    def __post_init__(self) -> None:
        if len(self.arrival) != len(self.row):
            raise ValueError(f"JobSequence: {len(self.arrival)} arrivals but {len(self.row)} rows")
        if len(self.arrival) and np.any(np.diff(self.arrival) < 0):
            raise ValueError("JobSequence.arrival must be non-decreasing")
        self.arrival.flags.writeable = False
        self.row.flags.writeable = False

    def __len__(self) -> int:
        return len(self.arrival)


def sample_sequence(table: JobTable, config: DTSimConfig, rng: np.random.Generator) -> JobSequence:
    """One job arrives at each of the first `simu_len` steps with probability `job_rate`, drawn uniformly from the table."""
    arrives = rng.random(config.simu_len) < config.job_rate
    steps = np.flatnonzero(arrives).astype(np.int32)
    return JobSequence(arrival=steps, row=rng.integers(0, len(table), size=len(steps)))
