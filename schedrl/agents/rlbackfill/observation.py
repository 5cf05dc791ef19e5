"""What learned backfilling sees at a decision: one row per candidate (and a last row for "start none"), and the
reservation and machine around them.

- `jobs` (slots + 1, `JOB_FEATURES`): each visible candidate's features; the last row is the "start none" action
  (only its `is_skip` entry is 1). Rows of absent candidates are zeros.
- `context` (`CONTEXT_FEATURES`,): the reservation (time to the shadow time, spare share), the free share, how many
  candidates and waiting jobs there are, and the blocked job.
- `action_mask` (slots + 1,): 1 for each visible candidate, and for the last row where `skip` is allowed.

Values lie in [0, 1]. Times are scaled as every base-rule observer scales them (`baserule.observation`: log1p, the
training trace's largest requested time); requests are shares of resource 0 (processors or nodes).
"""

from __future__ import annotations

import math
import numpy as np

from schedrl.agents.baserule.observation import Normalisation, TimeScaled
from schedrl.sim.simulator import Simulator

JOB_FEATURES = ("wait", "requested_time", "requested_share", "share_of_free", "ends_by_shadow", "slack_to_shadow",
                "past_shadow", "position", "is_skip")
"""A candidate row's entries, in order."""
CONTEXT_FEATURES = ("to_shadow", "spare_share", "free_share", "candidates", "queue_length", "blocked_share",
                    "blocked_wait", "blocked_requested_time")
"""The context's entries, in order."""
COUNT_SCALE = 1024
"""Queue lengths are log1p-scaled to this many (clipped above)."""


class Observer(TimeScaled):
    """Builds the observation of a simulator at a backfill decision."""

    def __init__(self, norm: Normalisation, slots: int, skip: bool):
        super().__init__(norm)
        self.slots, self.skip = int(slots), bool(skip)
        self.count_scale = math.log1p(COUNT_SCALE)

    def empty(self) -> dict[str, np.ndarray]:
        """An all-zero observation (the last step's)."""
        return {"jobs": np.zeros((self.slots + 1, len(JOB_FEATURES)), np.float32),
                "context": np.zeros(len(CONTEXT_FEATURES), np.float32),
                "action_mask": np.zeros(self.slots + 1, np.float32)}

    def mask(self, n_candidates: int) -> np.ndarray:
        mask = np.zeros(self.slots + 1, np.float32)
        mask[:n_candidates] = 1.0
        mask[self.slots] = float(self.skip)
        return mask

    def build(self, sim: Simulator, candidates: np.ndarray) -> dict[str, np.ndarray]:
        s = sim.state
        now = sim.now
        cap = float(s.cap[0])
        free = float(s.free[0])
        shadow, spare = sim.reservation
        k = len(candidates)
        out = self.empty()
        jobs = out["jobs"]
        est = s.est[candidates]
        ends = now + est
        by_shadow = ends <= shadow
        jobs[:k, 0] = self._time(now - s.submit[candidates])
        jobs[:k, 1] = self._time(est)
        jobs[:k, 2] = s.req[candidates, 0] / cap
        jobs[:k, 3] = s.req[candidates, 0] / max(free, 1e-9)
        jobs[:k, 4] = by_shadow
        jobs[:k, 5] = np.where(by_shadow, self._time(shadow - ends), 0.0)
        jobs[:k, 6] = np.where(by_shadow, 0.0, self._time(ends - shadow))
        jobs[:k, 7] = np.arange(k) / self.slots
        jobs[self.slots, 8] = 1.0
        blocked = sim.blocked
        c = out["context"]
        c[0] = self._time(shadow - now)
        c[1] = spare[0] / cap
        c[2] = free / cap
        c[3] = min(math.log1p(len(sim.candidates)) / math.log1p(self.slots), 1.0)
        c[4] = min(math.log1p(len(sim.queue)) / self.count_scale, 1.0)
        c[5] = s.req[blocked, 0] / cap
        c[6] = self._time(now - s.submit[blocked])
        c[7] = self._time(s.est[blocked])
        out["action_mask"] = self.mask(k)
        return out
