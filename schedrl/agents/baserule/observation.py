"""What every base-rule observer shares: times in [0, 1] on the training trace's scale (no ray or torch).

Times go through log1p and are scaled by the training trace's largest requested time (`Normalisation`, saved with
checkpoints), as RLScheduler's observation scales them.
"""

from __future__ import annotations

import math

import numpy as np

from schedrl.envs.normalisation import TimeNormalisation


class Normalisation(TimeNormalisation):
    """Scale of the time features: seconds mapped to 1.0 (after log1p), from the training part of the trace, at
    least a minute."""

    MIN_SCALE = 60.0


class TimeScaled:
    """An observer's time scale: `_time(seconds)` is log1p(seconds) / log1p(`time_scale`), clipped to [0, 1]."""

    def __init__(self, norm: Normalisation):
        self.log_scale = math.log1p(norm.time_scale)

    def _time(self, seconds):
        return np.minimum(np.log1p(np.maximum(seconds, 0.0)) / self.log_scale, 1.0)
