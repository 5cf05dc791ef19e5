"""The 18 fields of the Standard Workload Format, declared once.

Feitelson et al., "Experience with using the Parallel Workloads Archive" (JPDC 2014), Table 1;
https://www.cs.huji.ac.il/labs/parallel/workload/swf.html. Every reader, writer and
`Workload` column is derived from this table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SwfField:
    """One SWF column."""

    index: int
    """0-based position on a job line."""
    name: str
    """Column name used by `Workload` and `to_pandas()`."""
    dtype: type
    """numpy dtype of the column (int64 for counts and seconds, float64 for averages)."""
    description: str
    """What the archive says the field holds."""


SWF_FIELDS: tuple[SwfField, ...] = (
    SwfField(0, "job_id", np.int64, "job number, a counter starting at 1"),
    SwfField(1, "submit", np.int64, "submit time in seconds since the log start"),
    SwfField(2, "wait", np.int64, "wait time in seconds (start - submit)"),
    SwfField(3, "run", np.int64, "run time in seconds (end - start)"),
    SwfField(4, "procs_alloc", np.int64, "number of allocated processors"),
    SwfField(5, "cpu_avg", np.float64, "average CPU time used per processor, seconds"),
    SwfField(6, "mem_used", np.float64, "used memory per processor, KB"),
    SwfField(7, "procs_req", np.int64, "requested number of processors"),
    SwfField(8, "time_req", np.int64, "requested (user-estimated) run time, seconds"),
    SwfField(9, "mem_req", np.float64, "requested memory per processor, KB"),
    SwfField(10, "status", np.int64, "1 completed, 0 failed, 5 cancelled, -1 unknown"),
    SwfField(11, "user", np.int64, "user id"),
    SwfField(12, "group", np.int64, "group id"),
    SwfField(13, "app", np.int64, "executable (application) number"),
    SwfField(14, "queue", np.int64, "queue number"),
    SwfField(15, "partition", np.int64, "partition number"),
    SwfField(16, "prev_job", np.int64, "preceding job number (dependency)"),
    SwfField(17, "think_time", np.int64, "think time from the preceding job, seconds"),
)

N_FIELDS = len(SWF_FIELDS)
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in SWF_FIELDS)
INT_FIELDS: tuple[str, ...] = tuple(f.name for f in SWF_FIELDS if f.dtype is np.int64)
