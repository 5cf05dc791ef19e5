"""Tiny in-memory workloads for the DRAS tests."""

from __future__ import annotations

import numpy as np

from schedrl.workload.fields import FIELD_NAMES
from schedrl.workload.workload import Workload


def make_workload(jobs: list[tuple[float, int, float, float]], machine: int, name: str = "tiny") -> Workload:
    """Jobs as (submit, procs, run, requested time), in submit order, on a `machine`-processor cluster."""
    n = len(jobs)
    cols = {f: np.full(n, -1.0) for f in FIELD_NAMES}
    cols["job_id"] = np.arange(1, n + 1, dtype=float)
    cols["submit"] = np.array([j[0] for j in jobs], dtype=float)
    cols["procs_req"] = cols["procs_alloc"] = np.array([j[1] for j in jobs], dtype=float)
    cols["run"] = np.array([j[2] for j in jobs], dtype=float)
    cols["time_req"] = np.array([j[3] for j in jobs], dtype=float)
    cols["status"] = np.ones(n)
    return Workload(cols, max_procs=machine, max_nodes=machine, name=name)


# Hand-checked learning instance: 4 processors, every job submitted at t = 0, W = 2, reward = node
# utilisation after each selection (Eq. 1 with w1 = w2 = 0, w3 = 1).
#   job  procs  run (= requested)
#   r0     2    100
#   x      4    100
#   c1     1     50
#   c2     2    100
# Best: level 1 starts x (util 1.0), then picks r0, which is reserved (1.0); at t = 100 x ends, r0
# starts by its reservation, level 1 starts c2 (1.0), then c1 is reserved (1.0): return 4.0.
# Starting r0 first instead reserves x at t = 100 with two idle processors to backfill; the best
# level-2 choice there (c2, 1.0, over c1, 0.75) still returns only 3.0.
LEARNING_JOBS = [(0, 2, 100, 100), (0, 4, 100, 100), (0, 1, 50, 50), (0, 2, 100, 100)]
LEARNING_MACHINE = 4
LEARNING_OPTIMUM = 4.0
