"""`MaskedDiscrete`: a Discrete space whose `sample()` respects the env's current action mask;
`MaskedMultiDiscrete`: the same for a vector env's batch of them.

`env.action_space.sample()` then always returns a valid action (random baselines, gymnasium's env
checker), while stepping a masked action still raises. Equal to `Discrete(n)` for every other use.
"""

from __future__ import annotations

import numpy as np
from gymnasium.spaces import Discrete, MultiDiscrete


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


class MaskedMultiDiscrete(MultiDiscrete):
    """The batched action space of a vector env over `MaskedDiscrete` envs: `sample()` draws one valid
    action per sub-env from the (num_envs, n) masks its owner set with `set_masks` (read at sampling
    time, so the owner may update that array in place; rows with no valid action draw 0)."""

    def __init__(self, num_envs: int, n: int, seed=None):
        super().__init__(np.full(num_envs, n, dtype=np.int64), seed=seed)
        self._valid = np.ones((num_envs, n), dtype=np.int8)

    def set_masks(self, masks: np.ndarray) -> None:
        self._valid = masks

    def sample(self, mask: tuple | None = None, probability: tuple | None = None) -> np.ndarray:
        if mask is None and probability is None:
            mask = tuple((np.asarray(self._valid) > 0).astype(np.int8))
        return super().sample(mask=mask, probability=probability)
