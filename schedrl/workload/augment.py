"""Extra resources for multi-resource scheduling: MRSch's burst-buffer and power workloads S1–S10.

MRSch (Li et al.) extends a CPU-only Theta trace with burst-buffer requests (Table III, S1–S5) and
per-node power profiles (§V-E, S6–S10). `augment` applies one `AugmentSpec` to any workload:

1. scale every job's processor request (S5 halves the requested nodes);
2. give a fixed share of jobs a burst-buffer request drawn from a size range (`bb`, GB);
3. give every job a per-node peak power, times its nodes (`power`, W).

MRSch draws burst-buffer sizes from the Darshan I/O volumes of Theta jobs within each range; that
data is not public, so by default sizes are log-uniform over the range (I/O volumes span decades,
1 GB to 285 TB in MRSch §IV-A). Pass `bb_pool` (observed sizes, GB) to sample as MRSch did.
The presets' capacities are Theta's; use `AugmentSpec.for_machine` to scale them to another machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from schedrl.workload.workload import Workload

GB_PER_TB = 1000.0
THETA_NODES = 4360
"""Theta's nodes for user jobs (DRAS §IV-A: 4,392 nodes less 32 for debugging)."""


@dataclass(frozen=True)
class AugmentSpec:
    """One multi-resource workload recipe: node scaling, burst-buffer and power requests."""

    node_scale: float = 1.0
    """Multiplies each job's processor request, rounded up (MRSch Table III: S5 uses 0.5)."""
    bb_fraction: float = 0.0
    """Share of jobs that request burst buffer (0 adds no `bb` resource)."""
    bb_range_gb: tuple[float, float] = (5 * GB_PER_TB, 285 * GB_PER_TB)
    """Smallest and largest burst-buffer request, GB (MRSch Table III)."""
    bb_capacity_gb: float = 1260 * GB_PER_TB
    """Shared burst buffer of the machine, GB (MRSch §IV-A: 1.26 PB)."""
    node_power_w: tuple[float, float] | None = None
    """Range of a job's peak power per node, W, drawn uniformly (None adds no `power` resource)."""
    power_budget_w: float = 500_000.0
    """Power budget of the whole machine, W (MRSch §V-E: 500 kW)."""
    idle_node_power_w: float = 60.0
    """Power drawn by an idle node, W (MRSch §V-E); for the simulator's power accounting."""
    machine_nodes: int = THETA_NODES
    """Nodes of the machine the capacities and sizes above are meant for."""

    def __post_init__(self) -> None:
        if not self.node_scale > 0:
            raise ValueError(f"AugmentSpec.node_scale must be positive, got {self.node_scale}")
        if not 0.0 <= self.bb_fraction <= 1.0:
            raise ValueError(f"AugmentSpec.bb_fraction must be in [0, 1], got {self.bb_fraction}")
        lo, hi = self.bb_range_gb
        if not 0 < lo <= hi:
            raise ValueError(f"AugmentSpec.bb_range_gb must be (low, high) with 0 < low <= high, got {self.bb_range_gb}")
        if self.node_power_w is not None and not 0 < self.node_power_w[0] <= self.node_power_w[1]:
            raise ValueError(f"AugmentSpec.node_power_w must be (low, high) with 0 < low <= high, got {self.node_power_w}")
        for name in ("bb_capacity_gb", "power_budget_w", "machine_nodes"):
            if not getattr(self, name) > 0:
                raise ValueError(f"AugmentSpec.{name} must be positive, got {getattr(self, name)}")
        if self.idle_node_power_w < 0:
            raise ValueError(f"AugmentSpec.idle_node_power_w must be >= 0, got {self.idle_node_power_w}")

    def for_machine(self, nodes: int) -> "AugmentSpec":
        """The same recipe for a `nodes`-node machine: burst-buffer sizes and capacity, and the power
        budget, scale with the node count; per-node power does not."""
        if not nodes > 0:
            raise ValueError(f"nodes must be positive, got {nodes}")
        f = nodes / self.machine_nodes
        lo, hi = self.bb_range_gb
        return replace(self, bb_range_gb=(lo * f, hi * f), bb_capacity_gb=self.bb_capacity_gb * f,
                       power_budget_w=self.power_budget_w * f, machine_nodes=nodes)


def _mrsch_presets() -> dict[str, AugmentSpec]:
    tb = GB_PER_TB
    presets = {
        # MRSch Table III: light to heavy burst-buffer contention
        "S1": AugmentSpec(bb_fraction=0.50, bb_range_gb=(5 * tb, 285 * tb)),
        "S2": AugmentSpec(bb_fraction=0.75, bb_range_gb=(5 * tb, 285 * tb)),
        "S3": AugmentSpec(bb_fraction=0.50, bb_range_gb=(20 * tb, 285 * tb)),
        "S4": AugmentSpec(bb_fraction=0.75, bb_range_gb=(20 * tb, 285 * tb)),
        "S5": AugmentSpec(bb_fraction=0.75, bb_range_gb=(20 * tb, 285 * tb), node_scale=0.5),
    }
    # MRSch §V-E: S6-S10 are S1-S5 plus a per-node power of 100-215 W (KNL 7230 TDP is 215 W)
    for i in range(1, 6):
        presets[f"S{i + 5}"] = replace(presets[f"S{i}"], node_power_w=(100.0, 215.0))
    return presets


