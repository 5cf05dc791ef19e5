"""The workload an MRSch env schedules: a cleaned trace, augmented (S1–S10), with idle power.

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

from dataclasses import replace

import numpy as np

from schedrl.workload.augment import MRSCH_PRESETS, augment
from schedrl.workload.workload import Workload


def job_nodes(wl: Workload) -> np.ndarray:
    """Nodes of each job, as the augmentation counts them (requested, else allocated, processors)."""
    procs = np.where(wl.procs_req > 0, wl.procs_req, wl.procs_alloc)
    return np.maximum(1, -(-procs // wl.procs_per_node))


def with_idle_power(wl: Workload, idle_node_power_w: float) -> tuple[Workload, list[str]]:
    """`wl` with its `power` resource rewritten so the simulator enforces the idle-node draw (module
    docstring), and the report lines (jobs dropped because they can never fit the budget)."""
    if "power" not in wl.resources:
        return wl, []
    budget = float(wl.capacity["power"])
    idle_total = idle_node_power_w * wl.max_nodes
    headroom = budget - idle_total
    if not headroom > 0:
        raise ValueError(f"power budget {budget:g} W is not above the idle draw of the machine "
                         f"({wl.max_nodes} nodes x {idle_node_power_w:g} W = {idle_total:g} W): raise the budget")
    nodes = job_nodes(wl)
    # a job drawing less than idle per node would free budget; MRSch's profiles (100-215 W) never do
    extra = np.maximum(np.asarray(wl.resources["power"]) - idle_node_power_w * nodes, 0.0)
    fits = extra <= headroom
    notes = []
    if not fits.all():
        k = int(np.count_nonzero(~fits))
        notes.append(f"dropped {k} job(s) whose power draw can never fit the {budget:g} W budget above the "
                     f"idle draw of {idle_total:g} W (largest needs {extra.max():g} W of {headroom:g} W)")
        wl = wl[np.flatnonzero(fits)]
        extra = extra[fits]
    return wl.with_resources({"power": extra}, {"power": headroom}), notes


def prepare_workload(wl: Workload, augment_preset: str, seed: int) -> tuple[Workload, list[str]]:
    """`wl` augmented with MRSch preset `augment_preset` (scaled to its machine) and the idle-power
    rule applied; `none` keeps the trace's own resources. Returns the workload and report lines."""
    if augment_preset == "none":
        if not wl.resources:
            raise ValueError(f"trace {wl.name!r} has no extra resources: MRSch needs at least a burst buffer "
                             "(choose an augmentation preset S1-S10)")
        return wl, []
    if wl.resources:
        raise ValueError(f"trace {wl.name!r} already has resource columns ({', '.join(sorted(wl.resources))}); "
                         "use augment='none' instead of adding more")
    spec = MRSCH_PRESETS[augment_preset].for_machine(wl.max_nodes)
    out = augment(wl, spec, np.random.default_rng(seed))
    out, notes = with_idle_power(out, spec.idle_node_power_w)
    return replace(out, name=f"{wl.name}+{augment_preset}"), notes


def load_workload(config) -> Workload:
    """The cleaned, augmented workload of an `MRSchEnvConfig`."""
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.cleaning import CleaningRules

    wl = load_trace(config.trace, CleaningRules.preset(config.cleaning))
    return prepare_workload(wl, config.augment, config.augment_seed)[0]
