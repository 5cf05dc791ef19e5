"""`schedrl evaluate CHECKPOINT`: the trained policy as one more column of the `compare` table."""

from __future__ import annotations

import argparse
import sys

from schedrl.cli.options import add_sim_options, add_trace_options, load_workload, parse_list, parse_starts, sim_config
from schedrl.sim.config import BACKFILLS


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("checkpoint", help="checkpoint directory written by `schedrl train`")
    add_trace_options(p, default_from="the checkpoint's training run")
    add_sim_options(p, backfill_many=True, backfill_default=None)
    p.add_argument("--policies", default="fcfs,sjf,wfp3,unicep,f1", help="heuristics to compare against")
    p.add_argument("--sequences", type=int, default=10, help="random sequences (default 10)")
    p.add_argument("--jobs", type=int, default=1024, help="jobs per sequence (default 1024)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sequence starts (default 1)")
    p.add_argument("--starts", metavar="I,J,...", help="fixed 0-based start indices")
    p.add_argument("--metric", default=None, help="metric (default: the one the policy was trained on)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--csv", action="store_true")
    fmt.add_argument("--markdown", action="store_true")
    p.add_argument("--plot", metavar="PNG", help="bar chart of the means")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.eval.compare import choose_starts, compare
    from schedrl.eval.policies import resolve_policy

    policy_spec = f"checkpoint:{args.checkpoint}"
    policy = resolve_policy(policy_spec)  # fails early with a clear message
    trained = policy.env_config
    metric = args.metric or trained.get("metric", "bsld")
    taken = apply_training_defaults(args, trained)
    backfills = parse_list(args.backfill, BACKFILLS, "backfill strategy")
    workload = load_workload(args)
    try:
        starts = choose_starts(workload, args.jobs, args.sequences, args.seed, parse_starts(args.starts))
        if taken:
            print(f"schedrl evaluate: as trained: {', '.join(taken)}", file=sys.stderr)
        result = compare(workload, parse_list(args.policies, what="policy") + [policy_spec], backfills, starts,
                         args.jobs, metric, sim_config(args, backfills[0]), seed=args.seed)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.plot:
        from schedrl.eval.plots import comparison_bars

        comparison_bars(result, args.plot)
    print(result.to_json() if args.json else result.to_csv() if args.csv else
          result.to_markdown() if args.markdown else result.to_text())
    return 0


def apply_training_defaults(args: argparse.Namespace, trained: dict) -> list[str]:
    """Fill the trace, cleaning, preset and backfill options left out from the training env config."""
    taken = []
    if args.trace is None:
        args.trace = trained["trace"]
        taken.append(f"trace {args.trace}")
        if args.cleaning is None:  # the training trace as it was cleaned for training
            args.cleaning = trained.get("cleaning", "default")
            taken.append(f"cleaning {args.cleaning}")
    if args.preset is None and trained.get("preset") == "rlscheduler":
        args.preset = "rlscheduler"
        taken.append("preset rlscheduler")
    if args.backfill is None:
        args.backfill = trained.get("backfill", "none")
        taken.append(f"backfill {args.backfill}")
    return taken
