"""The offline problem as a CP-SAT model (OR-Tools): one interval per job, one cumulative constraint per resource,
the metric's sum as an integer objective, a feasible schedule as the hint.

bsld's sum is n + sum_j max(0, wait_j - slack_j) / divisor_j (`Problem.slack`, `Problem.divisor`): linear in the start
time past a job's slack, so a job with slack (under 10 s) gets one variable for the excess. The weights 1 / divisor
are made integers as floor(K / divisor) <= K / divisor, so the solver's objective never exceeds K times the true one
on any schedule: its proven bound over K stays a lower bound on the true optimum (the schedules it finds are scored
again by `problem.replay`, never by this objective). OR-Tools is imported here only, when a window is solved.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from schedrl.bound.problem import Problem

WEIGHT_RESOLUTION = 1000
"""The smallest integer bsld weight (the job with the longest divisor) where the weights are rounded: the objective's
relative rounding is then below 1 / WEIGHT_RESOLUTION per job."""
EXACT_SCALE = 10**12
"""The largest common multiple of the divisors used as the scale of exact integer weights."""
SUBSOLVERS = ("max_lp",)
"""CP-SAT's full-problem worker: the one with the strongest linear relaxation (its proven bound on a 256-job window
of `default` rose from 1.0006 with the default worker to 1.050 in 30 s; docs/reference/bound.md); the others of
`num_workers` run large-neighbourhood search from the best schedule."""


@dataclass(frozen=True)
class Solved:
    """What one CP-SAT run found."""

    start: np.ndarray | None
    """The best schedule's start times (None: none found)."""
    lower: float
    """The proven lower bound on the window's mean metric."""
    status: str
    """CP-SAT's status: OPTIMAL, FEASIBLE, UNKNOWN."""
    seconds: float
    solutions: int


def available() -> str | None:
    """None where OR-Tools and highspy (the branching's LP, `schedrl.bound.pricing`) can be imported, else why not
    (one line)."""
    try:
        from ortools.sat.python import cp_model  # noqa: F401
    except ImportError as e:
        return f"OR-Tools is not installed ({e}): pip install 'schedrl[bound]'"
    try:
        import highspy  # noqa: F401
    except ImportError as e:
        return f"highspy is not installed ({e}): pip install 'schedrl[bound]'"
    return None


