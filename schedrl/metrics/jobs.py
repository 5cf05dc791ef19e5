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
        # a zero-length job has slowdown 1 by convention (it waited nothing relative to no work)
        "slowdown": np.where(run > 0, turnaround / np.where(run > 0, run, 1.0), 1.0 + wait),
        "bsld": np.maximum((wait + run) / np.maximum(run, BSLD_TAU), 1.0),
        "mode": np.array(MODE_NAMES, dtype=object)[schedule.mode],
    }
