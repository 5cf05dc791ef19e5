"""Trajectory filtering (RLScheduler §IV-C): train first on sequences of "moderate" difficulty.

Every candidate start index is scored with SJF on the fast simulator (compiled path: a 10,000-job
trace takes seconds). Phase 1 keeps the sequences whose SJF metric lies in R = (median, 2 * mean)
of that distribution, cutting both the trivial ones (nothing to learn) and the rare extreme ones
(high-variance rewards); phase 2 trains on all sequences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedrl.heuristics import get_heuristic
from schedrl.metrics import summarize
from schedrl.sim import SimConfig, Simulator
from schedrl.workload.workload import Workload


@dataclass(frozen=True)
class FilterResult:
    """SJF scores of every start and the phase-1 starts kept."""

    scores: np.ndarray
    """SJF metric of the sequence starting at each index (NaN where not scored)."""
    kept: np.ndarray
    """Start indices whose score lies in (low, high)."""
    low: float
    """Lower bound of R (the median)."""
    high: float
    """Upper bound of R (twice the mean)."""


def sjf_scores(workload: Workload, length: int, config: SimConfig, metric: str = "bsld",
               stride: int = 1) -> np.ndarray:
    """SJF's metric on the sequence starting at every `stride`-th index (NaN elsewhere)."""
    n_starts = len(workload) - length + 1
    if n_starts < 1:
        raise ValueError(f"trace has {len(workload)} jobs, fewer than the sequence length {length}")
    scores = np.full(n_starts, np.nan)
    sjf = get_heuristic("sjf")
    for start in range(0, n_starts, stride):
        schedule = sjf.run(Simulator(workload[start:start + length], config))
        scores[start] = summarize(schedule).value(metric)
    return scores


def filter_starts(workload: Workload, length: int, config: SimConfig, metric: str = "bsld",
                  stride: int = 1) -> FilterResult:
    """Phase-1 starts: SJF metric in (median, 2 * mean) (RLScheduler §IV-C)."""
    scores = sjf_scores(workload, length, config, metric, stride)
    valid = scores[~np.isnan(scores)]
    low, high = float(np.median(valid)), float(2.0 * np.mean(valid))
    kept = np.flatnonzero((scores > low) & (scores < high))
    if kept.size == 0:
        raise ValueError(f"trajectory filtering kept no sequence (R = ({low:.3g}, {high:.3g})); disable filtering")
    return FilterResult(scores, kept, low, high)


def phase1_episodes(phase1_iterations: int, train_batch_size: int, sequence_length: int,
                    num_env_runners: int, num_envs_per_env_runner: int) -> int:
    """Episodes each env instance draws from the filtered starts to last `phase1_iterations` iterations."""
    per_iter = max(1, train_batch_size // sequence_length)
    n_envs = max(1, num_env_runners) * num_envs_per_env_runner
    return int(np.ceil(phase1_iterations * per_iter / n_envs))
