"""The offline bound (`schedrl bound`, `schedrl.bound`): seconds per window and the gap between its two sides, by
window size; and the solver choice, CP-SAT against a time-indexed MILP solved by HiGHS, on small windows.

Window size: the first N jobs of a scenario's first evaluation windows (`default`: bsld), each bounded with
`--time-limit` seconds, `--lns` of them to the local search from the best warm start and the rest to CP-SAT
(`--workers` threads), then the LP: the best of the rules' schedules, the best offline serial schedule, the best
found and who found it, the load-based, CP-SAT's, the Lagrangian's and the LP's lower bounds, the gap (best found -
largest lower bound) / best found, the status and the seconds.

Solver choice: random windows of a few jobs on a 4-processor machine (run times around bsld's 10 s bound, so a
time-indexed model has few periods); the seconds each solver takes to prove the optimum (or its limit) and the two
optima, which must agree. The time-indexed MILP has one binary per job and start second (scipy's HiGHS); a real
window's horizon is 10^5-10^6 s, so it cannot be built there at all: the measurement is on the windows where both run.
Orders (`--only orders`): the serial scheme over clairvoyant orders (true run time, area, arrival plus a multiple of
the run time) on the first window of each `--lp-sizes`: the metric and the seconds.
Relaxations (`--only lp`): the LP lower bound (`schedrl.bound.lp`) by slots, with and without the start-slot
linking, and the Lagrangian one (`schedrl.bound.lagrange`) by price slots and steps, on the first window of each
`--lp-sizes`: bound, seconds, and the LP's columns and rows.
Run: `python benchmarks/bench_bound.py [--sizes 64,128,256,512,1024] [--time-limit 30] [--windows 2] [--only lp]`.
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


def _windows(name: str, size: int, count: int):
    """(start, problem, workload) of the first `count` evaluation windows of scenario `name`, cut to `size` jobs."""
    from schedrl.bound.problem import window_problem
    from schedrl.scenarios import get_scenario, scoring
    from schedrl.workload.sampling import sequence

    scenario = get_scenario(name)
    data = scoring.load(scenario)
    seqs = scoring.sequences(scenario, data, "evaluation")
    source = seqs.data if seqs.data is not None else data
    for start in seqs.ids[:count]:
        jobs = sequence(source, int(start), size)
        yield int(start), window_problem(jobs, scenario.sim, scenario.metric), jobs, scenario


def sizes_table(sizes, windows: int, time_limit: float, workers: int, name: str = "default",
                lp_slots: int = 0, lns: float | None = None) -> None:
    from schedrl.bound.windows import LAGRANGE_SLOTS, LNS_SHARE, bound_window, rule_makers, warm_schedules

    lns = LNS_SHARE if lns is None else lns
    print(f"{name}'s evaluation windows, {time_limit:g} s per window ({100 * lns:g}% to the local search), CP-SAT "
          f"with {workers} workers, Lagrangian {LAGRANGE_SLOTS} slots (the pairs' rows, else the subgradient's), "
          f"LP {lp_slots} slots")
    print(f"{'jobs':>5s} {'start':>6s} {'rules':>9s} {'offline':>9s} {'best':>9s} {'from':>7s} {'load':>7s} "
          f"{'cp-sat':>7s} {'lagrange':>8s} {'lp':>7s} {'gap':>7s} {'status':>9s} {'seconds':>8s}")
    for size in sizes:
        gaps, secs = [], []
        for start, problem, jobs, scenario in _windows(name, size, windows):
            w = bound_window(problem, warm_schedules(jobs, scenario.sim, rule_makers(scenario.sim)), time_limit,
                             workers=workers, start=start, lp_slots=lp_slots, lns=lns)
            gaps.append(w.gap)
            secs.append(w.seconds)
            rules = min(v for k, v in w.warm.items() if not k.startswith("offline"))
            offline = min(v for k, v in w.warm.items() if k.startswith("offline"))
            print(f"{size:5d} {start:6d} {rules:9.4f} {offline:9.4f} {w.upper:9.4f} {w.upper_source[:7]:>7s} "
                  f"{w.lowers['load']:7.4f} "
                  f"{w.lowers.get('cp-sat', float('nan')):7.4f} "
                  f"{w.lowers.get('cuts', w.lowers.get('lagrange', float('nan'))):8.4f} "
                  f"{w.lowers.get('lp', float('nan')):7.4f} "
                  f"{100 * w.gap:6.1f}% {w.status.lower():>9s} {w.seconds:8.1f}", flush=True)
        print(f"{size:5d}  mean gap {100 * np.mean(gaps):.1f}%, {np.mean(secs):.1f} s per window", flush=True)


def lp_table(sizes, name: str = "default",
             variants=("lp 64", "lp 128", "lp 256", "lp 64+starts", "lp 128+starts", "lagrange 128",
                       "lagrange 256", "lagrange 128+3000")) -> None:
    """The relaxations' variants on each size's first window, from the best offline serial schedule (no CP-SAT: the
    same horizon at any load): bound, seconds, columns and rows (the LP), or steps (the Lagrangian: `slots+steps`,
    default 300)."""
    from schedrl.bound.lagrange import lagrangian_bound
    from schedrl.bound.lp import lp_bound
    from schedrl.bound.problem import objective
    from schedrl.bound.windows import offline_starts

    print(f"{name}'s first evaluation window: the relaxations' variants (from the best offline serial schedule)")
    print(f"{'jobs':>5s} {'variant':>17s} {'upper':>8s} {'bound':>8s} {'seconds':>8s} {'columns':>9s} {'rows':>9s}")
    for size in sizes:
        for _, problem, _, _ in _windows(name, size, 1):
            best = min(offline_starts(problem).values(), key=lambda s: objective(problem, s))
            upper = objective(problem, best)
            until = int((best + problem.duration).max())
            for variant in variants:
                kind, _, rest = variant.partition(" ")
                slots, _, extra = rest.partition("+")
                if kind == "lagrange":
                    g = lagrangian_bound(problem, upper, slots=int(slots), iterations=int(extra or 300), until=until)
                    print(f"{size:5d} {variant:>17s} {upper:8.4f} {g.lower:8.4f} {g.seconds:8.1f} "
                          f"{g.iterations:>9d} steps", flush=True)
                    continue
                b = lp_bound(problem, upper, slots=int(slots), starts=bool(extra), time_limit=600, until=until)
                print(f"{size:5d} {variant:>17s} {upper:8.4f} {b.lower:8.4f} {b.seconds:8.1f} {b.columns:9,d} "
                      f"{b.rows:9,d}" + ("" if b.status == "optimal" else f" ({b.status})"), flush=True)


def orders_table(sizes, name: str = "default") -> None:
    """The serial scheme over clairvoyant orders of each size's first window: the metric and the seconds (the two
    `schedrl.bound.windows.OFFLINE_ORDERS` and the arrival-based ones measured against them)."""
    from schedrl.bound.problem import objective
    from schedrl.bound.sgs import profile_serial

    print(f"{name}'s first evaluation window: the serial scheme over clairvoyant orders")
    print(f"{'jobs':>5s} {'order':>27s} {'metric':>10s} {'seconds':>8s}")
    for size in sizes:
        for _, p, _, _ in _windows(name, size, 1):
            keys = {"arrival": p.release, "run time": p.duration, "area": p.duration * p.demand.sum(axis=1)}
            keys.update({f"arrival + {k} x run time": p.release + k * p.duration for k in (1, 5, 10)})
            for label, key in keys.items():
                t0 = time.perf_counter()
                start = profile_serial(p, np.lexsort((p.release, key)))
                print(f"{size:5d} {label:>27s} {objective(p, start):10.4f} {time.perf_counter() - t0:8.2f}", flush=True)


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
    parser.add_argument("--scenario", default="default", help="the sizes' and LP's windows (default default)")
    parser.add_argument("--lp-slots", type=int, default=0, help="the LP bound's slots in the sizes table (0: none)")
    parser.add_argument("--lns", type=float, default=None,
                        help="the local search's share of each window's time in the sizes table (default 0.5)")
    parser.add_argument("--lp-sizes", default="256,1024", help="window sizes of the relaxations' table")
    parser.add_argument("--only", choices=("solver", "sizes", "lp", "orders"), help="one of the four tables")
    parser.add_argument("--quick", action="store_true", help="tiny budgets: a check that the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.windows, args.time_limit, args.solver_jobs, args.repeats = "32", 1, 2.0, "5", 1
        args.lp_sizes = "32"
    if args.only in (None, "solver"):
        solver_table([int(s) for s in args.solver_jobs.split(",")], args.repeats, min(args.time_limit, 60.0))
    if args.only in (None, "sizes"):
        sizes_table([int(s) for s in args.sizes.split(",")], args.windows, args.time_limit, args.workers,
                    args.scenario, args.lp_slots, args.lns)
    if args.only in (None, "lp"):
        lp_table([int(s) for s in args.lp_sizes.split(",")], args.scenario)
    if args.only in (None, "orders"):
        orders_table([int(s) for s in args.lp_sizes.split(",")], args.scenario)


if __name__ == "__main__":
    main()
