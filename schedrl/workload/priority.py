"""DRAS's per-job priority flag: the trace's `priority` column, else a job-size rule.

DRAS (Fan et al., IPDPS 2021, §III-B) gives every waiting job a priority bit; on Theta, capability
jobs, those of at least 802 of the 4,360 nodes (§IV-A), have priority. CQGym's Theta trace carries
the flag as its 19th column (`Workload.extras["priority"]`); other traces get it from the rule.
"""

from __future__ import annotations

import numpy as np

from schedrl.workload.extras import DEFAULT_FIRST_EXTRA
from schedrl.workload.workload import Workload

# DRAS §IV-A: Theta's capability jobs are those of >= 802 of its 4,360 schedulable nodes
THETA_CAPABILITY_FRACTION = 802 / 4360


def priority_flags(workload: Workload, min_fraction: float = THETA_CAPABILITY_FRACTION) -> np.ndarray:
    """One bool per job: the `priority` extra column (non-zero) when the trace has one, else
    "requested processors >= `min_fraction` of the machine" (ceil, so 802/4360 on 4,360 nodes is 802).

    `min_fraction` is used only without a `priority` column; it must be in (0, 1].
    """
    if DEFAULT_FIRST_EXTRA in workload.extras:
        return np.asarray(workload.extras[DEFAULT_FIRST_EXTRA]) != 0
    if not 0.0 < min_fraction <= 1.0:
        raise ValueError(f"min_fraction must be a fraction of the machine in (0, 1], got {min_fraction!r}")
    # round first: 802/4360 * 4360 is 802.0000000000001 in floating point
    threshold = np.ceil(round(min_fraction * workload.max_procs, 9))
    return np.asarray(workload.procs_req) >= threshold
