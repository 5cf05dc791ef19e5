"""What the inspector sees at a scheduling point: the proposed job, the queue, the free resources, the running jobs.

One vector of `FEATURES` values in [0, 1]. Times are scaled as every base-rule observer scales them
(`baserule.observation`: log1p, the training trace's largest requested time); requests are shares of the machine's
capacity. Resource 0 (processors or nodes) only, except the proposed job's fit, which counts every resource.
"""

from __future__ import annotations

import math
import numpy as np

from schedrl.agents.baserule.observation import Normalisation, TimeScaled
from schedrl.sim.simulator import Simulator

BSLD_FLOOR = 10.0
"""Seconds: bounded slowdown's floor on the run time (the queue's bsld growth rate uses requested times over it)."""
HORIZONS = (600.0, 3600.0, 4 * 3600.0, 12 * 3600.0, 48 * 3600.0)
"""Seconds ahead at which the running jobs' release of the machine is read (by their requested times)."""
QUEUE_SCALE = 1024
"""Queue lengths and running-job counts are log1p-scaled to this many (clipped above)."""

FEATURES = (
    # the proposed job
    "wait", "requested_time", "requested_share", "fits_now", "start_if_held",
    # the queue
    "queue_length", "queued_demand", "mean_requested_time", "shortest_requested_time", "longest_wait",
    "bsld_growth", "others_fitting", "others_shorter",
    # the machine
    "free_share",
    # the running jobs
    "running", *(f"released_{int(h // 60)}m" for h in HORIZONS), "mean_remaining",
)
"""The observation's entries, in order."""
RECENT = 32
"""Arrivals the history features summarise (`HISTORY_FEATURES`)."""
HISTORY_FEATURES = ("since_last_arrival", "arrivals_10m", "arrivals_1h", "recent_requested_time",
                    "recent_requested_share", "recent_smaller_share")
"""With `history=True` (`--history-features`): what the recent arrivals say about the ones to come, all known online:
the time since the last arrival, how many arrived in the last 10 minutes and hour, and the last `RECENT` arrivals'
mean requested time and share of the machine and the share of them requesting less of it than the proposal."""


class Observer(TimeScaled):
    """Builds the feature vector of a simulator at a scheduling point, for one proposal."""

    def __init__(self, norm: Normalisation, history: bool = False):
        super().__init__(norm)
        self.history = bool(history)
        self.size = len(FEATURES) + (len(HISTORY_FEATURES) if self.history else 0)
        self.horizons = np.asarray(HORIZONS)
        self.queue_scale = math.log1p(QUEUE_SCALE)
        self.growth_scale = math.log1p(3600.0 * QUEUE_SCALE / BSLD_FLOOR)

    def build(self, sim: Simulator, proposal: int) -> np.ndarray:
        s = sim.state
        now = sim.now
        cap = float(s.cap[0])
        queue = sim.queue
        out = np.zeros(self.size, dtype=np.float32)
        j = int(proposal)
        running = sim.running()
        remaining = np.maximum(s.start[running] + s.est[running] - now, 0.0)
        used = s.req[running, 0]
        free = float(s.free[0])
        fits = bool(sim.fits(np.array([j]))[0])
        # the proposed job
        out[0] = self._time(now - s.submit[j])
        out[1] = self._time(s.est[j])
        out[2] = s.req[j, 0] / cap
        out[3] = float(fits)
        if not fits:
            order = np.argsort(remaining, kind="stable")
            enough = np.flatnonzero(free + np.cumsum(used[order]) >= s.req[j, 0] - 1e-9)
            out[4] = self._time(remaining[order[enough[0]]]) if enough.size else 1.0
        # the queue
        est = s.est[queue]
        out[5] = min(math.log1p(len(queue)) / self.queue_scale, 1.0)
        demand = float(s.req[queue, 0].sum()) / cap
        out[6] = demand / (1.0 + demand)
        out[7] = float(self._time(est).mean())
        out[8] = self._time(est.min())
        out[9] = self._time(now - s.submit[queue].min())
        out[10] = min(math.log1p(3600.0 * float(np.sum(1.0 / np.maximum(est, BSLD_FLOOR)))) / self.growth_scale, 1.0)
        others = queue[queue != j]
        if others.size:
            out[11] = float(sim.fits(others).mean())
            out[12] = float((s.est[others] < s.est[j]).mean())
        # the machine
        out[13] = free / cap
        # the running jobs: share of the machine they release within each horizon, by their requested times
        out[14] = min(math.log1p(len(running)) / self.queue_scale, 1.0)
        if running.size:
            released = (remaining[None, :] <= self.horizons[:, None]) @ used
            out[15:15 + len(HORIZONS)] = released / cap
            out[15 + len(HORIZONS)] = float(np.dot(self._time(remaining), used) / used.sum())
        if self.history:
            self._history(sim, j, cap, out[len(FEATURES):])
        return out

    def _history(self, sim: Simulator, j: int, cap: float, out: np.ndarray) -> None:
        from schedrl.sim.state import NEXT_ARRIVAL

        s = sim.state
        arrived = int(s.iv[NEXT_ARRIVAL])
        if arrived == 0:
            return
        now = sim.now
        submit = s.submit[:arrived]
        out[0] = self._time(now - submit[-1])
        out[1] = min(math.log1p(arrived - np.searchsorted(submit, now - 600.0)) / self.queue_scale, 1.0)
        out[2] = min(math.log1p(arrived - np.searchsorted(submit, now - 3600.0)) / self.queue_scale, 1.0)
        recent = np.arange(max(0, arrived - RECENT), arrived)
        out[3] = float(self._time(s.est[recent]).mean())
        out[4] = float(s.req[recent, 0].mean()) / cap
        out[5] = float((s.req[recent, 0] < s.req[j, 0]).mean())