MRSCH_PRESETS: dict[str, AugmentSpec] = _mrsch_presets()
"""MRSch workloads S1–S10 by name, sized for Theta (4,360 nodes, 1.26 PB burst buffer, 500 kW)."""


def _scaled_procs(procs: np.ndarray, scale: float) -> np.ndarray:
    scaled = np.ceil(procs * scale - 1e-9).astype(np.int64)
    return np.where(procs > 0, np.maximum(scaled, 1), procs)


def _bb_sizes(spec: AugmentSpec, n: int, rng: np.random.Generator, pool: np.ndarray | None) -> np.ndarray:
    lo, hi = spec.bb_range_gb
    if pool is None:
        return np.exp(rng.uniform(math.log(lo), math.log(hi), size=n))
    inside = pool[(pool >= lo) & (pool <= hi)]
    if inside.size == 0:
        raise ValueError(f"bb_pool has no size within the spec's range [{lo:g}, {hi:g}] GB")
    return rng.choice(inside, size=n)


def augment(wl: Workload, spec: AugmentSpec, rng: np.random.Generator, *, bb_pool: np.ndarray | None = None) -> Workload:
    """`wl` with processor requests scaled and `bb` (GB) / `power` (W per job) resources added.

    Random draws happen in a fixed order (burst-buffer jobs, their sizes, then power), so S6–S10
    give the same burst-buffer requests as S1–S5 for the same seed, as in MRSch §V-E.
    """
    if not isinstance(spec, AugmentSpec):
        raise TypeError(f"spec must be an AugmentSpec (e.g. MRSCH_PRESETS['S1']), got {type(spec).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), got {type(rng).__name__}")
    if bb_pool is not None:
        bb_pool = np.asarray(bb_pool, dtype=np.float64).ravel()
    n = len(wl)
    out = wl
    if spec.node_scale != 1.0:
        procs_req = _scaled_procs(wl.procs_req, spec.node_scale)
        too_wide = int(np.count_nonzero(procs_req > wl.max_procs))
        if too_wide:
            raise ValueError(f"node_scale={spec.node_scale} makes {too_wide} job(s) of {wl.name!r} wider than "
                             f"the machine ({wl.max_procs} processors)")
        out = out.with_columns(procs_req=procs_req, procs_alloc=_scaled_procs(wl.procs_alloc, spec.node_scale))
    resources: dict[str, np.ndarray] = {}
    capacity: dict[str, float] = {}
    if spec.bb_fraction > 0:
        bb = np.zeros(n)
        chosen = rng.choice(n, size=round(spec.bb_fraction * n), replace=False)
        bb[chosen] = _bb_sizes(spec, chosen.size, rng, bb_pool)
        resources["bb"], capacity["bb"] = bb, spec.bb_capacity_gb
    if spec.node_power_w is not None:
        per_node = rng.uniform(spec.node_power_w[0], spec.node_power_w[1], size=n)
        procs = np.where(out.procs_req > 0, out.procs_req, out.procs_alloc)
        nodes = np.maximum(1, -(-procs // out.procs_per_node))
        resources["power"], capacity["power"] = per_node * nodes, spec.power_budget_w
    return out.with_resources(resources, capacity) if resources else out


# ---------------------------------------------------------------- idle power, presets by name
#
# MRSch §V-E: the machine draws Σ over running jobs of (nodes × the job's per-node power) plus 60 W
# per idle node, within a budget. `augment` prices each job at nodes × per-node power; the simulator
# treats power as a plain additive resource with no idle term. The idle term is linear, so it folds
# into the resource exactly:
#
#     Σ_run n_i·p_i + w_idle·(N - Σ_run n_i) <= B   <=>   Σ_run n_i·(p_i - w_idle) <= B - w_idle·N
#
# `with_idle_power` rewrites the column to n_i·(p_i - w_idle) and the capacity to B - w_idle·N.


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


def augment_preset(wl: Workload, preset: str, seed: int) -> tuple[Workload, list[str]]:
    """`wl` augmented with MRSch preset `augment_preset` (scaled to its machine) and the idle-power
    rule applied; `none` keeps the trace's own resources. Returns the workload and report lines."""
    if preset not in MRSCH_PRESETS and preset != "none":
        raise ValueError(f"unknown augmentation preset {preset!r}; choose one of {', '.join(MRSCH_PRESETS)} or none")
    if preset == "none":
        if not wl.resources:
            raise ValueError(f"trace {wl.name!r} has no extra resources: MRSch needs at least a burst buffer "
                             "(choose an augmentation preset S1-S10)")
        return wl, []
    if wl.resources:
        raise ValueError(f"trace {wl.name!r} already has resource columns ({', '.join(sorted(wl.resources))}); "
                         "use augment='none' instead of adding more")
    spec = MRSCH_PRESETS[preset].for_machine(wl.max_nodes)
    out = augment(wl, spec, np.random.default_rng(seed))
    out, notes = with_idle_power(out, spec.idle_node_power_w)
    return replace(out, name=f"{wl.name}+{preset}"), notes


__all__ = ["AugmentSpec", "GB_PER_TB", "MRSCH_PRESETS", "THETA_NODES", "augment", "augment_preset", "job_nodes",
           "with_idle_power"]
