"""DFP's training targets: future measurement changes m_{t+τ} - m_t from a whole episode (numpy)."""

from __future__ import annotations

import numpy as np


def future_targets(measurements: np.ndarray, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Targets (T, K, M) and their validity (T, K) for the T decisions of one episode.

    `measurements` (T, M) holds m_t at each decision. The target of decision t at offset τ is
    m_{t+τ} - m_t where t + τ < T; past the episode's last decision it is 0 and masked out (the
    loss ignores it), instead of inventing measurements after the sequence ends (DFP §3 pads with
    the last value; a finished sequence's empty machine would teach that every late decision
    empties it)."""
    m = np.asarray(measurements, dtype=np.float32)
    if m.ndim != 2:
        raise ValueError(f"measurements must be (T, M); got shape {m.shape}")
    T, M = m.shape
    offsets = np.asarray(offsets, dtype=np.int64)
    targets = np.zeros((T, len(offsets), M), dtype=np.float32)
    valid = np.zeros((T, len(offsets)), dtype=np.float32)
    for k, tau in enumerate(offsets):
        n = max(T - int(tau), 0)
        targets[:n, k] = m[tau: tau + n] - m[:n]
        valid[:n, k] = 1.0
    return targets, valid
