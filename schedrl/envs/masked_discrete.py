"""`MaskedDiscrete`: a Discrete space whose `sample()` respects the env's current action mask.

`env.action_space.sample()` then always returns a valid action (random baselines, gymnasium's env
checker), while stepping a masked action still raises. Equal to `Discrete(n)` for every other use.
"""

from __future__ import annotations

import numpy as np
from gymnasium.spaces import Discrete


class MaskedDiscrete(Discrete):
    """Discrete(n) that samples among the slots its owner marked valid with `set_mask`."""

    def __init__(self, n: int, seed=None):
        super().__init__(n, seed=seed)
        self._valid = np.ones(n, dtype=np.int8)

    def set_mask(self, mask: np.ndarray) -> None:
        self._valid = (np.asarray(mask) > 0).astype(np.int8)

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None and self._valid.any():
            mask = self._valid
        return super().sample(mask=mask, probability=probability)
