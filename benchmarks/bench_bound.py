"""The offline bound (`schedrl bound`, `schedrl.bound`): seconds per window and the gap between its two sides, by
window size; and the solver choice, CP-SAT against a time-indexed MILP solved by HiGHS, on small windows.

Window size: the first N jobs of `default`'s first evaluation windows (bsld), each bounded with `--time-limit`
seconds of CP-SAT (`--workers` threads) from the best heuristic's schedule: the best warm start, the best found, the
proven lower bound, the gap (best found - lower bound) / best found, the status and the seconds.

Solver choice: random windows of a few jobs on a 4-processor machine (run times around bsld's 10 s bound, so a
time-indexed model has few periods); the seconds each solver takes to prove the optimum (or its limit) and the two
optima, which must agree. The time-indexed MILP has one binary per job and start second (scipy's HiGHS); a real
window's horizon is 10^5-10^6 s, so it cannot be built there at all: the measurement is on the windows where both run.
Run: `python benchmarks/bench_bound.py [--sizes 64,128,256,512,1024] [--time-limit 30] [--windows 2]`.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def time_indexed_milp(problem, time_limit: float) -> tuple[float, float, str]:
    """(optimum or best found, seconds, status) of the time-indexed MILP (x[j, t] = 1: job j starts at t) by HiGHS."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import lil_matrix

    from schedrl.bound.problem import objective

    n = problem.n
    horizon = int(problem.release.max() + problem.duration.sum()) + 1
    columns = [(j, t) for j in range(n) for t in range(int(problem.release[j]), horizon)]
    cost = np.empty(len(columns))
    for k, (j, t) in enumerate(columns):
        start = problem.release.copy()
        start[j] = t
        cost[k] = objective(problem, start) * n - objective(problem, problem.release) * n  # job j's own term - others
    one = lil_matrix((n, len(columns)))
    capacity = lil_matrix((horizon + int(problem.duration.max()), len(columns)))
    for k, (j, t) in enumerate(columns):
        one[j, k] = 1
        for u in range(t, t + int(problem.duration[j])):
            capacity[u, k] = problem.demand[j, 0]
    t0 = time.perf_counter()
    res = milp(cost, integrality=np.ones(len(columns)), bounds=Bounds(0, 1),
               constraints=[LinearConstraint(one.tocsr(), 1, 1),
                            LinearConstraint(capacity.tocsr(), -np.inf, float(problem.capacity[0]))],
               options={"time_limit": time_limit})
    seconds = time.perf_counter() - t0
    if res.x is None:
        return float("nan"), seconds, res.message
    start = np.zeros(n, np.int64)
    for k in np.flatnonzero(res.x > 0.5):
        j, t = columns[k]
        start[j] = t
    return objective(problem, start), seconds, "optimal" if res.status == 0 else res.message


def sizes_table(sizes, windows: int, time_limit: float, workers: int) -> None:
    from schedrl.bound.problem import window_problem
    from schedrl.bound.windows import bound_window, rule_makers, warm_schedules
    from schedrl.scenarios import get_scenario, scoring
    from schedrl.workload.sampling import sequence

    scenario = get_scenario("default")
    data = scoring.load(scenario)
    seqs = scoring.sequences(scenario, data, "evaluation")
    print(f"default's evaluation windows (bsld), CP-SAT {time_limit:g} s with {workers} workers per window")
    print(f"{'jobs':>5s} {'start':>6s} {'best warm':>10s} {'best found':>11s} {'lower':>8s} {'gap':>7s} "
          f"{'status':>9s} {'seconds':>8s}")
    for size in sizes:
        gaps, secs = [], []
        for start in seqs.ids[:windows]:
            jobs = sequence(data, int(start), size)
            problem = window_problem(jobs, scenario.sim, scenario.metric)
            w = bound_window(problem, warm_schedules(jobs, scenario.sim, rule_makers(scenario.sim)), time_limit,
                             workers=workers, start=int(start))
            gaps.append(w.gap)
            secs.append(w.seconds)
            print(f"{size:5d} {int(start):6d} {min(w.warm.values()):10.4f} {w.upper:11.4f} {w.lower:8.4f} "
                  f"{100 * w.gap:6.1f}% {w.status.lower():>9s} {w.seconds:8.1f}", flush=True)
        print(f"{size:5d}  mean gap {100 * np.mean(gaps):.1f}%, {np.mean(secs):.1f} s per window", flush=True)


def solver_table(jobs, repeats: int, time_limit: float) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "bound"))
    from instances import random_problem

    from schedrl.bound import cpsat
    from schedrl.bound.problem import objective
    from schedrl.bound.sgs import serial

    print(f"solver choice: random windows on 4 processors, {time_limit:g} s limit each")
    print(f"{'jobs':>5s} {'metric':>6s} {'cp-sat s':>9s} {'milp s':>8s} {'cp-sat':>9s} {'milp':>9s} {'milp status':>12s}")
    rng = np.random.default_rng(0)
    for n in jobs:
        for metric in ("bsld", "wait"):
            for _ in range(repeats):
                p = random_problem(rng, n, metric)
                hint = serial(p, np.argsort(p.release, kind="stable"))
                t0 = time.perf_counter()
                solved = cpsat.solve(p, hint, objective(p, hint), time_limit, workers=1)
                cp_seconds = time.perf_counter() - t0
                value, seconds, status = time_indexed_milp(p, time_limit)
                print(f"{n:5d} {metric:>6s} {cp_seconds:9.2f} {seconds:8.2f} {objective(p, solved.start):9.4f} "
                      f"{value:9.4f} {status:>12s}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="64,128,256,512,1024", help="window sizes (jobs)")
    parser.add_argument("--windows", type=int, default=2, help="windows per size (default 2)")
    parser.add_argument("--time-limit", type=float, default=30.0, help="CP-SAT seconds per window (default 30)")
    parser.add_argument("--workers", type=int, default=2, help="CP-SAT workers (default 2)")
    parser.add_argument("--solver-jobs", default="8,10,12", help="jobs of the solver-choice windows")
    parser.add_argument("--repeats", type=int, default=2, help="solver-choice windows per size and metric")
    parser.add_argument("--only", choices=("solver", "sizes"), help="one of the two tables")
    parser.add_argument("--quick", action="store_true", help="tiny budgets: a check that the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.windows, args.time_limit, args.solver_jobs, args.repeats = "32", 1, 2.0, "5", 1
    if args.only != "sizes":
        solver_table([int(s) for s in args.solver_jobs.split(",")], args.repeats, min(args.time_limit, 60.0))
    if args.only != "solver":
        sizes_table([int(s) for s in args.sizes.split(",")], args.windows, args.time_limit, args.workers)


if __name__ == "__main__":
    main()
