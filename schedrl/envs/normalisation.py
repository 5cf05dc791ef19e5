"""A time scale taken from the training trace, saved with checkpoints: seconds mapped to 1.0 on a log1p scale.

Job times span seconds to days, so observations scale them by log1p(seconds) / log1p(time_scale): on a log scale a
minute and an hour stay apart. `time_scale` is the training part's largest requested time, at least `MIN_SCALE`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from schedrl.workload.workload import Workload


@dataclass(frozen=True)
class TimeNormalisation:
    """Seconds mapped to 1.0 (after log1p), from the training part of the trace; `{"time_scale": ...}` in a
    checkpoint's env config."""

    time_scale: float
    MIN_SCALE: ClassVar[float] = 1.0
    """The smallest scale a trace may give (seconds)."""

    @classmethod
    def from_trace(cls, workload: Workload):
        return cls(float(max(np.max(workload.time_req, initial=0.0), cls.MIN_SCALE)))

    @classmethod
    def from_dict(cls, data):
        return cls(float(data["time_scale"]))

    def to_dict(self) -> dict:
        return {"time_scale": self.time_scale}

    def times(self, seconds: np.ndarray) -> np.ndarray:
        """`seconds` on the scale, clipped to at most 1."""
        return np.minimum(np.log1p(np.maximum(seconds, 0.0)) / np.log1p(self.time_scale), 1.0)
