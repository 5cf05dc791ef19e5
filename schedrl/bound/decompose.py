"""Windows too large for one solve, cut into time slices (consecutive jobs by arrival), for a lower bound.

Lower side: a job removed from a window can only help the others (the rest of any schedule is still a schedule), so
the optimum of each slice alone on an empty machine is at most what its jobs cost in the window's optimum, and the
sum of the slices' proven lower bounds is a lower bound on the window's. It misses what jobs of one slice do to the
next (the backlog a slice leaves), which the load-based bound of the whole window keeps.

Each slice is solved as a window is (`slice_lower`): the local search, the Lagrangian bound and its fixing, CP-SAT. A
slice of up to about 100 jobs is often solved outright, where the whole window's relaxations miss most of a burst's
cost: on the first 96 jobs of `default`'s third 256-job window the optimum is 1.0569 and the Lagrangian bound 1.0259
(docs/experiments/bound.md).

(An upper side by slices in arrival order was measured and left out: re-solving 128-job slices with the rest fixed
reached a mean bsld of 9.70 in 40 s on `default`'s first window, where one CP-SAT run on the whole window reached 7.65
in 20 s. The local search of `schedrl.bound.lns` re-solves smaller slices of the schedule, in start order, many times.)
"""

from __future__ import annotations

from dataclasses import replace
import numpy as np

from schedrl.bound import cpsat
from schedrl.bound.lower import load_bound, trivial_bound
from schedrl.bound.problem import Problem, objective


def slices(problem: Problem, size: int, schedule: np.ndarray | None = None) -> list[np.ndarray]:
    """Positions of consecutive jobs (arrival order), `size` at a time (the last slice takes the remainder); with
    `schedule` (a feasible one), each cut moved within a quarter of a slice of its place to where the least work of the jobs
    before it is left in `schedule` when the next job arrives, so that a burst stays in one slice."""
    order = np.argsort(problem.release, kind="stable")
    if schedule is None or problem.n <= size:
        return [order[k:k + size] for k in range(0, problem.n, size)]
    end = (schedule + problem.duration)[order]
    work = problem.demand[order].sum(axis=1) * 1.0
    release = problem.release[order]
    carry = np.array([float((work[:k] * np.clip(end[:k] - release[k], 0, None)).sum()) for k in range(problem.n)])
    cuts, at = [0], 0
    while problem.n - at > size + size // 4:
        lo, hi = at + max(1, size - size // 4), min(problem.n - 1, at + size + size // 4)
        k = lo + int(np.argmin(carry[lo:hi + 1] + 1e-9 * np.abs(np.arange(lo, hi + 1) - (at + size))))
        cuts.append(k)
        at = k
    cuts.append(problem.n)
    return [order[a:b] for a, b in zip(cuts[:-1], cuts[1:])]


def part(problem: Problem, jobs: np.ndarray) -> Problem:
    """The problem of some of the window's jobs alone (same clock, same machine)."""
    return replace(problem, workload=problem.workload[np.sort(jobs)], release=problem.release[np.sort(jobs)],
                   duration=problem.duration[np.sort(jobs)], demand=problem.demand[np.sort(jobs)],
                   killed=problem.killed[np.sort(jobs)])


def slice_lower(problem: Problem, size: int, time_limit: float, workers: int = 2, seed: int = 0,
                hint: np.ndarray | None = None, lns: float = 0.0, lagrange_slots: int = 0) -> float:
    """The window's mean metric bounded from below by the sum over slices of each slice's own largest bound: the
    load-based and the trivial, and within `time_limit` over all slices, each slice's own solve as a window's (the
    best of `hint` cut to the slice and the clairvoyant orders, then the share `lns` of the slice's time to the local
    search, the Lagrangian bound with `lagrange_slots` price slots and its fixing, and CP-SAT for the rest)."""
    from schedrl.bound.sgs import profile_serial, serial

    parts = slices(problem, size, hint)
    total = 0.0
    for jobs in parts:
        sub = part(problem, jobs)
        starts = [serial(sub, np.argsort(sub.release, kind="stable")) if hint is None else hint[np.sort(jobs)]]
        for key in (sub.duration, sub.duration * sub.demand.sum(axis=1)):  # the clairvoyant orders
            starts.append(profile_serial(sub, np.lexsort((sub.release, key))))
        own = min(starts, key=lambda s: objective(sub, s))
        upper = objective(sub, own)
        best = max(trivial_bound(sub), load_bound(sub))
        limit = time_limit / len(parts)
        if limit > 0 and lns > 0:
            from schedrl.bound.lns import search

            found = search(sub, own, limit * lns, seed=seed)
            if found.value < upper:
                own, upper = found.start, found.value
            limit *= 1 - lns
        fixed = None
        if lagrange_slots > 0:
            from schedrl.bound.lagrange import lagrangian_bound

            priced = lagrangian_bound(sub, upper, slots=lagrange_slots, until=int((own + sub.duration).max()),
                                      fix=limit > 0)
            best, fixed = max(best, priced.lower), priced.starts
        if limit > 0:
            solved = cpsat.solve(sub, own, upper, limit, workers=workers, seed=seed, starts=fixed)
            best = max(best, solved.lower)
        total += min(best, upper) * sub.n
    return total / problem.n
