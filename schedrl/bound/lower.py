"""Lower bounds on a window's offline optimum that need no solver: the trivial one and the load-based one.

Trivial: every job starts at its arrival (wait 0, bsld 1); no schedule does better.

Load-based: a non-preemptive schedule on a machine of capacity P is, job by job, a fluid schedule of one machine of
speed 1 on which job j has length a_j / P (a_j = demand x duration) and runs at the constant rate q_j / P from S_j to
S_j + p_j. Its mean busy time is then S_j + p_j / 2, so sum w_j S_j = sum w_j M_j - sum w_j p_j / 2. Over every
preemptive or shared schedule of that one machine with release dates, sum w_j M_j is smallest for the LP schedule
(Goemans 1997, "Improved approximation algorithms for scheduling with release dates", Thm. 3.1: at every instant
run the released unfinished job of largest w_j / length), so that schedule's value bounds every schedule of the
window from below. With w_j = 1 it bounds the total wait; with w_j = 1 / max(p_j, 10) the weighted wait, and bsld's
mean follows (see `load_bound`). Each resource gives one bound; the largest is kept. It is weak where the machine is
idle and strong where the window is overloaded: the backlog every schedule must work off is in it.
"""

from __future__ import annotations

import heapq

import numpy as np

from schedrl.bound.problem import Problem


def trivial_bound(problem: Problem) -> float:
    """The metric with every job at its arrival: 0 (wait) or 1 (bsld)."""
    return 0.0 if problem.metric == "wait" else 1.0


def weights(problem: Problem) -> np.ndarray:
    """Each job's weight in the weighted wait the solvers minimise: 1 (wait) or 1 / max(p_j, 10) (bsld)."""
    return np.ones(problem.n) if problem.metric == "wait" else 1.0 / problem.divisor


def mean_busy_times(release: np.ndarray, length: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each job's mean busy time in Goemans' LP schedule on one machine of speed 1: preemptive, at every instant the
    released unfinished job of largest weight / length (zero-length jobs done at their release)."""
    n = len(release)
    order = np.argsort(release, kind="stable")
    mean = np.zeros(n)
    left = np.asarray(length, dtype=np.float64).copy()
    heap: list[tuple[float, int]] = []
    now, k = 0.0, 0
    while k < n or heap:
        if not heap:
            now = max(now, float(release[order[k]]))
        while k < n and release[order[k]] <= now:
            j = int(order[k])
            k += 1
            if left[j] <= 0:
                mean[j] = float(release[j])
            else:
                heapq.heappush(heap, (-weight[j] / length[j], j))
        if not heap:
            continue
        j = heap[0][1]
        until = float(release[order[k]]) if k < n else np.inf
        piece = min(left[j], until - now)
        mean[j] += piece * (now + piece / 2.0)  # sum of piece x midpoint, divided by the length at the end
        left[j] -= piece
        now += piece
        if left[j] <= 1e-12 * max(1.0, float(length[j])):
            heapq.heappop(heap)
            mean[j] /= float(length[j])
    return mean


def weighted_wait_bound(problem: Problem) -> float:
    """A lower bound on sum_j w_j wait_j (`weights`) over every schedule of the window: the largest over the
    resources of the LP schedule's bound (module docstring); at least 0."""
    w = weights(problem)
    best = 0.0
    for r in range(problem.demand.shape[1]):
        if problem.capacity[r] <= 0:
            continue
        length = problem.demand[:, r] * problem.duration / float(problem.capacity[r])
        mean = mean_busy_times(problem.release.astype(np.float64), length, w)
        value = float(np.sum(w * (mean - problem.duration / 2.0 - problem.release)))
        best = max(best, value)
    return best


def load_bound(problem: Problem) -> float:
    """The load-based lower bound on the window's mean metric. wait: the weighted bound over n. bsld: a job's bsld is
    1 + max(0, wait - slack) / divisor >= 1 - slack / divisor + wait / divisor, so the mean is at least
    (n - sum slack/divisor + weighted bound) / n, and at least 1."""
    bound = weighted_wait_bound(problem)
    if problem.metric == "wait":
        return bound / problem.n
    relief = float(np.sum(problem.slack / problem.divisor))
    return 1.0 + max(0.0, bound - relief) / problem.n
