"""Small workloads the learned-backfilling tests share (module name unique across the suite)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES

OFFSET = 1_000_000.0
"""Submit times start here (F1's 870 log10(submit) term is undefined at 0)."""


def make_workload(submit, run, procs, max_procs, time_req=None, name="case") -> Workload:
    n = len(submit)
    columns = {field: np.full(n, -1) for field in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=np.asarray(submit, dtype=float), run=run, procs_req=procs,
                   procs_alloc=procs, time_req=run if time_req is None else time_req, status=np.ones(n))
    return Workload(columns, max_procs=max_procs, max_nodes=max_procs, name=name)


def long_before_short() -> Workload:
    """A non-first-fit backfill is better: a 10-processor machine. t0: job 0 (5 procs, 1,000 s) starts. t0+1: job 1
    (10 procs, 100 s) is held, reserved at t0+1,000. t0+2: jobs 2 (5 procs, 900 s) and 3 (5 procs, 10 s) arrive; both
    end by the reservation and either fits the 5 free processors, not both: the one decision with a choice.
    First fit (queue order) starts job 2; job 3 then waits until t0+902 (bounded slowdown 91; the mean over the four
    jobs is 26.0). Starting job 3 first lets job 2 start at t0+12 (mean about 3.5)."""
    submit = [OFFSET, OFFSET + 1, OFFSET + 2, OFFSET + 2]
    return make_workload(submit, [1000, 100, 900, 10], [5, 10, 5, 5], 10, name="long-before-short")


def write_swf(workload: Workload, path: Path) -> Path:
    """The workload as an SWF file (for the CLI and env configs, which take a trace path)."""
    from schedrl.workload.swf import write_swf as write

    write(workload, path)
    return path
