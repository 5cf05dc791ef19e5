"""Each job's user history: the run times of the same user's most recent jobs that had ended by its submission."""

from __future__ import annotations

import heapq

import numpy as np


def user_history(submit: np.ndarray, end: np.ndarray, run: np.ndarray, user: np.ndarray, k: int) -> np.ndarray:
    """(n, k) run times of the last k jobs of each job's user that ended at or before its submit time,
    most recent end first; NaN where the user has fewer. Causal: a job still running (or not yet
    submitted) when job i is submitted is never part of i's history, so it can be used online."""
    if k < 1:
        raise ValueError(f"history length k must be >= 1, got {k}")
    n = len(submit)
    out = np.full((n, k), np.nan)
    pending: dict[int, list[tuple[int, int, int]]] = {}
    done: dict[int, list[int]] = {}
    order = np.argsort(submit, kind="stable")
    sub, en, rn, us = submit.tolist(), end.tolist(), run.tolist(), user.tolist()
    for i in order.tolist():
        u, t = us[i], sub[i]
        heap = pending.setdefault(u, [])
        finished = done.setdefault(u, [])
        while heap and heap[0][0] <= t:
            _, _, j = heapq.heappop(heap)
            finished.append(j)
        if finished:
            recent = finished[-k:][::-1]
            out[i, :len(recent)] = [rn[j] for j in recent]
            del finished[:-k]
        heapq.heappush(heap, (en[i], i, i))
    return out
