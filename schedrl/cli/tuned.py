"""`schedrl tuned`: fit a linear priority rule to a trace (`fit`) and score it on held-out sequences (`evaluate`).

The rule sees the trace split as an RLScheduler run sees it (`schedrl train rlscheduler`, machine defaults):
training windows from the first `--train-fraction` of the cleaned trace, the choice among the kept rules on
the validation zone, and `evaluate` on the evaluation zone (`Judge.split_range`), never seen by the fit. The fit is
`scenarios/fitting.py:fit_rule`, the evaluation `eval/tuned.py:evaluate_rule`; this module parses and prints.
"""

from __future__ import annotations

import argparse
import sys

from schedrl.cli.options import CLEANING_PRESETS, add_slurm_options, apart, parse_list
from schedrl.eval.tuned import EVALUATION_SEED


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    f = actions.add_parser("fit", help="fit a rule by CMA-ES on the trace's training zone, keep the best on validation",
                           description="Fit a priority rule linear in the jobs' log features (docs/agents/tuned-rule.md).")
    f.add_argument("--scenario", metavar="NAME|FILE", default=None,
                   help="fit on a named scenario (`schedrl scenarios list`) or a scenario file: its trace, cleaning, "
                        "simulator semantics (discipline, window, backfilling, event order), metric, training zone "
                        "and validation sequences, so the rule is judged as its agents are (`schedrl compare "
                        "--scenario NAME --policies f1,tuned:FILE`). --trace, --cleaning, --backfill and --metric "
                        "given with it override the scenario's")
    f.add_argument("--trace", metavar="NAME|PATH", help="catalog name or SWF file (required without --scenario)")
    f.add_argument("--cleaning", choices=CLEANING_PRESETS, default="default",
                   help="trace cleaning preset (default: default)")
    f.add_argument("--backfill", choices=("none", "easy", "conservative", "slurm"), default="none",
                   help="backfilling while the picked job waits (default: none; slurm: Slurm's passes, the options "
                        "below)")
    f.add_argument("--metric", default="bsld", help="objective: bsld, wait, turnaround, slowdown (default: bsld)")
    f.add_argument("--budget", default="5m", help="wall-clock search budget, e.g. 90s, 5m, 1h (default: 5m)")
    f.add_argument("--seed", type=int, default=0, help="seed of the training windows and the search (default 0)")
    f.add_argument("--out", required=True, metavar="FILE", help="JSON file the rule is written to")
    f.add_argument("--start", default="f1",
                   help="rule the search starts from: f1, sjf, ljf, smallest, largest (default f1)")
    f.add_argument("--window-jobs", type=int, default=1024, help="jobs per training window (default 1024)")
    f.add_argument("--windows", type=int, default=16, help="training windows per generation (default 16)")
    f.add_argument("--train-fraction", type=float, default=0.7,
                   help="training windows lie in this first share of the cleaned trace (default 0.7, as RLScheduler's)")
    f.add_argument("--validation-share", type=float, default=0.25,
                   help="share of the held-out rest whose sequences choose the rule (default 0.25, as RLScheduler's)")
    f.add_argument("--validation-sequences", type=int, default=10, help="validation sequences (default 10)")
    f.add_argument("--force", action="store_true",
                   help="replace --out even where schedrl did not write it (never the command's own inputs)")
    apart(f, "--scenario", ("--train-fraction", "--validation-share", "--validation-sequences"),
          "a scenario fixes the split and the validation sequences")
    add_slurm_options(f, policy_top=False)  # the site's Slurm, as `schedrl train`'s agents take it
    f.set_defaults(run=run_fit)

    e = actions.add_parser("evaluate", help="the rule against the heuristics on the evaluation zone's sequences",
                           description="The rule and heuristics on held-out evaluation sequences, paired against F1.")
    e.add_argument("rule", metavar="FILE", help="a rule written by `schedrl tuned fit`")
    e.add_argument("--trace", default=None, metavar="NAME|PATH", help="the rule's trace as a path (default: its name)")
    e.add_argument("--policies", default="f1,sjf,wfp3,unicep",
                   help="heuristics beside it (default: f1,sjf,wfp3,unicep)")
    e.add_argument("--sequences", type=int, default=10, help="evaluation sequences (default 10)")
    e.add_argument("--jobs", type=int, default=1024, help="jobs per sequence (default 1024)")
    e.add_argument("--seed", type=int, default=EVALUATION_SEED,
                   help=f"seed of the starts (default {EVALUATION_SEED}: a seed-0 RLScheduler run's evaluation "
                        "sequences)")
    fmt = e.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON with per-sequence values")
    fmt.add_argument("--markdown", action="store_true", help="a Markdown table")
    e.set_defaults(run=run_evaluate)
    return p


def run_fit(args: argparse.Namespace) -> int:
    from pathlib import Path

    from schedrl.cli.main import UsageError
    from schedrl.cli.options import scenario_with_options, slurm_options
    from schedrl.outputs import In, Out, claim
    from schedrl.scenarios.fitting import fit_rule

    # checked before the search spends its budget: the output path's kind, its directory, what it would replace
    outputs = claim("tuned fit", [Out("--out", Path(args.out))],
                    [In(f"--{n}", Path(getattr(args, n))) for n in ("trace", "scenario")
                     if getattr(args, n, None) and Path(getattr(args, n)).expanduser().exists()], force=args.force)
    scenario = scenario_with_options(args)
    slurm = slurm_options(args, args.backfill) if scenario is None else {}
    try:
        rule = fit_rule(scenario, args.trace, cleaning=args.cleaning, backfill=args.backfill, slurm=slurm,
                        metric=args.metric,
                        budget=args.budget, seed=args.seed, window_jobs=args.window_jobs, windows=args.windows,
                        start=args.start, train_fraction=args.train_fraction, validation_share=args.validation_share,
                        validation_sequences=args.validation_sequences, log=lambda line: print(line, flush=True),
                        note=lambda line: print(f"schedrl: {line}", file=sys.stderr))
    except ValueError as e:
        raise UsageError(str(e)) from None
    rule.save(args.out)
    outputs.record(args.out)
    print(f"rule written to {args.out}; score it on the held-out evaluation sequences with "
          f"`schedrl tuned evaluate {args.out}`" if scenario is None else
          f"rule written to {args.out}; score it on the scenario's held-out evaluation sequences with "
          f"`schedrl compare --scenario {scenario.name} --policies {scenario.reference.lower()},tuned:{args.out}`")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    import json

    from schedrl.cli.main import UsageError
    from schedrl.eval.tuned import evaluate_rule
    from schedrl.heuristics.tuned import load_rule

    rule = load_rule(args.rule)
    heuristics = parse_list(args.policies, what="policy", option="--policies")
    try:
        evaluation = evaluate_rule(rule, heuristics, args.sequences, args.jobs, args.seed, args.trace, where=args.rule,
                                   note=lambda line: print(f"schedrl tuned evaluate: {line}", file=sys.stderr))
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(json.dumps(evaluation.to_dict(), indent=2) if args.json else evaluation.text(markdown=args.markdown))
    return 0
