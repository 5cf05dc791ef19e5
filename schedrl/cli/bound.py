"""`schedrl bound`: how far from perfect: the offline optimum of a scenario's windows (or a trace's), bounded from
both sides by CP-SAT from the heuristics' schedules.

The logic is `schedrl.bound`; this module parses the options and prints the table (or JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from schedrl.cli.options import add_sim_options, add_trace_options, load_workload, parse_starts, sim_config

PHASE_LINES = 60.0
"""From this `--time-limit` on, each window's phases print their own progress lines too (the local search's every 50
neighbourhoods, the LP's, CP-SAT's, the branching's every minute); below it, a window's one line comes soon enough."""


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, help=help_text,
        description=help_text + ". Per window: every job's arrival, size and true run time known in advance, "
        "non-preemptive, the machine's resources as capacities, the scenario's walltime kills; the best schedule "
        "found (scored by schedrl's metric code) and the solver's proven lower bound (docs/reference/bound.md).")
    p.add_argument("--scenario", action="append", metavar="NAME|FILE",
                   help="a scenario of the event simulator (repeat for several); or --trace with --starts")
    p.add_argument("--part", choices=("validation", "evaluation"), default="evaluation",
                   help="the scenario's windows to bound (default evaluation)")
    p.add_argument("--sequences", type=int, default=None, help="only the first N windows (default: all)")
    p.add_argument("--jobs", type=int, default=None,
                   help="jobs per window: the first N of each scenario window (default: all), or with --trace the "
                        "window length (default 256)")
    add_trace_options(p, default_from="--scenario's")
    add_sim_options(p)
    p.add_argument("--starts", metavar="I,J,...", help="with --trace: the windows' first positions (0-based)")
    p.add_argument("--metric", choices=("bsld", "wait"), default=None, help="with --trace: the objective (default bsld)")
    p.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                   help="wall-clock time per window, shared by the local search, CP-SAT, and the lower bound's LP and "
                        "its branching (default 60; from 60 s on each phase prints its progress; "
                        "docs/reference/bound.md)")
    p.add_argument("--work", type=float, default=None, metavar="UNITS",
                   help="instead of --time-limit: CP-SAT's deterministic limit per window in its own work units (its "
                        "workers interleaved in a fixed order): the same bounds on any machine at any load")
    p.add_argument("--workers", type=int, default=2, help="CP-SAT's workers (threads) per window (default 2)")
    p.add_argument("--slices", type=int, default=None, metavar="N",
                   help="windows larger than N jobs: half the time to the sum of N-job time slices' own lower bounds "
                        "(docs/reference/bound.md; default: one solve of the whole window)")
    p.add_argument("--lagrange-slots", type=int, default=None, metavar="N",
                   help="price slots of the Lagrangian lower bound (default 128; 0: none; docs/reference/bound.md)")
    p.add_argument("--cut-rounds", type=int, default=None, metavar="N",
                   help="the Lagrangian's LP re-solves with rows for jobs that cannot run at once (default 8; 0: none)")
    p.add_argument("--lp-slots", type=int, default=None, metavar="N",
                   help="time slots of the LP lower bound (default 0: none; the Lagrangian's dominates it)")
    p.add_argument("--lns", type=float, default=None, metavar="SHARE",
                   help="the share of the time the local search gets before CP-SAT (default 0.5; 0: none)")
    p.add_argument("--seed", type=int, default=0, help="CP-SAT's random seed (default 0)")
    p.add_argument("--policy", action="append", metavar="SPEC", default=None,
                   help="a policy whose schedule also warm-starts the solver (a heuristic, tuned:FILE, zoo:NAME, "
                        "checkpoint:PATH; repeat for several)")
    p.add_argument("--out", metavar="JSON", help="write the result as JSON (a list, one entry per scenario)")
    p.add_argument("--schedules", metavar="DIR",
                   help="write each window's best schedule (job id, submit, start, end) as CSV under DIR/NAME/")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--force", action="store_true", help="replace --out and --schedules files schedrl did not write")
    p.set_defaults(run=run)
    return p


def _checked(args) -> None:
    from schedrl.cli.main import UsageError

    if not args.time_limit > 0 or args.time_limit != args.time_limit or args.time_limit == float("inf"):
        raise UsageError(f"--time-limit must be a positive number of seconds, got {args.time_limit:g}")
    if args.work is not None and (not args.work > 0 or args.work == float("inf")):
        raise UsageError(f"--work must be a positive number of work units, got {args.work:g}")
    if args.work is not None and args.slices is not None:
        raise UsageError("--slices divides a wall-clock --time-limit; leave it out with --work")
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    if args.lns is not None and not 0 <= args.lns < 1:
        raise UsageError(f"--lns must be a share of the time in [0, 1), got {args.lns:g}")
    if args.cut_rounds is not None and args.cut_rounds < 0:
        raise UsageError(f"--cut-rounds must be >= 0, got {args.cut_rounds}")
    for name in ("sequences", "jobs", "slices"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name} must be >= 1, got {value}")
    if args.scenario and args.trace:
        raise UsageError("give --scenario or --trace, not both")
    if not args.scenario and not args.trace:
        raise UsageError("give --scenario NAME (its evaluation windows) or --trace with --starts")
    if args.trace and not args.starts:
        raise UsageError("--trace needs --starts (the windows' first positions)")
    if args.scenario and (args.starts or args.metric):
        raise UsageError("--starts and --metric go with --trace; a scenario fixes its windows and metric")


def _policies(specs):
    from schedrl.cli.main import UsageError
    from schedrl.eval.policies import policy_label, resolve_policy

    out = {}
    for spec in specs or ():
        try:
            resolve_policy(spec)
        except (ValueError, FileNotFoundError) as e:
            raise UsageError(f"--policy {spec}: {e}") from None
        out[policy_label(spec)] = lambda s=spec: resolve_policy(s)
    return out


def run(args: argparse.Namespace) -> int:
    from schedrl.bound import cpsat
    from schedrl.bound.windows import bound_scenario, bound_trace
    from schedrl.cli.main import UsageError
    from schedrl.outputs import Out, claim

    _checked(args)
    missing = cpsat.available()
    if missing is not None:
        raise UsageError(missing)
    outs = [Out("--out", Path(args.out))] if args.out else []
    outs += [Out("--schedules", Path(args.schedules), kind="dir")] if args.schedules else []
    claimed = claim("bound", outs, force=args.force) if outs else None
    policies = _policies(args.policy)
    from schedrl.bound.windows import CUT_ROUNDS, LAGRANGE_SLOTS, LNS_SHARE, LP_SLOTS

    lp_slots = LP_SLOTS if args.lp_slots is None else args.lp_slots
    lagrange_slots = LAGRANGE_SLOTS if args.lagrange_slots is None else args.lagrange_slots
    lns = LNS_SHARE if args.lns is None else args.lns
    cut_rounds = CUT_ROUNDS if args.cut_rounds is None else args.cut_rounds
    say = lambda m: print(f"schedrl bound: {m}", file=sys.stderr, flush=True)  # noqa: E731
    phases = say if args.time_limit >= PHASE_LINES else None
    results = []
    try:
        if args.scenario:
            from schedrl.scenarios import get_scenario

            for name in args.scenario:
                scenario = get_scenario(name)
                results.append(bound_scenario(scenario, args.time_limit, part=args.part, sequences=args.sequences,
                                              jobs=args.jobs, workers=args.workers, seed=args.seed,
                                              policies=policies, progress=say, keep=bool(args.schedules),
                                              slices=args.slices, work=args.work, lp_slots=lp_slots,
                                       lagrange_slots=lagrange_slots, lns=lns, cut_rounds=cut_rounds,
                                       log=phases))
        else:
            workload = load_workload(args)
            starts = parse_starts(args.starts)
            length = args.jobs or 256
            bad = [s for s in starts if s < 0 or s + length > len(workload)]
            if bad:
                raise UsageError(f"--starts {bad[0]}: a window of {length} jobs must lie in the trace's "
                                 f"{len(workload):,} jobs (positions 0..{len(workload) - length})")
            results.append(bound_trace(workload, starts, length, sim_config(args), args.metric or "bsld",
                                       args.time_limit, name=str(args.trace), workers=args.workers, seed=args.seed,
                                       policies=policies, progress=say, keep=bool(args.schedules),
                                       slices=args.slices, work=args.work, lp_slots=lp_slots,
                                       lagrange_slots=lagrange_slots, lns=lns, cut_rounds=cut_rounds, log=phases))
    except ValueError as e:
        raise UsageError(str(e)) from None
    if claimed is not None:
        claimed.prepare()
        if args.schedules:
            from schedrl.bound.windows import schedule_files

            for r in results:
                for path, text in schedule_files(r, args.schedules):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    claimed.write(path, text)
        for r in results:
            r.pop("_schedules", None)
        if args.out:
            claimed.write(args.out, json.dumps(results, indent=1) + "\n")
    for r in results:
        r.pop("_schedules", None)
    print(json.dumps(results, indent=1) if args.json else "\n".join(to_markdown(r) for r in results))
    return 0


def to_markdown(result: dict) -> str:
    """One scenario's windows and summary as the tables `schedrl bound` prints."""
    s = result["summary"]
    metric = result["metric"]
    lines = [f"{result['name']}: {s['windows']} windows of {result['sequences']['jobs']} jobs, {metric}, "
             f"{result['solver']}, " + (f"{result['work']:g} work units" if result.get("work") else
                                        f"{result['time_limit']:g} s") +
             f" and {result['workers']} workers per window", "",
             "| start | best found | from | lower bound | from | gap | status | seconds |", "|---|---|---|---|---|---|---|---|"]
    for w in result["windows"]:
        lines.append(f"| {w['start']} | {w['upper']:,.4f} | {w['upper_source']} | {w['lower']:,.4f} | "
                     f"{w['lower_source']} | {100 * w['gap']:.1f}% | {w['status'].lower()} | {w['seconds']:.1f} |")
    verdict = "closed" if s["closed"] else "open"
    lines += ["", f"mean best found {s['upper']:,.4f}, mean lower bound {s['lower']:,.4f} ({s['over_trivial']:+,.4f} "
                  f"over the trivial {s['trivial']:,.4f}): gap {100 * s['gap']:.1f}% ({verdict} at 10%); "
                  f"{s['solved']} of {s['windows']} windows solved, {s['within']} within 10%; "
                  f"{s['seconds_per_window']:.1f} s per window"]
    if result.get("methods"):
        from schedrl.bound.gap import shares

        table = shares(result)
        lines += ["", f"| method | mean {metric} | share of the gap to the optimum it closes |", "|---|---|---|"]
        for label, row in table["methods"].items():
            cell = (f"{100 * row['share']:.1f}%" if row["share"] is not None else
                    ("open: the optimum lies in " f"[{table['lower']:,.4f}, {table['upper']:,.4f}]"
                     if table["status"] == "open" else "n/a"))
            lines.append(f"| {label} | {row['value']:,.4f} | {cell} |")
    return "\n".join(lines) + "\n"
