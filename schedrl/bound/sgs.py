"""The serial schedule-generation scheme: jobs placed one by one, in a given order, each at its earliest feasible start
in the resource profile the jobs already placed leave (possibly in a hole before jobs placed earlier).

The metrics the bound solves are regular (non-decreasing in every completion time), so some optimal schedule is
active, and every active schedule is what this scheme makes of some order: over all orders it is an exact (if
exponential) solver, the brute force the tests check CP-SAT against. Plain list scheduling in order, without going
back into holes, is not.
"""

from __future__ import annotations

import numpy as np

from schedrl.bound.problem import Problem


def earliest_start(problem: Problem, start: np.ndarray, placed: np.ndarray, j: int) -> int:
    """The earliest start >= job j's arrival at which it fits beside the jobs marked `placed` (with `start`)."""
    p, q = int(problem.duration[j]), problem.demand[j]
    busy = np.flatnonzero(placed & (problem.duration > 0))
    ends = start[busy] + problem.duration[busy]
    candidates = np.unique(np.concatenate([[problem.release[j]], ends[ends > problem.release[j]]]))
    for t in candidates:
        if p == 0:
            return int(t)
        # usage over [t, t + p) changes only at starts inside it: check at t and at each of them
        overlap = busy[(start[busy] < t + p) & (start[busy] + problem.duration[busy] > t)]
        points = np.concatenate([[t], start[overlap][start[overlap] > t]])
        fits = True
        for u in points:
            running = overlap[(start[overlap] <= u) & (start[overlap] + problem.duration[overlap] > u)]
            if (problem.demand[running].sum(axis=0) + q > problem.capacity).any():
                fits = False
                break
        if fits:
            return int(t)
    raise AssertionError("unreachable: a job fits once every placed job has ended")


def serial(problem: Problem, order) -> np.ndarray:
    """Start times of the serial scheme over `order` (a permutation of the jobs)."""
    start = np.zeros(problem.n, np.int64)
    placed = np.zeros(problem.n, bool)
    for j in order:
        start[j] = earliest_start(problem, start, placed, int(j))
        placed[j] = True
    return start


def profile_serial(problem: Problem, order) -> np.ndarray:
    """The same schedule as `serial` over `order`, built on a resource profile (breakpoints and the free capacity after
    each): each job scans the profile once from its arrival, so a window of 1,024 jobs takes a second, not minutes."""
    times = [0]  # breakpoints: free[i] holds on [times[i], times[i + 1])
    free = [problem.capacity.astype(np.int64).copy()]
    start = np.zeros(problem.n, np.int64)
    for j in order:
        j = int(j)
        a, p, q = int(problem.release[j]), int(problem.duration[j]), problem.demand[j]
        if p == 0:
            start[j] = a
            continue
        i = max(0, int(np.searchsorted(times, a, side="right")) - 1)
        t = a
        while True:
            # does [t, t + p) fit? scan from interval i (the one holding t)
            k, ok = i, True
            while k < len(times) and times[k] < t + p:
                if (free[k] < q).any():
                    ok = False
                    break
                k += 1
            if ok:
                break
            i = k + 1  # the first interval after the one too full
            t = times[i] if i < len(times) else None
            if t is None:
                raise AssertionError("unreachable: the last interval of the profile has the whole machine free")
        start[j] = t
        # split the profile at t and t + p, then take q off the intervals in between
        for edge in (t, t + p):
            k = int(np.searchsorted(times, edge, side="right")) - 1
            if times[k] != edge:
                times.insert(k + 1, edge)
                free.insert(k + 1, free[k].copy())
        k = int(np.searchsorted(times, t))
        while times[k] < t + p:
            free[k] = free[k] - q
            k += 1
    return start
