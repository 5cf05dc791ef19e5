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
