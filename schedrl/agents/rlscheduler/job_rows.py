"""The compiled part of the RLScheduler observation: the job rows of the visible queue, in one pass.

`ObservationBuilder.build` is called once per decision, and in numpy it was ~35 µs of small-array
operations per call: most of an env step's time. Here one compiled loop fills the rows and the mask in
place (a few µs); the columns are those of `observation.FEATURES` and are computed exactly as
before (float64 arithmetic, stored as float32), which `tests/agents/rlscheduler/test_observation.py`
checks against a plain-numpy reference. Key-feature columns stay in Python (`observation.py`).
"""

from __future__ import annotations

import numpy as np

from schedrl.jit import njit
from schedrl.sim.backfill import fits_now
from schedrl.sim.state import NOW, Q_LEN


@njit
def fill_job_rows(s, jobs, mask, visible, user, group, app, time_scale, log_times):
    """Write the first `len(mask)` queued jobs' rows into `jobs`, 1s into `mask` and their indices into
    `visible`; zero the rest. Returns the number of visible jobs."""
    k = min(s.iv[Q_LEN], mask.shape[0])
    jobs[:] = 0.0
    mask[:] = 0.0
    now = s.fv[NOW]
    n_res = s.cap.shape[0]
    scale = np.log1p(time_scale) if log_times else time_scale
    free = s.free / s.cap  # the machine's free share of each resource: the same in every row
    for i in range(k):
        j = s.queue[i]
        visible[i] = j
        wait = now - s.submit[j]
        est = s.est[j]
        if log_times:
            jobs[i, 0] = min(np.log1p(wait) / scale, 1.0)
            jobs[i, 1] = min(np.log1p(est) / scale, 1.0)
        else:
            jobs[i, 0] = min(wait / scale, 1.0)
            jobs[i, 1] = min(est / scale, 1.0)
        jobs[i, 2] = s.req[j, 0] / s.cap[0]
        jobs[i, 3] = user[j]
        jobs[i, 4] = group[j]
        jobs[i, 5] = app[j]
        jobs[i, 6] = 1.0 if fits_now(s, j) else 0.0  # the simulator's own fit rule (same tolerance as backfilling)
        jobs[i, 7] = free[0]
        for r in range(1, n_res):
            jobs[i, 6 + 2 * r] = s.req[j, r] / s.cap[r]
            jobs[i, 7 + 2 * r] = free[r]
        mask[i] = 1.0
    return k
