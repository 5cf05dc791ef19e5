"""Discounted returns to go, shared by the learners and the warm starts."""

from __future__ import annotations

import numpy as np


def returns_to_go(rewards, discount) -> np.ndarray:
    """G_t = r_t + d_t * G_{t+1} (G past the end 0): `discount` a scalar gamma or one factor per step (float64)."""
    r = np.asarray(rewards, dtype=np.float64)
    d = np.broadcast_to(np.asarray(discount, dtype=np.float64), r.shape)
    out = np.empty_like(r)
    acc = 0.0
    for t in range(len(r) - 1, -1, -1):
        acc = r[t] + d[t] * acc
        out[t] = acc
    return out
