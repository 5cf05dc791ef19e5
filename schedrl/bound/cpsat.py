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
"""The smallest integer bsld weight (the job with the longest divisor): the objective's relative rounding is below
1 / WEIGHT_RESOLUTION per job."""


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
    """None where OR-Tools can be imported, else why not (one line)."""
    try:
        from ortools.sat.python import cp_model  # noqa: F401
    except ImportError as e:
        return f"OR-Tools is not installed ({e}): pip install 'schedrl[bound]'"
    return None


def _integer_weights(problem: Problem) -> tuple[np.ndarray, float]:
    if problem.metric == "wait":
        return np.ones(problem.n, np.int64), 1.0
    scale = float(WEIGHT_RESOLUTION * problem.divisor.max())
    return np.floor(scale / problem.divisor).astype(np.int64), scale


def latest_starts(problem: Problem, upper: float) -> np.ndarray:
    """The latest start of each job in any schedule whose mean metric is at most `upper` (every other job's term at
    its least), and never past the serial horizon (the last arrival plus every duration): the metric is regular, so
    some optimal schedule is active, and the serial schedule-generation scheme, which builds every active schedule,
    starts each job by then."""
    n = problem.n
    horizon = int(problem.release.max() + problem.duration.sum())
    total = upper * n
    if problem.metric == "wait":
        room = np.full(n, math.floor(total + 1e-9), dtype=np.float64)
    else:
        room = problem.slack + np.floor((total - (n - 1) - 1.0) * problem.divisor + 1e-6)
    latest = problem.release + np.maximum(room, 0).astype(np.int64)
    return np.minimum(latest, horizon)


def solve(problem: Problem, hint: np.ndarray, upper: float, time_limit: float, workers: int = 2, seed: int = 0,
          log: Callable[[str], None] | None = None) -> Solved:
    """Minimise the window's metric with CP-SAT for at most `time_limit` seconds, from the feasible schedule `hint`
    whose metric is `upper`; start domains are cut to what can still beat or equal `upper` (`latest_starts`)."""
    from ortools.sat.python import cp_model

    n = problem.n
    model = cp_model.CpModel()
    latest = np.maximum(latest_starts(problem, upper), hint)
    starts, intervals = [], []
    for j in range(n):
        s = model.NewIntVar(int(problem.release[j]), int(latest[j]), f"s{j}")
        starts.append(s)
        intervals.append(model.NewFixedSizeIntervalVar(s, int(problem.duration[j]), f"i{j}"))
        model.AddHint(s, int(hint[j]))
    for r in range(problem.demand.shape[1]):
        used = problem.demand[:, r] > 0
        if used.any() and problem.demand[used, r].sum() > problem.capacity[r]:
            model.AddCumulative([intervals[j] for j in np.flatnonzero(used)],
                                [int(q) for q in problem.demand[used, r]], int(problem.capacity[r]))
    coef, scale = _integer_weights(problem)
    terms, constant = [], 0
    for j in range(n):
        slack = int(problem.slack[j]) if problem.metric == "bsld" else 0
        if slack > 0:
            # excess wait past the slack: max(0, s - release - slack), made tight by the minimisation
            room = max(0, int(latest[j] - problem.release[j]) - slack)
            e = model.NewIntVar(0, room, f"e{j}")
            model.Add(e >= starts[j] - int(problem.release[j] + slack))
            model.AddHint(e, max(0, int(hint[j] - problem.release[j]) - slack))
            terms.append((int(coef[j]), e))
        else:
            terms.append((int(coef[j]), starts[j]))
            constant -= int(coef[j]) * int(problem.release[j])
    model.Minimize(sum(c * v for c, v in terms))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    import os
    if os.environ.get("BOUND_LOG"):
        solver.parameters.log_search_progress = True
    if os.environ.get("BOUND_LIN"):
        solver.parameters.linearization_level = int(os.environ["BOUND_LIN"])
    if os.environ.get("BOUND_SUB"):
        solver.parameters.subsolvers.extend(os.environ["BOUND_SUB"].split(","))
    found: list[np.ndarray] = []

    class Keep(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            found.append(np.array([self.Value(s) for s in starts], dtype=np.int64))

    t0 = time.perf_counter()
    status = solver.Solve(model, Keep())
    seconds = time.perf_counter() - t0
    name = solver.StatusName(status)
    if name == "INFEASIBLE" or name == "MODEL_INVALID":
        raise RuntimeError(f"CP-SAT says the window is {name.lower()}, yet the hint is a schedule of it")
    bound = (solver.BestObjectiveBound() + constant) / scale
    lower = bound / n if problem.metric == "wait" else 1.0 + bound / n
    if log is not None:
        log(f"cp-sat {name.lower()} in {seconds:.1f} s, {len(found)} solutions, bound {lower:,.4f}")
    return Solved(start=found[-1] if found else None, lower=lower, status=name, seconds=seconds,
                  solutions=len(found))
