"""`schedrl compare`: every policy on the same sequences, a table like RLScheduler Table V."""

from __future__ import annotations

import argparse

from schedrl.cli.options import (
    add_sim_options, add_trace_options, load_workload, parse_list, parse_starts, sim_config, warn_walltime_kills,
)
from schedrl.sim.config import BACKFILLS


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    add_trace_options(p)
    p.add_argument("--policies", default="fcfs,sjf,wfp3,unicep,f1",
                   help="comma-separated heuristics and/or checkpoint:PATH (default: fcfs,sjf,wfp3,unicep,f1)")
    add_sim_options(p, backfill_many=True)
    p.add_argument("--sequences", type=int, default=10, help="number of random sequences (default: 10)")
    p.add_argument("--jobs", type=int, default=1024, help="jobs per sequence (default: 1024)")
    p.add_argument("--seed", type=int, default=1, help="seed for the random sequence starts (default: 1)")
    p.add_argument("--starts", metavar="I,J,...", help="fixed 0-based start indices instead of random ones")
    p.add_argument("--metric", default="bsld",
                   help="bsld, wait, turnaround, slowdown, utilization, fairness, or util:NAME for one resource's "
                        "utilisation on a multi-resource trace, e.g. util:bb with --augment S4 (default: bsld)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON with per-sequence values")
    fmt.add_argument("--csv", action="store_true", help="CSV with per-sequence values")
    fmt.add_argument("--markdown", action="store_true", help="a Markdown table")
    p.add_argument("--plot", metavar="PNG", help="bar chart of the means")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.eval.compare import choose_starts, compare
    from schedrl.metrics import UTIL_PREFIX, check_metric
    from schedrl.sim.simulator import resource_names
    from schedrl.workload.sampling import sequence

    backfills = parse_list(args.backfill, BACKFILLS, "backfill strategy", "--backfill")
    policies = parse_list(args.policies, what="policy", option="--policies")
    try:
        check_metric(args.metric, resources=True)
    except ValueError as e:
        raise UsageError(str(e)) from None
    workload = load_workload(args)
    try:
        starts = choose_starts(workload, args.jobs, args.sequences, args.seed, parse_starts(args.starts))
        config = sim_config(args, backfills[0])
        if args.metric.startswith(UTIL_PREFIX):  # name the resources before any sequence runs
            names = resource_names(workload, config)
            if args.metric[len(UTIL_PREFIX):] not in names:
                raise ValueError(f"--metric {args.metric}: {workload.name} has no resource "
                                 f"{args.metric[len(UTIL_PREFIX):]!r} (its resources: {', '.join(names)}; "
                                 "--augment S1-S10 adds bb, and power for S6-S10)")
        warn_walltime_kills([sequence(workload, s, args.jobs) for s in sorted(set(starts))], config)
        result = compare(workload, policies, backfills, starts, args.jobs, args.metric, config,
                         seed=args.seed, progress=False if args.no_progress else None)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.plot:
        from schedrl.eval.plots import comparison_bars

        comparison_bars(result, args.plot)
    if args.json:
        print(result.to_json())
    elif args.csv:
        print(result.to_csv(), end="")
    elif args.markdown:
        print(result.to_markdown())
    else:
        print(result.to_text())
    return 0
