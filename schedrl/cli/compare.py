"""`schedrl compare`: every policy on the same sequences, a table like RLScheduler Table V."""

from __future__ import annotations

import argparse

from schedrl.cli.options import (
    add_scenario_option, add_sim_options, apart, needs, add_trace_options, given, load_workload, parse_list, parse_starts,
    scenario_with_options, sim_config, warn_walltime_kills,
)
from schedrl.sim.config import BACKFILLS


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    add_scenario_option(p, "the defaults. With a scenario and no --policies: its baselines, each under its own "
                           "semantics, on its fixed evaluation sequences (--sequences, --jobs, --seed redraw them "
                           "in its evaluation zone)")
    add_trace_options(p, default_from="--scenario's")
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
    p.add_argument("--force", action="store_true", help="replace --plot even where schedrl did not write it")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    apart(p, "--starts", ("--sequences",), "the given starts are the sequences (one each)")
    needs(p, "--force", "--plot", "it lets --plot replace a file schedrl did not write")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    return show(table(args), args)


def policies_of(args: argparse.Namespace) -> list:
    """--policies as a list; from Python (`schedrl.compare`), the objects given in their place (`policy_objects`)."""
    objects = getattr(args, "policy_objects", None)
    return list(objects) if objects is not None else parse_list(args.policies, what="policy", option="--policies")


def table(args: argparse.Namespace):
    """The `Comparison` the command prints (`schedrl.compare` returns it to Python)."""
    import sys

    from schedrl.cli.main import UsageError
    from schedrl.eval.compare import choose_starts, compare
    from schedrl.metrics import UTIL_PREFIX, check_metric
    from schedrl.sim.simulator import resource_names
    from schedrl.workload.sampling import sequence

    if args.scenario is not None:
        return scenario_table(args)
    if args.trace is None:
        raise UsageError("give --trace (a catalog name or an SWF file) or --scenario")
    backfills = parse_list(args.backfill, BACKFILLS, "backfill strategy", "--backfill")
    policies = policies_of(args)
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
        for line in result.notes:
            print(f"schedrl compare: {line}", file=sys.stderr)
        from schedrl.scenarios.scoring import independent_starts

        # a checkpoint's interval counts the disjoint windows that fit where the starts came from
        return result.counting(independent_starts(starts, args.jobs, None if args.starts else len(workload)))
    except ValueError as e:
        raise UsageError(str(e)) from None


def scenario_table(args: argparse.Namespace):
    """`compare --scenario`: the scenario's baselines (or --policies) on its evaluation sequences."""
    import sys

    from schedrl.cli.main import UsageError
    from schedrl.eval.compare import Comparison, compare
    from schedrl.scenarios import scoring

    backfills = parse_list(args.backfill, BACKFILLS, "backfill strategy", "--backfill") if given(args, "backfill") \
        else None
    if backfills is not None and len(backfills) == 1:  # one backfilling: the scenario's, replaced
        args.backfill, backfills = backfills[0], None
    else:  # several: a table row each, not a change of the scenario
        args.explicit = args.explicit - {"backfill"}
    scenario = scenario_with_options(args, {"sequences": "sequences", "jobs": "jobs", "seed": "seed"})
    try:
        scenario.trace_only(f"scenario {scenario.name!r} runs on the discrete-time cluster: compare its heuristics "
                            f"with `schedrl dtsim fidelity`, a checkpoint with `schedrl evaluate CKPT --scenario "
                            f"{scenario.name}`")
    except ValueError as e:
        raise UsageError(str(e)) from None
    if given(args, "starts"):
        raise UsageError("--starts and --scenario: a scenario fixes its sequences (--sequences, --jobs and --seed "
                         "redraw them in its evaluation zone)")
    try:
        workload = scoring.load(scenario, note=lambda line: print(f"schedrl: {line}", file=sys.stderr))
        seqs = scoring.sequences(scenario, workload, "evaluation")
        print(f"schedrl compare: {scoring.describe(scenario, seqs, len(workload))}", file=sys.stderr)
        if not given(args, "policies") and backfills is None:
            result = Comparison.from_scores(scoring.score(scenario, data=workload))
        else:
            policies = (policies_of(args) if given(args, "policies")
                        else list(dict.fromkeys(b.policy for b in scenario.baselines)))
            # the positions index the evaluation's own trace where it has one (lublin1's `lublin-heldout`)
            data = seqs.data if seqs.data is not None else workload
            if seqs.source:  # a rule fitted on this scenario is judged on its evaluation's trace, as the board does
                policies = [fitted_here(p, scenario) for p in policies]
            result = compare(data, policies, backfills or [scenario.sim.backfill], seqs.ids, seqs.length,
                             scenario.metric, scenario.sim, seed=0, progress=False if args.no_progress else None)
            if seqs.source:
                result.trace = seqs.source
            for line in result.notes:
                print(f"schedrl compare: {line}", file=sys.stderr)

        return result.counting(seqs.independent)  # a checkpoint's interval: the disjoint windows only
    except ValueError as e:
        raise UsageError(str(e)) from None


def fitted_here(spec: str, scenario):
    """`spec` as `compare` takes it: a tuned rule (`tuned:FILE`, a zoo rule) that was fitted on `scenario` loaded and
    allowed onto the scenario's evaluation trace (its fit's feature scales are the scenario's training trace's: the
    protocol `tuned fit --scenario` follows); any other spec unchanged."""
    from schedrl.eval.policies import TUNED_PREFIX, resolve_policy
    from schedrl.zoo.manifest import rule_file

    if not (spec.startswith(TUNED_PREFIX) or spec.startswith("zoo:") and rule_file(spec[len("zoo:"):]) is not None):
        return spec
    rule = resolve_policy(spec)
    if (rule.record.get("scenario") or {}).get("name") == scenario.name:
        rule.strict = False
        rule.name = spec
    return rule


def show(result, args: argparse.Namespace) -> int:
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
