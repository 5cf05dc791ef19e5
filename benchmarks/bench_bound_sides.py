"""Which side of the offline bound is loose on a 256-job window (docs/experiments/bound.md, 2026-11-29 entries): each
side pushed alone on one of `default`'s evaluation windows, cut to its first `--jobs` jobs.

- `cpsat`: CP-SAT on the whole window with one worker from the best clairvoyant order, with CP-SAT's own progress log
  (its bound and best schedule over time); `--save` keeps its schedule.
- `lns`: the local search (`schedrl.bound.lns`) from the best clairvoyant order, or from `--init` (a saved schedule),
  with `--size` jobs per slice and `--step` seconds per slice; `--save` keeps its schedule.
- `lagrange`: the Lagrangian bound from `--init`'s schedule, by price slots, and the share of the latest-start rule's
  starts its reduced-cost fixing leaves; the same at the LP dual's prices (`schedrl.bound.lagrange.cut_bound` with
  no rounds), with the conflicting pairs' rows (`cut_bound`, at most `--seconds`), and with the covers' rows too.
- `bound`: CP-SAT's bound on the whole window from `--init`'s schedule, with and without the fixing (at the
  subgradient's prices, or `--cuts`: `cut_bound`'s), or with each of `--subsolvers` or of `--params`' CP-SAT parameter
  sets (each `--seconds`).
- `calib`: `schedrl.bound.windows.bound_window` (the defaults, one worker) on the window's first `--jobs` jobs, for
  each of `--sizes`: where the window is small enough to solve, how far each side was from the optimum.
- `rows`: `cut_bound` from `--init`'s schedule with the covers' rows (`--slots`; 8 rounds), then with the widest
  jobs' rows too (`sets`), with 16 rounds, and with twice the slots.
- `branch`: `cut_bound` with the covers' and the widest jobs' rows (`--slots`), the job its LP spreads most against
  its term in `--init`'s schedule, then `branch_bound` from it for each of `--branches` (branches bounded), or for
  `--seconds`.
- `slices`: the sum of `--slice`-job time slices' own bounds (`schedrl.bound.decompose.slice_lower`, each slice
  solved as a window is) in `--seconds` over all slices, from `--init`'s schedule.

Run: `python benchmarks/bench_bound_sides.py lns --window 2 --seconds 150 --save /tmp/w.npy`, then
`python benchmarks/bench_bound_sides.py bound --window 2 --init /tmp/w.npy --seconds 90`.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def window(index: int, jobs: int):
    """(start, problem, workload, scenario) of `default`'s evaluation window `index` (0-based), cut to `jobs` jobs."""
    from bench_bound import _windows

    for k, row in enumerate(_windows("default", jobs, index + 1)):
        if k == index:
            return row
    raise SystemExit(f"default has fewer than {index + 1} evaluation windows")


def first_schedule(p, init: str | None) -> np.ndarray:
    from schedrl.bound.problem import objective
    from schedrl.bound.windows import offline_starts

    if init is not None:
        return np.load(init)
    return min(offline_starts(p).values(), key=lambda s: objective(p, s))


def logged(parameters: dict | None = None):
    """CP-SAT's Solve with its progress log on (and `parameters` set), for the `cpsat` and `bound` modes."""
    from ortools.sat.python import cp_model

    original = getattr(cp_model.CpSolver, "_unlogged", cp_model.CpSolver.Solve)  # never one wrapper in another
    cp_model.CpSolver._unlogged = original

    def solve(self, model, callback=None):
        for key, value in (parameters or {}).items():
            setattr(self.parameters, key, value)
        return original(self, model, callback)

    cp_model.CpSolver.Solve = solve
    return original


