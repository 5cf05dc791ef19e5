"""`schedrl hindsight`: a decision class's perfect-knowledge bound over a base rule on a scenario's sequences.

The logic is `schedrl.eval.hindsight`; this module parses the options and prints the table (or JSON).
"""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name, help=help_text,
        description=help_text + ". At every decision of the class, the rest of the sequence is simulated for each "
        "option (true arrivals and run times), each continued by the base rule alone, and the best is taken: a "
        "one-step rollout, never worse than the base on any sequence, and a lower bound on the class's optimum "
        "(docs/experiments/hindsight.md).")
    p.add_argument("--scenario", required=True, metavar="NAME|FILE", help="a scenario of the event simulator")
    p.add_argument("--decision", required=True, metavar="CLASS",
                   help="inspector (accept or reject the base's proposal) or backfill (which of EASY's candidates "
                        "starts; the scenario must backfill with easy or rlscheduler)")
    p.add_argument("--base", default="f1", help="the base rule: a heuristic name or tuned:FILE (default f1)")
    p.add_argument("--part", choices=("validation", "evaluation"), default="evaluation",
                   help="the scenario's sequences to score (default evaluation)")
    p.add_argument("--sequences", type=int, default=None,
                   help="only the first N of the part's fixed sequences (default: all of them)")
    p.add_argument("--candidates", type=int, default=None,
                   help="backfill: try only the first K candidates (queue order) at a decision (default: all)")
    p.add_argument("--skip", action="store_true",
                   help="backfill: also try starting none of the candidates until the next event")
    p.add_argument("--depth", type=int, default=1,
                   help="inspector: also try rejecting 2..M times in a row at a point (M + 1 rollouts instead of 2; "
                        "default 1)")
    p.add_argument("--verify", action="store_true",
                   help="simulate the base's own option at every decision too, and check it against the cached value "
                        "(twice the rollouts)")
    p.add_argument("--json", action="store_true", help="the result as JSON (per-sequence values included)")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.eval import hindsight as hs
    from schedrl.heuristics.hindsight import MAX_DEPTH
    from schedrl.scenarios import get_scenario

    if args.sequences is not None and args.sequences < 1:
        raise UsageError(f"--sequences must be >= 1, got {args.sequences}")
    if not 1 <= args.depth <= MAX_DEPTH:
        raise UsageError(f"--depth must be between 1 and {MAX_DEPTH} (each point costs depth + 1 rollouts), "
                         f"got {args.depth}")
    if args.candidates is not None and args.candidates < 1:
        raise UsageError(f"--candidates must be >= 1, got {args.candidates}")
    try:
        scenario = get_scenario(args.scenario)
        if args.decision not in hs.DECISIONS:
            raise ValueError(f"--decision {args.decision!r} is not a decision class; choose one of "
                             f"{', '.join(hs.DECISIONS)}")
        hs.check_decision(scenario, args.decision)
        if args.decision != "backfill" and (args.candidates is not None or args.skip):
            raise ValueError("--candidates and --skip are options of --decision backfill")
        if args.decision != "inspector" and args.depth != 1:
            raise ValueError("--depth is an option of --decision inspector")
        try:
            hs.make_base(args.base)
        except ValueError as e:
            raise ValueError(f"--base: {e}") from None
    except ValueError as e:
        raise UsageError(str(e)) from None
    say = lambda m: print(f"schedrl hindsight: {m}", file=sys.stderr, flush=True)  # noqa: E731
    try:
        result = hs.hindsight(scenario, args.decision, args.base, args.part, args.sequences,
                              candidates=args.candidates, skip=args.skip, depth=args.depth, verify=args.verify,
                              progress=say)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(json.dumps(result, indent=1) if args.json else hs.to_markdown(result), end="\n" if args.json else "")
    return 0
