"""Hand-made workloads for the MRSch tests."""

from __future__ import annotations

import numpy as np

from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES


def make_workload(submit, run, time_req, procs, max_procs, resources=None, capacity=None) -> Workload:
    n = len(submit)
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=submit, run=run, time_req=time_req, procs_req=procs,
                   procs_alloc=procs, user=np.arange(n) % 3, status=np.ones(n))
    wl = Workload(columns, max_procs=max_procs, max_nodes=max_procs)
    return wl.with_resources(resources, capacity) if resources else wl


def running_totals_within_capacity(schedule) -> bool:
    """At every start instant, the jobs running then use at most the capacity of every resource."""
    start, end, req, cap = schedule.start, schedule.end, schedule.req, schedule.capacity
    for t in np.unique(start):
        running = (start <= t) & (end > t)
        if np.any(req[running].sum(axis=0) > cap * (1 + 1e-9)):
            return False
    return True
