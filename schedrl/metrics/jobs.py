"""Per-job metrics: wait, turnaround, slowdown, bounded slowdown, execution mode."""

from __future__ import annotations

import numpy as np

from schedrl.sim.simulator import Schedule
from schedrl.sim.state import MODE_NAMES

# Feitelson et al. 1997 bounded slowdown threshold; RLScheduler §II uses 10 s
BSLD_TAU = 10.0


def job_metrics(schedule: Schedule) -> dict[str, np.ndarray]:
    """One array per metric, one entry per job (trace order)."""
    wait = schedule.start - schedule.submit
    run = schedule.end - schedule.start
    turnaround = schedule.end - schedule.submit
    return {
        "wait": wait,
        "run": run,
        "turnaround": turnaround,
        # run time floored at 1 s so a zero-length job (kept only without cleaning) has a finite slowdown
        "slowdown": turnaround / np.maximum(run, 1.0),
        "bsld": np.maximum((wait + run) / np.maximum(run, BSLD_TAU), 1.0),
        "mode": np.array(MODE_NAMES, dtype=object)[schedule.mode],
    }
