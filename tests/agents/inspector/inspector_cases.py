"""Small workloads the inspector tests share (module name unique across the suite)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES

OFFSET = 1_000_000.0
"""Submit times start here, so F1's 870 log10(submit) term barely differs between the jobs of a case and its
log10(request) x procs term decides (at submit 0 F1's key would put the first job first whatever it is)."""


def make_workload(submit, run, procs, max_procs, name="case") -> Workload:
    n = len(submit)
    columns = {field: np.full(n, -1) for field in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=np.asarray(submit, dtype=float), run=run, procs_req=procs,
                   procs_alloc=procs, time_req=run, status=np.ones(n))
    return Workload(columns, max_procs=max_procs, max_nodes=max_procs, name=name)


def block_then_burst() -> Workload:
    """Rejecting is better than accepting: a 10-processor machine; at t0 a whole-machine job of 5,000 s is proposed
    (the queue holds nothing else and the machine is idle); 60 s later eight 100-s one-processor jobs arrive.
    Accepting it (every base heuristic's choice) makes the eight wait ~4,940 s each (mean bounded slowdown ~44.9);
    rejecting it once lets them run first and it starts 100 s later (~1.0)."""
    submit = [OFFSET] + [OFFSET + 60.0] * 8
    return make_workload(submit, [5000] + [100] * 8, [10] + [1] * 8, 10, name="block-then-burst")


def write_swf(workload: Workload, path: Path) -> Path:
    """The workload as an SWF file (for the CLI and env configs, which take a trace path)."""
    from schedrl.workload.swf import write_swf as write

    write(workload, path)
    return path
