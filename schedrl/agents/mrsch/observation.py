"""The MRSch state vector (§III-A) and measurements (§III-A, "Measurement").

State, for a window of W jobs and resources r = 0 (nodes), 1 (burst buffer)[, 2 (power)]:

* per window slot, R + 2 values: the job's request of each resource as a share of its capacity, its
  requested time and its time in the queue (log-scaled, see `StateNorm`); zeros for an empty slot;
* per unit of each resource (a node, a TB of burst buffer, 1/`power_units` of the power headroom),
  2 values: available (1/0) and the time until the running job holding it reaches its requested end.

Length (R + 2)·W + 2·Σ_r U_r; for nodes and burst buffer that is MRSch's 4W + 2N₁ + 2N₂. The paper's
11,410 for Theta (§IV-C) does not follow from its own sizes: W = 10, N₁ = 4,392 nodes (4,360 for user
jobs) and N₂ = 1,260 one-TB units of its 1.26 PB burst buffer give 40 + 8,784 + 2,520 = 11,344
(11,280 with 4,360 nodes); 11,410 would need N₁ + N₂ = 5,685, i.e. 1,293 burst-buffer units, which no
unit size that the paper names produces.

The simulator keeps free amounts, not unit identities; resources are interchangeable, so the units
are laid out canonically: free units first, then busy units ordered by when their job is expected to
end (an allocation that packs jobs by expected end time). Fractional requests cover fractional units;
a unit takes the state of the job covering its middle.
"""

from __future__ import annotations


import numpy as np

from schedrl.agents.mrsch.goal import decision_goal
from schedrl.agents.mrsch.keys import OBS_ACTION_MASK, OBS_GOAL, OBS_MEASUREMENTS, OBS_STATE
from schedrl.envs.normalisation import TimeNormalisation


class StateNorm(TimeNormalisation):
    """Normalisation constants, taken from the training trace and stored with checkpoints: `time_scale`, seconds
    mapped to 1.0 (on a log1p scale) for requested, queued and remaining times (`times`)."""


def unit_sizes(resources: tuple[str, ...], capacity: np.ndarray, bb_unit_gb: float, power_units: int) -> np.ndarray:
    """Size of one state-vector unit of each simulator resource (resource 0: one node/processor)."""
    sizes = np.ones(len(resources))
    for r, name in enumerate(resources[1:], start=1):
        if name == "bb":
            sizes[r] = bb_unit_gb  # MRSch §III-A: one TB per burst-buffer unit
        else:
            sizes[r] = capacity[r] / power_units
    return sizes


def unit_counts(capacity: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Units per resource (a partial last unit counts as one)."""
    return np.ceil(np.asarray(capacity) / sizes - 1e-9).astype(np.int64)


def state_length(window: int, counts) -> int:
    """(R + 2)·W + 2·Σ U_r: MRSch's 4W + 2N₁ + 2N₂ for two resources."""
    return (len(counts) + 2) * window + 2 * int(np.sum(counts))


def measurements(sim, queue_scale: float | None = None) -> np.ndarray:
    """Utilisation of each resource now (MRSch's measurement vector); with `queue_scale` (ours, the env's
    `queue_weight` option) one more entry, q / (q + queue_scale) for the q jobs waiting now."""
    util = (1.0 - sim.free / sim.capacity).astype(np.float32)
    if queue_scale is None:
        return util
    q = float(len(sim.queue))
    return np.append(util, np.float32(q / (q + queue_scale)))


def observe(builder: "StateBuilder", sim, config) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The observation of `sim` under an `MRSchEnvConfig` (state, measurements, goal, mask) and the window's
    job indices: what the env returns and what a trained policy is given, built in one place."""
    state, mask, window = builder.build(sim)
    queue_scale = config.queue_scale if config.queue_weight > 0 else None
    return {OBS_STATE: state, OBS_MEASUREMENTS: measurements(sim, queue_scale),
            OBS_GOAL: decision_goal(sim, config.queue_weight).astype(np.float32), OBS_ACTION_MASK: mask}, window


class StateBuilder:
    """Fills the state vector and the action mask from the simulator (one per simulated sequence)."""

    def __init__(self, resources: tuple[str, ...], capacity: np.ndarray, window: int, norm: StateNorm,
                 bb_unit_gb: float = 1000.0, power_units: int = 100, fit_first: bool = False):
        self.window = window
        self.fit_first = fit_first
        self.norm = norm
        self.n_resources = len(resources)
        self.sizes = unit_sizes(resources, capacity, bb_unit_gb, power_units)
        self.counts = unit_counts(capacity, self.sizes)
        self.length = state_length(window, self.counts)
        # middle of every unit of every resource, one flat array per resource
        self._middles = [(np.arange(c) + 0.5) * s for c, s in zip(self.counts, self.sizes)]

    @classmethod
    def for_config(cls, resources: tuple[str, ...], capacity: np.ndarray, config, norm: StateNorm) -> "StateBuilder":
        """The builder an `MRSchEnvConfig` asks for (window, units, the fit-first mask)."""
        return cls(resources, capacity, config.window, norm, config.bb_unit_gb, config.power_units, config.fit_first)

    def build(self, sim) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(state vector, mask, window job indices)."""
        s = sim.state
        now = sim.now
        R, W = self.n_resources, self.window
        out = np.zeros(self.length, dtype=np.float32)
        jobs = sim.window[:W].copy()
        k = len(jobs)
        per_job = np.zeros((W, R + 2))
        per_job[:k, :R] = s.req[jobs] / s.cap
        per_job[:k, R] = self.norm.times(s.est[jobs])
        per_job[:k, R + 1] = self.norm.times(now - s.submit[jobs])
        out[: (R + 2) * W] = per_job.ravel()
        running = sim.running()
        remaining = np.maximum(s.start[running] + s.est[running] - now, 0.0)
        order = np.argsort(remaining, kind="stable")
        remaining = self.norm.times(remaining[order])
        pos = (R + 2) * W
        for r in range(R):
            middles = self._middles[r]
            held = np.cumsum(s.req[running[order], r])
            busy_at = middles - s.free[r]
            busy = busy_at > 0
            cell = np.zeros((len(middles), 2))
            cell[~busy, 0] = 1.0
            if len(running):
                holder = np.minimum(np.searchsorted(held, busy_at[busy], side="right"), len(running) - 1)
                cell[busy, 1] = remaining[holder]
            out[pos: pos + 2 * len(middles)] = cell.ravel()
            pos += 2 * len(middles)
        mask = np.zeros(W, dtype=np.float32)
        mask[:k] = 1.0
        if self.fit_first and k:
            fits = sim.fits(jobs)
            if fits.any():  # only jobs that start now; when none fits, any job may be picked (and reserved)
                mask[:k] = fits
        return out, mask, jobs
