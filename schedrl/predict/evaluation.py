"""MAPE of remaining-runtime predictors on a trace's held-out jobs (numpy; predictors come in as objects)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from schedrl.predict.base import HISTORY, RuntimePredictor, queries_for
from schedrl.workload.workload import Workload

TRAIN_FRACTION = 0.7
"""Train on the first 70 % of the cleaned trace's jobs, test on the last 30 %."""
ELAPSED = (0.0, 600.0, 3600.0)
"""Elapsed times the test jobs are asked at: before they start, after 10 minutes, after an hour."""
MIN_REMAINING = 60.0
"""Test samples need this much true remaining time (seconds): below it percentage errors measure noise."""


def split(workload: Workload, train_fraction: float = TRAIN_FRACTION) -> int:
    """Index of the first test job."""
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction}")
    return int(len(workload) * train_fraction)


@dataclass(frozen=True)
class MapeRow:
    """MAPE of each predictor on the test jobs still running at one elapsed time."""

    elapsed: float
    """Seconds the jobs have run when asked."""
    jobs: int
    """Test jobs asked (run > elapsed, remaining >= MIN_REMAINING)."""
    mape: dict[str, float]
    """Predictor name -> mean absolute percentage error, percent."""
    log_error: dict[str, float]
    """Predictor name -> mean |ln(predicted / true)|: symmetric, unlike MAPE, which a prediction of ~0 holds at 100 %."""


def mape_table(workload: Workload, predictors: Sequence[RuntimePredictor], first_test: int,
               elapsed: Sequence[float] = ELAPSED, history: int = HISTORY,
               min_remaining: float = MIN_REMAINING) -> list[MapeRow]:
    """MAPE of every predictor on jobs [first_test, end) at each elapsed time (user histories use every earlier job)."""
    base = queries_for(workload, history)
    run = workload.columns["run"].astype(float)
    rows = []
    test = np.arange(first_test, len(workload))
    for e in elapsed:
        left = run[test] - e
        ask = test[left >= min_remaining]
        truth = run[ask] - e
        q = base.take(ask).at(e)
        preds = {p.name: p.predict(q) for p in predictors}
        rows.append(MapeRow(float(e), len(ask),
                            {n: float(100 * np.mean(np.abs(v - truth) / truth)) for n, v in preds.items()},
                            {n: float(np.mean(np.abs(np.log(v / truth)))) for n, v in preds.items()}))
    return rows


def format_table(trace: str, rows: Sequence[MapeRow]) -> str:
    """Markdown: one line per elapsed time, one MAPE column per predictor."""
    names = list(rows[0].mape)
    lines = [f"| trace | elapsed | test jobs | {' | '.join(f'MAPE {n}' for n in names)} | "
             f"{' | '.join(f'mean abs log err {n}' for n in names)} |",
             "|---|--:|--:|" + "--:|" * (2 * len(names))]
    for r in rows:
        lines.append(f"| {trace} | {r.elapsed:.0f} s | {r.jobs} | " + " | ".join(f"{r.mape[n]:.1f}%" for n in names)
                     + " | " + " | ".join(f"{r.log_error[n]:.2f}" for n in names) + " |")
    return "\n".join(lines)
