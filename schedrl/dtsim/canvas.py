"""Compiled earliest-fit search on the allocation canvas (profiling: 60 % of a stepped episode in numpy)."""

from __future__ import annotations

import numpy as np

from schedrl.jit import njit


@njit
def earliest_fit(free: np.ndarray, units: int, length: int) -> int:
    """First offset s with free[s:s + length] >= units everywhere, or -1 if none lies inside the canvas."""
    horizon = free.shape[0]
    run = 0
    for t in range(horizon):
        if free[t] >= units:
            run += 1
            if run == length:
                return t - length + 1
        else:
            run = 0
    return -1
