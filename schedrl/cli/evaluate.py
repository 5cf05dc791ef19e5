"""`schedrl evaluate CHECKPOINT`: the trained policy as one more column of the `compare` table."""

from __future__ import annotations

import argparse
import sys

from schedrl.cli.options import (
    SLURM_OPTIONS,
    add_scenario_option, add_sim_options, add_trace_options, given, parse_list, parse_starts, scenario_with_options,
)


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("checkpoint", nargs="+",
                   help="checkpoint directory written by `schedrl train`; several (e.g. DRAS-PG, DRAS-DQL and "
                        "Decima-PG of one trace) make a methods table (see --metrics); on the discrete-time "
                        "cluster (RLSchert, DeepRM) one column each on the same sequences")
    add_scenario_option(p, "the checkpoint's run record, then the defaults. The checkpoint and the scenario's "
                           "baselines on its fixed evaluation sequences (--sequences, --jobs, --seed redraw them in "
                           "its evaluation zone), paired with the scenario's reference heuristic")
    add_trace_options(p, default_from="the checkpoint's training run")
    add_sim_options(p, backfill_many=True, backfill_default=None)
    p.add_argument("--policies", default=None, help="heuristics to compare against (default: the agent's baselines)")
    p.add_argument("--sequences", type=int, default=10, help="random sequences (default 10)")
    p.add_argument("--jobs", type=int, default=1024, help="jobs per sequence (default 1024)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sequence starts (default 1)")
    p.add_argument("--policy-seed", type=int, default=0,
                   help="seed of randomised baselines such as Random (default 0, as in `train`'s final table)")
    p.add_argument("--starts", metavar="I,J,...",
                   help="fixed 0-based start indices (discrete-time agents: sequence seeds, e.g. the `starts` of a "
                        "run's evaluation.json)")
    p.add_argument("--metric", default=None, help="metric (default: the one the policy was trained on)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--csv", action="store_true")
    fmt.add_argument("--markdown", action="store_true")
    p.add_argument("--plot", metavar="PNG", help="bar chart of the means")
    p.add_argument("--force", action="store_true", help="replace --plot even where schedrl did not write it")
    table = p.add_argument_group("methods table (several checkpoints, or any of these options)")
    table.add_argument("--metrics", metavar="LIST",
                       help="columns of a methods x metrics table: wait, max_wait, p95_wait, bsld, slowdown, "
                            "turnaround, utilization, fairness, requeued, util:RESOURCE (default with several "
                            "checkpoints: wait,max_wait,slowdown,utilization)")
    table.add_argument("--shares", action="store_true",
                       help="add the shares of jobs and of resource-0 work started ready / reserved / backfilled "
                            "(DRAS Table IV)")
    table.add_argument("--kiviat", metavar="PNG", help="radar chart of the normalised metrics (DRAS Fig. 6)")
    table.add_argument("--bars", metavar="PNG", help="one bar panel per metric, one bar per method (MRSch Fig. 7)")
    p.add_argument("--online", action="store_true",
                   help="also report the policy learning online while it schedules the sequences in order (DRAS "
                        "§V-D/E; DRAS-PG, DRAS-DQL and Decima-PG): one more column per checkpoint, '<name> online'; the "
                        "frozen greedy policy's column stays (sampling seeded by --policy-seed)")
    p.add_argument("--traces", metavar="LIST",
                   help="cross-trace table (RLScheduler Table VII): the checkpoint and the heuristics on each of these "
                        "traces (the training trace on its held-out part), one row per trace")
    p.set_defaults(run=run)
    return p


def request(args: argparse.Namespace):
    """The options as a `schedrl.eval.evaluate.Request`."""
    from schedrl.eval.evaluate import Request

    return Request(trace=args.trace, cleaning=args.cleaning, preset=args.preset, backfill=args.backfill,
                   augment=getattr(args, "augment", None), augment_seed=getattr(args, "augment_seed", 0),
                   discipline=args.discipline, event_order=args.event_order, allocation=args.allocation,
                   no_kill=args.no_kill, window=args.window,
                   policies=None if args.policies is None else tuple(parse_list(args.policies, what="policy"))
                   if args.policies else (),
                   sequences=args.sequences, jobs=args.jobs, seed=args.seed, policy_seed=args.policy_seed,
                   starts=tuple(parse_starts(args.starts) or ()) or None, metric=args.metric, metrics=args.metrics,
                   shares=args.shares, kiviat=args.kiviat, bars=args.bars, online=args.online)