def parameter(text: str) -> tuple[str, object]:
    """'key=value' as (key, the value as a Python literal: 2, 1e-3, True; else the text)."""
    import ast

    key, value = text.split("=", 1)
    try:
        return key.strip(), ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        return key.strip(), value.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("cpsat", "lns", "lagrange", "bound", "calib", "slices", "rows", "branch"))
    parser.add_argument("--window", type=int, default=2, help="the evaluation window (0-based; default 2)")
    parser.add_argument("--jobs", type=int, default=256, help="its first N jobs (default 256)")
    parser.add_argument("--seconds", type=float, default=120.0, help="the time limit (default 120)")
    parser.add_argument("--init", help="a schedule saved by --save (start times, the window's clock)")
    parser.add_argument("--save", help="where to save the schedule found (.npy)")
    parser.add_argument("--size", type=int, default=40, help="lns: jobs per slice at first (default 40)")
    parser.add_argument("--step", type=float, default=2.0, help="lns: seconds per slice (default 2)")
    parser.add_argument("--kinds", default="slice,costly", help="lns: the neighbourhoods in turn (default "
                        "slice,costly; schedrl.bound.lns.KINDS and blocked)")
    parser.add_argument("--seed", type=int, default=0, help="lns: the search's seed (default 0)")
    parser.add_argument("--subsolvers", default="", help="bound: CP-SAT workers to try, comma-separated")
    parser.add_argument("--sizes", default="64,96,128", help="calib: window sizes")
    parser.add_argument("--slots", type=int, default=128, help="bound: the fixing's price slots (default 128)")
    parser.add_argument("--cuts", action="store_true", help="bound: the fixing at cut_bound's prices (default: the "
                        "subgradient's)")
    parser.add_argument("--params", default="", help="bound: CP-SAT parameter sets to try with max_lp and the fixing, "
                        "';' between sets, ',' between key=value (e.g. 'linearization_level=2;max_cut_rounds_at_level_zero=5')")
    parser.add_argument("--slice", type=int, default=86, help="slices: jobs per slice (default 86)")
    parser.add_argument("--branches", default="", help="branch: the branches to bound, comma-separated runs (default: "
                        "as many as --seconds allows)")
    args = parser.parse_args()

    from schedrl.bound import cpsat
    from schedrl.bound.lagrange import lagrangian_bound
    from schedrl.bound.problem import objective, replay

    if args.mode == "calib":
        from schedrl.bound.windows import bound_window, rule_makers, warm_schedules

        for size in (int(s) for s in args.sizes.split(",")):
            start, p, jobs, sc = window(args.window, size)
            w = bound_window(p, warm_schedules(jobs, sc.sim, rule_makers(sc.sim)), args.seconds, workers=1,
                             start=start)
            print(f"{size} jobs (window {start}): best warm start {min(w.warm.values()):.4f}, best found "
                  f"{w.upper:.4f} ({w.upper_source}), lower bounds "
                  + ", ".join(f"{k} {v:.4f}" for k, v in w.lowers.items())
                  + f", {w.status}, gap {100 * w.gap:.1f}%, {w.seconds:.1f} s", flush=True)
        return
    start, p, _, _ = window(args.window, args.jobs)
    s = first_schedule(p, args.init)
    upper = objective(p, s)
    until = int((s + p.duration).max())
    print(f"window {start}, {p.n} jobs: the first schedule's bsld {upper:.4f}", flush=True)
    if args.mode == "cpsat":
        logged({"log_search_progress": True, "log_to_stdout": True})
        solved = cpsat.solve(p, s, upper, args.seconds, workers=1, log=print)
        print(f"cp-sat: best {replay(p, solved.start):.4f}, bound {solved.lower:.4f}", flush=True)
        found = solved.start
    elif args.mode == "lns":
        from schedrl.bound.lns import search

        r = search(p, s, args.seconds, size=args.size, step=args.step, log=print, seed=args.seed,
                   kinds=tuple(args.kinds.split(",")))
        print(f"lns: {replay(p, r.start):.4f} after {r.neighbourhoods} slices ({r.improved} better), "
              f"{r.seconds:.1f} s", flush=True)
        found = r.start
    elif args.mode == "rows":
        from schedrl.bound.lagrange import cut_bound

        for name, kw in (("covers", {}), ("covers and the widest jobs' sets", {"sets": True}),
                         ("covers, 16 rounds", {"rounds": 16}), (f"covers, {2 * args.slots} slots",
                                                                 {"slots": 2 * args.slots})):
            kw = {"slots": args.slots, **kw}
            t0 = time.perf_counter()
            c = cut_bound(p, upper, until=until, time_limit=args.seconds, covers=True, **kw)
            print(f"{name}: {c.lower:.4f} ({c.iterations} LP solves, {c.cuts} rows, {time.perf_counter() - t0:.1f} s)",
                  flush=True)
        return
    elif args.mode == "branch":
        from schedrl.bound.lagrange import _relaxation, branch_bound, cut_bound

        t0 = time.perf_counter()
        root = cut_bound(p, upper, slots=args.slots, until=until, time_limit=args.seconds, covers=True, sets=True)
        print(f"root: {root.lower:.4f} ({root.iterations} LP solves, {root.cuts} rows, {time.perf_counter() - t0:.1f} "
              f"s); the LP spreads job {root.branch and root.branch[0]} most", flush=True)
        if root.branch is not None:
            j = root.branch[0]
            x = _relaxation(p, upper, args.slots, until)
            term = float(1 + max(s[j] - p.release[j] - p.slack[j], 0) / p.divisor[j]) if p.metric == "bsld" else \
                float(s[j] - p.release[j])
            mine = x.owner == int(np.searchsorted(x.run, j))
            weight = np.asarray(root.lp.h.getSolution().col_value)[root.lp.hcol[:len(x.owner)]][mine]  # its last LP
            print(f"  job {j}: {p.demand[j, 0] / p.capacity[0]:.2f} of the machine, {int(p.duration[j])} s, waits "
                  f"{int(s[j] - p.release[j])} s in the first schedule (term {term:.3f}); the last LP charges it "
                  f"{float(weight @ x.f[mine]):.3f} over {int((weight > 1e-3).sum())} starts", flush=True)
        for nodes in [int(b) for b in args.branches.split(",") if b] or [None]:
            t0 = time.perf_counter()  # each run from a root of its own: a branching adds rows to its root's LP
            root = cut_bound(p, upper, slots=args.slots, until=until, time_limit=args.seconds, covers=True, sets=True)
            value, made = branch_bound(p, upper, slots=args.slots, until=until, covers=True, sets=True, root=root,
                                       nodes=nodes, time_limit=args.seconds if nodes is None else 1e9)
            print(f"  {made} branches: {value:.4f} ({time.perf_counter() - t0:.1f} s)", flush=True)
        return
    elif args.mode == "slices":
        from schedrl.bound.decompose import slice_lower

        t0 = time.perf_counter()
        bound = slice_lower(p, args.slice, args.seconds, workers=1, hint=s, lns=0.5, lagrange_slots=128)
        print(f"slices of {args.slice} jobs: bound {bound:.4f}, {time.perf_counter() - t0:.1f} s", flush=True)
        return
    elif args.mode == "lagrange":
        from schedrl.bound.cpsat import latest_starts
        from schedrl.bound.lagrange import cut_bound

        for slots in (128, 256):
            g = lagrangian_bound(p, upper, slots=slots, iterations=300, until=until, fix=True)
            room = (latest_starts(p, upper) - p.release + 1).sum()
            left = sum(int((r[:, 1] - r[:, 0] + 1).sum()) for r in g.starts)
            print(f"lagrange {slots} slots: {g.lower:.4f} ({g.iterations} steps, {g.seconds:.1f} s); the fixing "
                  f"leaves {100 * left / room:.1f}% of the latest-start rule's starts", flush=True)
            dual = cut_bound(p, upper, slots=slots, until=until, rounds=0, time_limit=args.seconds)
            print(f"the LP dual's prices, {slots} slots: {dual.lower:.4f} ({dual.seconds:.1f} s)", flush=True)
            c = cut_bound(p, upper, slots=slots, until=until, fix=True, time_limit=args.seconds)
            left = sum(int((r[:, 1] - r[:, 0] + 1).sum()) for r in c.starts)
            print(f"cuts {slots} slots: {c.lower:.4f} ({c.iterations} LP solves, {c.cuts} pair rows, {c.seconds:.1f} "
                  f"s); the fixing leaves {100 * left / room:.1f}% of the latest-start rule's starts", flush=True)
            c = cut_bound(p, upper, slots=slots, until=until, fix=True, time_limit=args.seconds, covers=True)
            left = sum(int((r[:, 1] - r[:, 0] + 1).sum()) for r in c.starts)
            print(f"cuts and covers {slots} slots: {c.lower:.4f} ({c.iterations} LP solves, {c.cuts} rows, "
                  f"{c.seconds:.1f} s); the fixing leaves {100 * left / room:.1f}% of the latest-start rule's starts",
                  flush=True)
        return
    else:
        if args.cuts:
            from schedrl.bound.lagrange import cut_bound

            g = cut_bound(p, upper, slots=args.slots, until=until, fix=True)
        else:
            g = lagrangian_bound(p, upper, slots=args.slots, iterations=300, until=until, fix=True)
        print(f"{'cut_bound' if args.cuts else 'lagrange'} {g.lower:.4f} ({args.slots} slots)", flush=True)
        variants = [(name, None) for name in filter(None, args.subsolvers.split(","))] or \
            [("max_lp", None), ("max_lp", g.starts)]
        sets = [dict(parameter(kv) for kv in filter(None, one.split(","))) for one in args.params.split(";")]
        if args.params:
            variants = [(f"max_lp {one or 'defaults'}", g.starts) for one in args.params.split(";")]
        found = s
        for k, (name, starts) in enumerate(variants):
            if args.params:
                logged(sets[k])
            cpsat.SUBSOLVERS = (name.split()[0],)
            t0 = time.perf_counter()
            solved = cpsat.solve(p, s, upper, args.seconds, workers=1, starts=g.starts if args.subsolvers else starts)
            print(f"cp-sat {name}{' with the fixing' if starts is not None or args.subsolvers else ''}: bound "
                  f"{solved.lower:.4f}, best {replay(p, solved.start):.4f}, {time.perf_counter() - t0:.1f} s",
                  flush=True)
    if args.save and found is not None:
        np.save(args.save, found)


if __name__ == "__main__":
    main()
