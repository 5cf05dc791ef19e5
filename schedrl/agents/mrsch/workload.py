"""The workload an MRSch env schedules: a cleaned trace, augmented (S1–S10), with idle power.

The augmentation lives in the shared layer (`schedrl.workload.augment.augment_preset`, also behind
every command's `--augment`); this module loads an `MRSchEnvConfig`'s workload through it.

MRSch §V-E: the machine draws Σ over running jobs of (nodes × the job's per-node power) plus 60 W per
idle node, within a budget. `schedrl.workload.augment` gives each job `power` = nodes × per-node
power and the machine `capacity["power"]` = the budget, which the simulator treats as a plain
additive resource; it has no term for idle nodes. The idle term is linear, so it folds into the
resource exactly:

    Σ_run n_i·p_i + w_idle·(N - Σ_run n_i) <= B   <=>   Σ_run n_i·(p_i - w_idle) <= B - w_idle·N

`with_idle_power` rewrites the column to n_i·(p_i - w_idle) and the capacity to B - w_idle·N (the
power headroom above the idle draw). The simulator then enforces the paper's rule, and the `power`
utilisation it reports is the share of that headroom in use. A budget at or below the idle draw of
the whole machine is refused, and jobs whose draw can never fit the headroom are dropped, as
cleaning does, with a line saying so.
"""

from __future__ import annotations

from schedrl.workload.augment import augment_preset, job_nodes, with_idle_power  # noqa: F401  (re-exported)
from schedrl.workload.workload import Workload

prepare_workload = augment_preset
"""MRSch's name for `schedrl.workload.augment.augment_preset`."""


def load_workload(config) -> Workload:
    """The cleaned, augmented workload of an `MRSchEnvConfig`."""
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.cleaning import CleaningRules

    wl = load_trace(config.trace, CleaningRules.preset(config.cleaning))
    return prepare_workload(wl, config.augment, config.augment_seed)[0]
