"""Hand-built job tables and sims for the discrete-time cluster tests."""

from __future__ import annotations

import numpy as np

from schedrl.dtsim import DTSim, DTSimConfig, JobSequence, JobTable


def table_of(jobs: list[tuple[int, int, int, list[int]]]) -> JobTable:
    """A table from (real, prerun, cores, running re-estimates) tuples."""
    values, offsets = [], [0]
    for _, _, _, preds in jobs:
        values.extend(preds)
        offsets.append(len(values))
    cores = np.array([c for _, _, c, _ in jobs], dtype=np.int32)
    return JobTable(id=np.arange(len(jobs), dtype=np.int64), real=np.array([r for r, *_ in jobs], dtype=np.int32),
                    prerun=np.array([p for _, p, _, _ in jobs], dtype=np.int32), cores=cores,
                    units=(-(-cores // 10)).astype(np.int32), pred_values=np.array(values, dtype=np.int32),
                    pred_offsets=np.array(offsets, dtype=np.int64), source="hand-built")


def sim_of(jobs, arrivals=None, **config) -> DTSim:
    """A sim over every job of `jobs` (arriving at step 0 unless `arrivals` says otherwise)."""
    table = table_of(jobs)
    arrival = np.zeros(len(jobs), dtype=np.int32) if arrivals is None else np.array(arrivals, dtype=np.int32)
    return DTSim(table, JobSequence(arrival=arrival, row=np.arange(len(jobs))), DTSimConfig(**config))
