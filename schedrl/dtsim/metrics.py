"""Per-job records of a discrete-time episode and their averages (RLSchert Eqs. 13-14).

`schedrl.metrics` works on the event simulator's `Schedule` (seconds, users, bounded slowdown);
the discrete-time cluster needs only slowdown and completion time in steps, so they live here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class JobRecords:
    """One entry per job of the sequence, in arrival order; times in steps, -1 where it never happened."""

    arrival: np.ndarray
    """Step the job arrived."""
    start: np.ndarray
    """Step its last (successful) run started."""
    finish: np.ndarray
    """Step it finished: start + real, or -1 (dropped, or the episode was truncated first)."""
    real: np.ndarray
    """True run time."""
    units: np.ndarray
    """Resource units held while running."""
    prerun: np.ndarray
    """Pre-run runtime prediction (clipped to the config's job_len)."""
    kills: np.ndarray
    """Times the job was killed while running and requeued."""
    dropped: np.ndarray
    """True where the job arrived to a full backlog and was dropped."""


@dataclass(frozen=True)
class Summary:
    """Averages over the finished jobs of one episode."""

    jobs: int
    """Jobs in the sequence."""
    finished: int
    """Jobs that finished."""
    avg_slowdown: float
    """Mean of (finish - arrival) / real (RLSchert Eq. 13, DeepRM's slowdown)."""
    avg_completion: float
    """Mean of finish - arrival, steps (RLSchert Eq. 14)."""
    kills: int
    """Kill-and-requeue events."""
    dropped: int
    """Arrivals dropped because the backlog was full."""
    makespan: int
    """Last finish step."""


def slowdown(records: JobRecords) -> np.ndarray:
    """(finish - arrival) / real of every finished job (>= 1)."""
    done = records.finish >= 0
    return (records.finish[done] - records.arrival[done]) / records.real[done]


def summarize(records: JobRecords) -> Summary:
    """Average slowdown and completion time over the finished jobs."""
    done = records.finish >= 0
    completion = records.finish[done] - records.arrival[done]
    return Summary(jobs=len(records.arrival), finished=int(done.sum()),
                   avg_slowdown=float(slowdown(records).mean()) if done.any() else float("nan"),
                   avg_completion=float(completion.mean()) if done.any() else float("nan"),
                   kills=int(records.kills.sum()), dropped=int(records.dropped.sum()),
                   makespan=int(records.finish.max()) if done.any() else 0)
