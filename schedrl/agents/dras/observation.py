"""The DRAS state (§III-A): two rows per window job, one row per node, as a [2W + N, 2] matrix.

Layout (rows; all values float32):

| rows | column 0 | column 1 |
|---|---|---|
| 2i (window slot i) | size / N | requested time / `time_scale` |
| 2i + 1 | priority flag (0/1) | queued time / `wait_scale` |
| 2W + k (node k) | 1 if free, else 0 | (estimated end of its job - now) / `time_scale`, 0 if free |

Empty window slots are zero rows (and masked). N is the machine's resource-0 capacity. The
simulator counts nodes rather than tracking which job holds which node, and nodes are
interchangeable, so node rows are laid out canonically: free nodes first, then busy nodes in
order of their job's estimated end (the earliest to free up first).

Normalisation is ours: the authors' code feeds raw seconds. Sizes are divided by N (a property of
the machine), requested times and remaining times by the training trace's largest requested
time, and queued times by 24 h; none are clipped (a job queued two days reads 2.0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedrl.sim.simulator import Simulator
from schedrl.sim.state import HEAP_LEN
from schedrl.workload.workload import Workload

# the normalisation of queued time: by 24 h
WAIT_SCALE = 24 * 3600.0


@dataclass(frozen=True)
class StateScales:
    """Normalisation constants of the state, taken from the training trace and stored with checkpoints."""

    time_scale: float
    """Seconds mapped to 1.0 for requested and remaining times (the training trace's largest request)."""
    wait_scale: float = WAIT_SCALE
    """Seconds mapped to 1.0 for queued times."""

    @classmethod
    def from_trace(cls, workload: Workload) -> "StateScales":
        return cls(float(max(np.max(workload.time_req, initial=0), 1)))

    @classmethod
    def from_dict(cls, d) -> "StateScales":
        return cls(float(d["time_scale"]), float(d.get("wait_scale", WAIT_SCALE)))

    def to_dict(self) -> dict:
        return {"time_scale": self.time_scale, "wait_scale": self.wait_scale}


def priority_flags(workload: Workload, sizes: np.ndarray, machine: float, fraction: float) -> np.ndarray:
    """1.0 for high-priority jobs: the trace's `priority` extra column when it has one, else size >= fraction x N."""
    column = (getattr(workload, "extras", None) or {}).get("priority")
    if column is not None:
        return (np.asarray(column, dtype=np.float64) > 0).astype(np.float32)
    # Theta's rule (DRAS §IV-C): jobs of at least 802 of 4,360 nodes are capability jobs
    return (np.asarray(sizes) >= fraction * machine - 1e-9).astype(np.float32)


def state_rows(window: int, machine_size: int) -> int:
    """Rows of the state matrix: 2W + N."""
    return 2 * window + machine_size


class StateBuilder:
    """Fills the [2W + N, 2] state matrix of one simulation (one sequence)."""

    def __init__(self, sim: Simulator, window: int, scales: StateScales, priority_fraction: float):
        s = sim.state
        self.window = window
        self.n_nodes = int(round(float(s.cap[0])))
        if abs(self.n_nodes - float(s.cap[0])) > 1e-9:
            raise ValueError(f"the DRAS state needs a whole number of nodes; the machine has {float(s.cap[0])}")
        self.scales = scales
        self.size = s.req[:, 0] / s.cap[0]
        self.priority = priority_flags(sim.workload, s.req[:, 0], float(s.cap[0]), priority_fraction)
        self.matrix = np.zeros((state_rows(window, self.n_nodes), 2), dtype=np.float32)

    def build(self, sim: Simulator, jobs: np.ndarray) -> np.ndarray:
        """The state with `jobs` (at most W job indices, in slot order) in the window rows; a fresh array."""
        s = sim.state
        m = self.matrix
        m[:] = 0.0
        k = len(jobs)
        now = sim.now
        jobs_block = m[: 2 * k].reshape(k, 2, 2)
        jobs_block[:, 0, 0] = self.size[jobs]
        jobs_block[:, 0, 1] = s.est[jobs] / self.scales.time_scale
        jobs_block[:, 1, 0] = self.priority[jobs]
        jobs_block[:, 1, 1] = (now - s.submit[jobs]) / self.scales.wait_scale
        # nodes: free ones first, then busy ones by their job's estimated end
        running = s.heap_j[: s.iv[HEAP_LEN]]
        nodes = m[2 * self.window:]
        n_busy = 0
        if len(running):
            remaining = np.maximum(s.start[running] + s.est[running] - now, 0.0) / self.scales.time_scale
            order = np.argsort(remaining, kind="stable")
            counts = np.rint(s.req[running[order], 0]).astype(np.int64)
            busy = np.repeat(remaining[order], counts)
            n_busy = len(busy)
            nodes[self.n_nodes - n_busy:, 1] = busy
        nodes[: self.n_nodes - n_busy, 0] = 1.0
        return m.copy()