def _say(line: str) -> None:
    print(f"schedrl evaluate: {line}", file=sys.stderr, flush=True)


def _note(line: str) -> None:
    print(f"schedrl: {line}", file=sys.stderr)


def _format(args: argparse.Namespace) -> str:
    return "json" if args.json else "csv" if args.csv else "markdown" if args.markdown else "text"


def run(args: argparse.Namespace) -> int:
    from schedrl.agents.checkpoint import CheckpointError, load_policy
    from schedrl.cli.main import UsageError
    from schedrl.eval import evaluate

    try:  # fails early with a clear message
        policies = [load_policy(c) for c in args.checkpoint]
    except CheckpointError as e:
        raise UsageError(str(e)) from None
    if args.scenario is not None:
        return on_scenario(args, policies)
    slurm = [d for d in ("slurm_config", *SLURM_OPTIONS) if getattr(args, d, None) is not None]
    if slurm:  # the run record's semantics are rebuilt from a few options: Slurm's parameters are not among them
        raise UsageError(f"--{slurm[0].replace('_', '-')}: evaluate takes Slurm's parameters over a scenario "
                         "(--scenario FILE with sim: {backfill: slurm, ...}), not over a run record")
    methods = len(policies) > 1 or args.metrics is not None or args.shares or args.kiviat is not None \
        or args.bars is not None
    if methods and args.policies is not None:
        raise UsageError("--policies applies to the single-metric table; a methods table uses the agent's baselines")
    if args.traces is not None:
        if methods or args.trace is not None or args.starts is not None:
            raise UsageError("--traces makes its own table: give one checkpoint, without --trace, --starts or the "
                             "methods-table options")
        return cross_trace(args, policies[0])
    try:
        table = evaluate.evaluate(policies, args.checkpoint, request(args), say=_say, note=_note)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(evaluate.render(table, _format(args), plot=args.plot))
    return 0


def cross_trace(args: argparse.Namespace, policy) -> int:
    """RLScheduler Table VII (`schedrl.eval.crosstrace`): the table, as text, Markdown or JSON."""
    import json

    from schedrl.cli.main import UsageError
    from schedrl.eval import crosstrace

    options = dict(cleaning=args.cleaning, preset=args.preset, backfill=args.backfill, metric=args.metric,
                   jobs=args.jobs, sequences=args.sequences, seed=args.seed, policy_seed=args.policy_seed,
                   augment=getattr(args, "augment", None), augment_seed=getattr(args, "augment_seed", 0),
                   sim_options=dict(discipline=args.discipline, event_order=args.event_order,
                                    allocation=args.allocation, no_kill=args.no_kill, window=args.window))
    try:
        rows = crosstrace.cross_trace(policy, parse_list(args.traces, what="trace"), **options,
                                      done=lambda line: print(f"schedrl evaluate: {line}", file=sys.stderr))
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(json.dumps(rows, indent=2) if args.json else crosstrace.table(rows, markdown=args.markdown))
    return 0


def on_scenario(args: argparse.Namespace, policies) -> int:
    """`evaluate CKPT --scenario S`: the checkpoint(s) and the scenario's baselines on its evaluation sequences
    (`schedrl.eval.evaluate.on_scenario`)."""
    from schedrl.cli.main import UsageError
    from schedrl.eval import evaluate

    if args.traces is not None or args.online or args.metrics is not None or args.shares or args.kiviat or args.bars:
        raise UsageError("--scenario makes the scenario's table: drop --traces, --online and the methods-table options")
    if given(args, "starts") or given(args, "policies"):
        raise UsageError("--scenario fixes the sequences and the baselines: drop --starts and --policies "
                         "(--sequences, --jobs and --seed redraw the sequences)")
    scenario = scenario_with_options(args, {"sequences": "sequences", "jobs": "jobs", "seed": "seed"})
    try:
        table = evaluate.on_scenario(policies, args.checkpoint, scenario, say=_say, note=_note)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(evaluate.render(table, _format(args), plot=args.plot))
    return 0
