"""`schedrl tuned`: fit a linear priority rule to a trace (`fit`) and score it on held-out sequences (`evaluate`).

The rule sees the trace split as an RLScheduler run sees it (`schedrl train rlscheduler`, machine defaults):
training windows from the first `--train-fraction` of the cleaned trace, the choice among the kept rules on
the validation zone, and `evaluate` on the evaluation zone (`Judge.split_range`), never seen by the fit.
"""

from __future__ import annotations

import argparse
import sys

from schedrl.cli.options import CLEANING_PRESETS, parse_list
from schedrl.scenarios.split import evaluation_seed

EVALUATION_SEED = evaluation_seed(0)
"""Seed of `evaluate`'s starts: a `schedrl train rlscheduler --seed 0` run's final table uses these sequences
(`schedrl.scenarios.split.evaluation_seed`)."""


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
    f.add_argument("--backfill", choices=("none", "easy", "conservative"), default="none",
                   help="backfilling while the picked job waits (default: none)")
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
    from schedrl.duration import parse_duration
    from schedrl.heuristics.tuned import FitSettings
    from schedrl.outputs import In, Out, claim
    from schedrl.scenarios.fitting import fit_on_trace

    # checked before the search spends its budget: the output path's kind, its directory, what it would replace
    args.outputs = claim("tuned fit", [Out("--out", Path(args.out))],
                         [In(f"--{n}", Path(getattr(args, n))) for n in ("trace", "scenario")
                          if getattr(args, n, None) and Path(getattr(args, n)).expanduser().exists()], force=args.force)
    if args.scenario is not None:
        return run_fit_scenario(args)
    if args.trace is None:
        raise UsageError("give --trace (a catalog name or an SWF file) or --scenario")
    try:
        settings = FitSettings(metric=args.metric, budget_s=parse_duration(args.budget, "--budget"), seed=args.seed,
                               window_jobs=args.window_jobs, windows=args.windows, start=args.start)
        rule = fit_on_trace(args.trace, args.cleaning, args.backfill, args.train_fraction, args.validation_share,
                            args.validation_sequences, settings, log=lambda line: print(line, flush=True))
    except ValueError as e:
        raise UsageError(str(e)) from None
    rule.save(args.out)
    args.outputs.record(args.out)
    print(f"rule written to {args.out}; score it on the held-out evaluation sequences with "
          f"`schedrl tuned evaluate {args.out}`")
    return 0


def run_fit_scenario(args: argparse.Namespace) -> int:
    """`tuned fit --scenario`: training windows from the scenario's training zone, the rule kept on its validation
    sequences, under its semantics and metric (`scenarios/fitting.py:fit_on_scenario`)."""
    from schedrl.cli.main import UsageError
    from schedrl.cli.options import given, scenario_with_options
    from schedrl.duration import parse_duration
    from schedrl.heuristics.tuned import FitSettings
    from schedrl.scenarios.fitting import fit_on_scenario

    fixed = [f"--{d.replace('_', '-')}" for d in ("train_fraction", "validation_share", "validation_sequences")
             if given(args, d)]
    if fixed:
        raise UsageError(f"--scenario fixes the split and the validation sequences: drop {', '.join(fixed)}")
    scenario = scenario_with_options(args)
    try:
        settings = FitSettings(metric=scenario.metric, budget_s=parse_duration(args.budget, "--budget"),
                               seed=args.seed, window_jobs=args.window_jobs, windows=args.windows, start=args.start)
        rule = fit_on_scenario(scenario, settings, log=lambda line: print(line, flush=True),
                               note=lambda line: print(f"schedrl: {line}", file=sys.stderr))
    except ValueError as e:
        raise UsageError(str(e)) from None
    rule.save(args.out)
    args.outputs.record(args.out)
    print(f"rule written to {args.out}; score it on the scenario's held-out evaluation sequences with "
          f"`schedrl compare --scenario {scenario.name} --policies {scenario.reference.lower()},tuned:{args.out}`")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    import json

    from schedrl.cli.main import UsageError
    from schedrl.eval import paired
    from schedrl.eval.compare import choose_starts, compare
    from schedrl.eval.policies import policy_label
    from schedrl.heuristics.tuned import load_rule
    from schedrl.scenarios.fitting import rule_judge
    from schedrl.scenarios.scoring import independent_windows

    rule = load_rule(args.rule)
    try:
        judge, config = rule_judge(rule, args.trace)
    except ValueError as e:
        raise UsageError(f"{args.rule}: {e}") from None
    heuristics = parse_list(args.policies, what="policy", option="--policies")
    workload = judge.load()
    lo, hi = judge.split_range(len(workload))
    try:
        starts = [lo + s for s in choose_starts(workload[lo:hi], args.jobs, args.sequences, args.seed)]
        print(f"schedrl tuned evaluate: sequences from positions {lo}..{hi - 1} of {workload.name} (the evaluation "
              f"zone; the rule was fitted on 0..{judge.held_out_range(len(workload))[0] - 1})", file=sys.stderr)
        result = compare(workload, heuristics + [rule], [config.backfill], starts, args.jobs, judge.metric, config,
                         progress=False)
    except ValueError as e:
        raise UsageError(str(e)) from None
    values = {result.labels.get(p) or policy_label(p): result.values[(config.backfill, p)] for p in result.policies}
    versus = [{**c, "verdict": paired.verdict(c, judge.metric)} for c in
              paired.comparisons({k: values[k] for k in ("F1", rule.name) if k in values}, [rule.name], judge.metric,
                                 independent=independent_windows(len(starts), args.jobs, hi - lo))]
    if args.json:
        print(json.dumps({**result.to_dict(), "versus_f1": versus}, indent=2))
        return 0
    print(result.to_markdown() if args.markdown else result.to_text())
    for c in versus:
        print(f"{rule.name} paired against F1 (per-sequence difference, % of F1's mean, 95% CI): {paired.short(c)}; "
              f"better on {c['better']}, equal on {c['equal']}, worse on {c['worse']} of {c['sequences']} sequences"
              f"{paired.overlap_note(c)}")
    return 0
