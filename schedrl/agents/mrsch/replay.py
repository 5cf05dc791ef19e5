"""DFP's experience replay: a fixed-size ring buffer of decisions with their future targets (numpy)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


class ReplayBuffer:
    """Columns of equal length, filled in order and overwritten oldest-first once full.

    DFP (Dosovitskiy & Koltun 2017, §4.2) keeps the most recent experiences and trains on uniformly
    sampled minibatches of them."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"replay capacity must be >= 1; got {capacity}")
        self.capacity = int(capacity)
        self._columns: dict[str, np.ndarray] = {}
        self._next = 0
        self._size = 0
        self.added = 0
        """Rows added over the buffer's lifetime."""

    def __len__(self) -> int:
        return self._size

    def add(self, rows: Mapping[str, np.ndarray]) -> None:
        """Append rows: every column has the same first dimension; the columns never change."""
        n = len(next(iter(rows.values())))
        if any(len(v) != n for v in rows.values()):
            raise ValueError("every column added to the replay buffer must have the same number of rows")
        if not self._columns:
            self._columns = {k: np.zeros((self.capacity, *np.shape(v)[1:]), dtype=np.asarray(v).dtype)
                             for k, v in rows.items()}
        elif set(rows) != set(self._columns):
            raise ValueError(f"replay columns are {sorted(self._columns)}; got {sorted(rows)}")
        if n > self.capacity:  # only the newest rows would survive
            rows = {k: np.asarray(v)[n - self.capacity:] for k, v in rows.items()}
            n = self.capacity
        idx = (self._next + np.arange(n)) % self.capacity
        for k, v in rows.items():
            self._columns[k][idx] = v
        self._next = int((self._next + n) % self.capacity)
        self._size = min(self._size + n, self.capacity)
        self.added += n

    def sample(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """`n` rows drawn uniformly with replacement."""
        if self._size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        idx = rng.integers(0, self._size, size=n)
        return {k: v[idx] for k, v in self._columns.items()}