def integer_weights(problem: Problem, room: np.ndarray) -> tuple[np.ndarray, float]:
    """Integer weights c_j and the scale K with c_j <= K / divisor_j (wait: 1 and 1): exact (K the divisors' least
    common multiple) where the objective then stays within int64 over the waits' domains `room`, else floored with the
    smallest weight WEIGHT_RESOLUTION (or less where even that would not fit)."""
    if problem.metric == "wait":
        return np.ones(problem.n, np.int64), 1.0
    divisor = problem.divisor.astype(np.int64)
    ceiling = 2.0**61 / max(1.0, float(np.sum(room)))  # the largest K whose objective cannot overflow
    lcm = 1
    for d in np.unique(divisor):
        lcm = math.lcm(lcm, int(d))
        if lcm > ceiling:
            break
    if lcm <= ceiling:  # exact weights: the solver's optimum is the true one
        return (lcm // divisor).astype(np.int64), float(lcm)
    scale = float(min(WEIGHT_RESOLUTION * int(divisor.max()), int(ceiling)))
    return np.floor(scale / divisor).astype(np.int64), scale


def latest_starts(problem: Problem, upper: float, busy_until: int = 0) -> np.ndarray:
    """The latest start of each job in any schedule whose mean metric is at most `upper` (every other job's term at
    its least), and never past the serial horizon (the last arrival plus every duration): the metric is regular, so
    some optimal schedule is active, and the serial schedule-generation scheme, which builds every active schedule,
    starts each job by then (after `busy_until`, where jobs placed before hold the machine until then)."""
    n = problem.n
    horizon = int(max(problem.release.max(), busy_until) + problem.duration.sum())
    total = upper * n
    if problem.metric == "wait":
        room = np.full(n, math.floor(total + 1e-9), dtype=np.float64)
    else:
        room = problem.slack + np.floor((total - (n - 1) - 1.0) * problem.divisor + 1e-6)
    latest = problem.release + np.maximum(room, 0).astype(np.int64)
    return np.minimum(latest, horizon)


def solve(problem: Problem, hint: np.ndarray, upper: float, time_limit: float, workers: int = 2, seed: int = 0,
          log: Callable[[str], None] | None = None, fixed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
          work: float | None = None, starts: list[np.ndarray] | None = None) -> Solved:
    """Minimise the window's metric with CP-SAT for at most `time_limit` seconds, from the feasible schedule `hint`
    whose metric is `upper`; start domains are cut to what can still beat or equal `upper` (`latest_starts`).
    `fixed`: (start, duration, demand) of jobs already placed, whose capacity the window's jobs cannot use (a slice of
    a decomposed window, `schedrl.bound.decompose`); the hint must fit beside them. `work`: a deterministic limit
    instead (CP-SAT's own work units, its subsolvers interleaved in a fixed order): the same result at any load.
    `starts`: per job, rows [first, last] of the starts a schedule as good as `upper` can use (the Lagrangian's
    reduced-cost fixing, `schedrl.bound.lagrange`), intersected with the domains above."""
    from ortools.sat.python import cp_model

    n = problem.n
    model = cp_model.CpModel()
    busy_until = int((fixed[0] + fixed[1]).max()) if fixed is not None and len(fixed[0]) else 0
    room = np.maximum(latest_starts(problem, upper, busy_until), hint) - problem.release
    slack = problem.slack.astype(np.int64) if problem.metric == "bsld" else np.zeros(n, np.int64)
    coef, scale = integer_weights(problem, np.maximum(room - slack, 0))
    waits, intervals, terms = [], [], []
    for j in range(n):
        if starts is None:
            w = model.NewIntVar(0, int(room[j]), f"w{j}")
        else:
            rows = np.clip(starts[j] - problem.release[j], 0, int(room[j]))
            rows = np.vstack([rows, [[hint[j] - problem.release[j]] * 2]])  # the hint always (it fits by construction)
            w = model.NewIntVarFromDomain(cp_model.Domain.FromIntervals(rows.tolist()), f"w{j}")
        waits.append(w)
        intervals.append(model.NewFixedSizeIntervalVar(w + int(problem.release[j]), int(problem.duration[j]), f"i{j}"))
        model.AddHint(w, int(hint[j] - problem.release[j]))
        if slack[j] > 0:
            # the wait past the slack, max(0, w - slack), made tight by the minimisation
            e = model.NewIntVar(0, max(0, int(room[j] - slack[j])), f"e{j}")
            model.Add(e >= w - int(slack[j]))
            model.AddHint(e, max(0, int(hint[j] - problem.release[j] - slack[j])))
            terms.append((int(coef[j]), e))
        else:
            terms.append((int(coef[j]), w))
    demand = problem.demand
    if fixed is not None:
        f_start, f_duration, f_demand = fixed
        keep = f_start + f_duration > problem.release.min()  # only what still runs when the slice begins
        for s, d in zip(f_start[keep], f_duration[keep]):
            intervals.append(model.NewFixedSizeIntervalVar(int(s), int(d), "fixed"))
        demand = np.concatenate([demand, f_demand[keep]])
    durations = np.concatenate([problem.duration, np.ones(len(intervals) - n, np.int64)])
    for r in range(demand.shape[1]):
        used = np.flatnonzero((demand[:, r] > 0) & (durations > 0))
        if used.size and demand[used, r].sum() > problem.capacity[r]:
            model.AddCumulative([intervals[j] for j in used], [int(q) for q in demand[used, r]],
                                int(problem.capacity[r]))
    model.Minimize(sum(c * v for c, v in terms))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit) if work is None else 1e9
    if work is not None:
        solver.parameters.max_deterministic_time = float(work)
        solver.parameters.interleave_search = True
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    solver.parameters.subsolvers.extend(SUBSOLVERS)
    found: list[np.ndarray] = []

    class Keep(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            found.append(problem.release + np.array([self.Value(w) for w in waits], dtype=np.int64))

    t0 = time.perf_counter()
    status = solver.Solve(model, Keep())
    seconds = time.perf_counter() - t0
    name = solver.StatusName(status)
    if name == "INFEASIBLE" or name == "MODEL_INVALID":
        raise RuntimeError(f"CP-SAT says the window is {name.lower()}, yet the hint is a schedule of it")
    bound = solver.BestObjectiveBound() / scale
    lower = bound / n if problem.metric == "wait" else 1.0 + bound / n
    if log is not None:
        log(f"cp-sat {name.lower()} in {seconds:.1f} s, {len(found)} solutions, bound {lower:,.4f}")
    return Solved(start=found[-1] if found else None, lower=lower, status=name, seconds=seconds,
                  solutions=len(found))
