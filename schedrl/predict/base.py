"""The predictor interface and its queries."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from schedrl.predict.history import user_history
from schedrl.workload.workload import Workload

HISTORY = 4
"""Default number of the user's recent run times in a query."""


@dataclass(frozen=True)
class Queries:
    """Jobs to predict for: what a scheduler knows about each when it asks (seconds throughout)."""

    procs: np.ndarray
    """Requested processors."""
    requested: np.ndarray
    """Requested (user-estimated) run time."""
    history: np.ndarray
    """(n, k) run times of the user's last k jobs that had ended by the submission, most recent first; NaN if fewer."""
    elapsed: np.ndarray
    """Time the job has run so far (0 before it starts)."""

    def __post_init__(self) -> None:
        n = len(self.procs)
        if len(self.requested) != n or len(self.elapsed) != n or self.history.ndim != 2 or len(self.history) != n:
            raise ValueError("Queries: procs, requested, elapsed and history rows must have one entry per job")

    def __len__(self) -> int:
        return len(self.procs)

    def take(self, index: np.ndarray) -> "Queries":
        """The queries at `index`."""
        return Queries(self.procs[index], self.requested[index], self.history[index], self.elapsed[index])

    def at(self, elapsed: np.ndarray | float) -> "Queries":
        """The same jobs asked at another elapsed time."""
        return Queries(self.procs, self.requested, self.history,
                       np.broadcast_to(np.asarray(elapsed, dtype=float), self.procs.shape).copy())


def queries_for(workload: Workload, k: int = HISTORY, elapsed: np.ndarray | float = 0.0) -> Queries:
    """Queries for every job of `workload`, with causal user histories (`user_history`)."""
    c = workload.columns
    submit, run = c["submit"].astype(np.int64), c["run"].astype(np.int64)
    end = submit + np.maximum(c["wait"], 0) + run
    procs = np.where(c["procs_req"] > 0, c["procs_req"], c["procs_alloc"]).astype(float)
    history = user_history(submit, end, run, c["user"], k)
    n = len(workload)
    return Queries(procs=procs, requested=c["time_req"].astype(float), history=history,
                   elapsed=np.broadcast_to(np.asarray(elapsed, dtype=float), (n,)).copy())


class RuntimePredictor(ABC):
    """Predicts a job's remaining run time from its request, its user's history and its elapsed time."""

    name: str = "predictor"
    """Column label in tables."""

    def fit(self, workload: Workload) -> "RuntimePredictor":
        """Learn from the jobs of `workload` (a trace's training part); rule-based predictors learn nothing."""
        return self

    @abstractmethod
    def predict(self, queries: Queries) -> np.ndarray:
        """Remaining run time of each query, seconds (>= 1)."""
