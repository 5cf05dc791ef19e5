"""Tiny windows for the bound's tests, and the exact brute force they are checked against."""

from __future__ import annotations

import itertools

import numpy as np

from schedrl.bound.problem import Problem, objective, window_problem
from schedrl.bound.sgs import serial
from schedrl.sim import SimConfig
from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES


def make_workload(submit, run, time_req, procs, max_procs) -> Workload:
    n = len(submit)
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=np.asarray(submit), run=np.asarray(run),
                   time_req=np.asarray(time_req), procs_req=np.asarray(procs), procs_alloc=np.asarray(procs),
                   user=np.arange(n) % 2, status=np.ones(n))
    return Workload(columns, max_procs=max_procs, max_nodes=max_procs)


def random_problem(rng: np.random.Generator, n: int, metric: str, capacity: int = 4,
                   config: SimConfig = SimConfig()) -> Problem:
    """n jobs on a `capacity`-processor machine: arrivals close together, run times around the 10 s of bsld's bound,
    some jobs killed at a shorter request."""
    submit = np.sort(rng.integers(0, 30, n))
    run = rng.integers(0, 40, n)
    time_req = np.where(rng.random(n) < 0.2, np.maximum(1, run // 2), run + rng.integers(1, 20, n))
    procs = rng.integers(1, capacity + 1, n)
    return window_problem(make_workload(submit, run, time_req, procs, capacity), config, metric)


def brute_force(problem: Problem) -> tuple[float, np.ndarray]:
    """The optimum over every order of the serial schedule-generation scheme (every active schedule)."""
    best, arg = np.inf, None
    for order in itertools.permutations(range(problem.n)):
        start = serial(problem, order)
        value = objective(problem, start)
        if value < best:
            best, arg = value, start
    return best, arg
