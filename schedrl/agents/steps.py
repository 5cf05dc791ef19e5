"""The checks every agent env's `step()` begins with (no ray or torch: env modules import it)."""

from __future__ import annotations

from collections.abc import Callable


def checked_action(sim, over: bool, action, mask, masked: Callable[[int], str]) -> int:
    """`action` as an int slot, after the checks of every masked env: `reset()` was called (`sim` is set), the
    episode is not `over`, and the slot is in range and allowed by `mask`; else RuntimeError, or ValueError with the
    env's own `masked(slot)` message."""
    if sim is None:
        raise RuntimeError("call reset() before step()")
    if over:
        raise RuntimeError("the episode is over: call reset()")
    a = int(action)
    if not 0 <= a < len(mask) or mask[a] == 0:
        raise ValueError(masked(a))
    return a
