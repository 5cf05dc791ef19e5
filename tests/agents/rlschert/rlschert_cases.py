"""Hand-built job tables, files and env configs for the RLSchert tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.dtsim import JobSequence, JobTable


def table_of(jobs: list[tuple[int, int, int, list[int]]]) -> JobTable:
    """A table from (real, prerun, cores, running re-estimates) tuples (10 cores = 1 unit)."""
    values, offsets = [], [0]
    for *_, preds in jobs:
        values.extend(preds)
        offsets.append(len(values))
    cores = np.array([c for _, _, c, _ in jobs], dtype=np.int32)
    return JobTable(id=np.arange(len(jobs), dtype=np.int64), real=np.array([r for r, *_ in jobs], dtype=np.int32),
                    prerun=np.array([p for _, p, _, _ in jobs], dtype=np.int32), cores=cores,
                    units=(-(-cores // 10)).astype(np.int32), pred_values=np.array(values, dtype=np.int32),
                    pred_offsets=np.array(offsets, dtype=np.int64), source="hand-built")


def all_at_zero(n: int) -> JobSequence:
    """Jobs 0..n-1 of the table, all arriving at step 0."""
    return JobSequence(arrival=np.zeros(n, dtype=np.int32), row=np.arange(n))


def write_jobs_csv(path: Path, jobs: list[tuple[int, int, int, list[int]]]) -> Path:
    """A VASP-format job file (plain CSV) of (real, prerun, cores, re-estimates) tuples."""
    lines = ["id,real,prerun_prediction,cores,running_predictions"]
    lines += [f"{i},{r},{p},{c},{' '.join(str(v) for v in preds)}" for i, (r, p, c, preds) in enumerate(jobs)]
    path.write_text("\n".join(lines) + "\n")
    return path


SMALL = dict(res_slot=4, job_width=2, num_nw=2, horizon=24, job_len=20, backlog=30, num_kill=2, max_seq=200,
             simu_len=20, job_rate=0.8)
"""A small cluster whose image is (24, 4 + 2 x 2 + 2) = (24, 10)."""


def small_config(**over) -> RLSchertEnvConfig:
    return RLSchertEnvConfig(**{**SMALL, **over})


def small_table(n: int = 200, seed: int = 0) -> JobTable:
    """Seeded jobs of 1-2 units and 1-15 steps whose re-estimates drift from the pre-run prediction to the truth;
    about a fifth are short-predicted long jobs the kill rule catches."""
    rng = np.random.default_rng(seed)
    jobs = []
    for _ in range(n):
        real = int(rng.integers(1, 16))
        prerun = int(rng.integers(2, 6)) if real > 11 else max(1, real + int(rng.integers(-2, 3)))
        preds = [max(1, round(prerun + (real - prerun) * min(1.0, 3 * (e + 1) / real))) for e in range(real - 1)]
        jobs.append((real, prerun, int(rng.choice([10, 20])), preds))
    return table_of(jobs)
