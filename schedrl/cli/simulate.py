"""`schedrl simulate`: one policy on one sequence (or a whole trace), printing the metrics."""

from __future__ import annotations

import argparse
import json

from schedrl.cli.options import (
    add_scenario_option, add_sim_options, add_trace_options, given, load_workload, scenario_with_options, sim_config,
    needs, warn_walltime_kills,
)


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    add_scenario_option(p, "the defaults. With a scenario: its trace and semantics, and (unless --start or --jobs) "
                           "its first evaluation sequence")
    add_trace_options(p, default_from="--scenario's")
    p.add_argument("--policy", default="fcfs", help="heuristic name (fcfs, sjf, f1, ...) or checkpoint:PATH (default: fcfs)")
    add_sim_options(p)
    p.add_argument("--start", type=int, default=0, help="first job (0-based position in the cleaned trace)")
    p.add_argument("--jobs", type=int, default=None, help="number of jobs (default: to the end of the trace)")
    p.add_argument("--seed", type=int, default=0, help="seed of randomised policies")
    p.add_argument("--json", action="store_true", help="print metrics as JSON")
    p.add_argument("--plot", metavar="PNG", help="write a Gantt chart of the schedule")
    p.add_argument("--force", action="store_true", help="replace --plot even where schedrl did not write it")
    needs(p, "--force", "--plot", "it lets --plot replace a file schedrl did not write")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    import time

    from schedrl.cli.main import UsageError
    from schedrl.eval.policies import resolve_policy, run_policy
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    if args.scenario is not None:
        from_scenario(args)
    elif args.trace is None:
        raise UsageError("give --trace (a catalog name or an SWF file) or --scenario")
    workload = load_workload(args)
    if args.jobs is None and not 0 <= args.start < len(workload):
        raise UsageError(f"--start {args.start} is outside {workload.name!r} ({len(workload)} jobs); "
                         f"start must be 0..{len(workload) - 1}")
    length = args.jobs if args.jobs is not None else len(workload) - args.start
    try:
        # inside: a bad value (--window -1) is an input error, not a traceback
        config = args.scenario_sim if getattr(args, "scenario_sim", None) is not None else sim_config(args)
        seq = sequence(workload, args.start, length)
        policy = resolve_policy(args.policy, args.seed)
        sim = Simulator(seq, config)  # refuses jobs it cannot run (kept by --cleaning none) with the reason
    except ValueError as e:
        raise UsageError(str(e)) from None
    warn_walltime_kills([seq], config)
    t0 = time.perf_counter()
    schedule = run_policy(policy, sim)
    elapsed = time.perf_counter() - t0
    metrics = summarize(schedule)
    if args.plot:
        from schedrl.eval.plots import gantt

        gantt(schedule, args.plot, title=f"{args.policy} on {workload.name}[{args.start}:{args.start + length}]")
    if args.json:
        out = {"trace": workload.name, "policy": args.policy, "start": args.start, "config": vars(config),
               "seconds": elapsed, **metrics.to_dict()}
        print(json.dumps(out, indent=2))
        return 0
    print(f"{args.policy} on {workload.name} jobs [{args.start}, {args.start + length}) "
          f"{config.discipline}, backfill {config.backfill_text}: simulated in {elapsed:.3f} s")
    for key in ("avg_bsld", "avg_wait", "avg_turnaround", "avg_slowdown", "max_wait", "utilization",
                "max_user_bsld", "killed", "requeued", "ready_share", "reserved_share", "backfilled_share"):
        value = getattr(metrics, key)
        print(f"  {key:18s} {value:.4f}" if isinstance(value, float) else f"  {key:18s} {value}")
    if args.plot:
        print(f"  gantt chart written to {args.plot}")
    return 0


def from_scenario(args: argparse.Namespace) -> None:
    """Fill the trace, semantics and sequence options `--scenario` sets and the command line did not give."""
    import sys

    from schedrl.cli.main import UsageError
    from schedrl.scenarios import scoring

    scenario = scenario_with_options(args)
    try:
        scenario.trace_only(f"scenario {scenario.name!r} runs on the discrete-time cluster: `schedrl dtsim fidelity` "
                            "simulates its heuristics")
    except ValueError as e:
        raise UsageError(str(e)) from None
    w = scenario.workload
    args.trace, args.cleaning, args.augment, args.augment_seed = w.trace, w.cleaning, w.augment, w.augment_seed
    args.preset = w.preset if w.preset != "standard" else None
    args.scenario_sim = scenario.sim
    if not given(args, "start") and not given(args, "jobs"):
        try:
            seqs = scoring.sequences(scenario, scoring.load(scenario), "evaluation")
        except ValueError as e:
            raise UsageError(str(e)) from None
        args.start, args.jobs = seqs.ids[0], seqs.length
        if seqs.source is not None:  # the evaluation's own trace (lublin1's independent draw): its first window
            args.trace = seqs.source
    print(f"schedrl simulate: scenario {scenario.name} (definition {scenario.sha256()[:12]})", file=sys.stderr)
