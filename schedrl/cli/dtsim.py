"""`schedrl dtsim fidelity|sweep`: RLSchert's heuristics (Table 7) and sweeps (Fig. 10, Fig. 11, Table 9).

    schedrl dtsim fidelity [--sequences 16] [--seed 0] [--kill] [--jobs FILE|synthetic]
    schedrl dtsim sweep --param job_rate|res_slot|predictable [--values 0.3,0.5,...] [--kill]
        [--checkpoint [LABEL=]CKPT ...] [--sequences 16] [--seed 0] [--plot PNG] [--json]

(`python -m schedrl.dtsim` is the same command.) The discrete-time cluster itself (`schedrl.dtsim`) knows no
agent; `--checkpoint` asks the checkpoint's agent for its sweep method (`DTSimSweep.dtsim_method`, `schedrl.agents.base`), which is why the
command lives here. Bad input (a missing or malformed job file, a bad setting or option, a checkpoint that cannot
be loaded) prints one `error:` line and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from schedrl.numbers import finite_options
from schedrl.dtsim.config import ESTIMATES, REQUEUE_ESTIMATES, DTSimConfig
from schedrl.dtsim.fidelity import fidelity, format_rows
from schedrl.dtsim.heuristics import KillRule
from schedrl.dtsim.jobs import load_jobs, synthetic_jobs, vasp_jobs_path


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one `error:` line (exit 2), like every other input error here."""

    def error(self, message: str):
        print(f"error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


def _table(jobs: str | None, seed: int):
    if jobs == "synthetic":
        return synthetic_jobs(5000, seed=seed)
    return load_jobs(jobs or vasp_jobs_path())


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="schedrl dtsim", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    fid = sub.add_parser("fidelity", help="average slowdown of Tetris, Random, SJF, Tetris*, SAF next to RLSchert Table 7")
    fid.add_argument("--sequences", type=int, default=16, help="seeded job sequences (RLSchert: 16)")
    fid.add_argument("--seed", type=int, default=0, help="seed of the sequences and of Random")
    fid.add_argument("--jobs", default=None,
                     help="job CSV (default: ../shared/data/rlschert-vasp-jobs.csv.gz), or 'synthetic'")
    fid.add_argument("--kill", action="store_true", help="also the rows with RLSchert's rule-based kill policy")
    fid.add_argument("--res-slot", type=int, default=20, help="resource units (RLSchert Table 2: 12-24)")
    fid.add_argument("--job-rate", type=float, default=0.7, help="arrival probability per step")
    fid.add_argument("--simu-len", type=int, default=200, help="arrival steps per sequence")
    fid.add_argument("--estimates", choices=ESTIMATES, default="running", help="running re-estimates or pre-run only")
    fid.add_argument("--kill-error", choices=("absolute", "relative"), default="absolute",
                     help="the kill rule's 'related error run_i - len_param > 1': absolute steps or relative to len_param")
    fid.add_argument("--requeue-estimate", choices=REQUEUE_ESTIMATES, default="latest",
                     help="a killed job is requeued with its latest re-estimate or its pre-run prediction")
    sw = sub.add_parser("sweep", help="average slowdown of the heuristics and trained checkpoints against job_rate, "
                                      "res_slot or the predictable job proportion (RLSchert Fig. 10, Fig. 11, Table 9)")
    sw.add_argument("--param", required=True, help="the swept setting: job_rate, res_slot or predictable")
    sw.add_argument("--values", default=None,
                    help="comma-separated values (default: the paper's: job_rate 0.3,0.5,0.7,0.85,0.95; "
                         "res_slot 12,16,20,24; predictable 0,0.5,0.8,1)")
    sw.add_argument("--kill", action="store_true", help="also every heuristic with RLSchert's rule-based kill policy")
    sw.add_argument("--checkpoint", action="append", default=[], metavar="[LABEL=]CKPT",
                    help="a trained rlschert or deeprm checkpoint (repeatable); LABEL names its column")
    sw.add_argument("--sequences", type=int, default=16, help="seeded job sequences per value (RLSchert: 16)")
    sw.add_argument("--seed", type=int, default=0, help="seed of the sequences and of Random (as `fidelity`)")
    sw.add_argument("--jobs", default=None,
                    help="job CSV (default: ../shared/data/rlschert-vasp-jobs.csv.gz), or 'synthetic'")
    sw.add_argument("--res-slot", type=int, default=20, help="resource units when res_slot is not swept (default 20)")
    sw.add_argument("--job-rate", type=float, default=0.7, help="arrival probability when job_rate is not swept (0.7)")
    sw.add_argument("--predictable", type=float, default=1.0,
                    help="fraction of jobs following their re-estimates when predictable is not swept (1.0)")
    sw.add_argument("--simu-len", type=int, default=200, help="arrival steps per sequence (default 200)")
    sw.add_argument("--plot", metavar="PNG", help="slowdown against the swept value, one line per method")
    sw.add_argument("--json", action="store_true", help="print the cells (per-sequence values included) as JSON")
    try:
        args = finite_options(parser).parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error, already printed as one line (2)
        return int(exc.code or 0)
    if args.command == "sweep":
        return _sweep(args)
    try:
        config = DTSimConfig(res_slot=args.res_slot, job_rate=args.job_rate, simu_len=args.simu_len,
                             estimates=args.estimates, requeue_estimate=args.requeue_estimate)
        table = _table(args.jobs, args.seed)
        t0 = time.perf_counter()
        rows = fidelity(table, config, args.sequences, args.seed)
        if args.kill:
            rule = KillRule(relative=args.kill_error == "relative")
            rows += fidelity(table, config, args.sequences, args.seed, kill=rule)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"jobs: {table.source} ({len(table)}); {args.sequences} sequences, seed {args.seed}; res_slot {config.res_slot}, "
          f"job_rate {config.job_rate}, simu_len {config.simu_len}, num_nw {config.num_nw}, "
          f"time_horizon {config.time_horizon}, estimates {config.estimates}"
          f"{f', kill error {args.kill_error}, requeue estimate {config.requeue_estimate}' if args.kill else ''}; "
          f"{time.perf_counter() - t0:.1f} s")
    print(format_rows(rows))
    print("Tables 7 and 8 are RLSchert's VASP jobs at res_slot 20, job_rate 0.7, simu_len 200: compare at those settings")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from schedrl.dtsim.sweep import PAPER_VALUES, check_values, format_table, parse_values, plot, sweep

    try:
        text = args.values if args.values is not None else ",".join(str(v) for v in PAPER_VALUES.get(args.param, ()))
        values = parse_values(args.param, text)
        if args.sequences < 1:
            raise ValueError(f"--sequences must be >= 1, got {args.sequences}")
        base = DTSimConfig(res_slot=args.res_slot, job_rate=args.job_rate, simu_len=args.simu_len,
                           predictable=args.predictable)
        table = _table(args.jobs, args.seed)
        check_values(table, base, args.param, values)  # every value, before any checkpoint loads or anything runs
        methods = _checkpoints(args.checkpoint)
        t0 = time.perf_counter()
        result = sweep(table, base, args.param, values, sequences=args.sequences, seed=args.seed, kill=args.kill,
                       methods=methods)
        if args.plot:
            plot(result, args.plot)
    except (ValueError, FileNotFoundError) as exc:  # CheckpointError is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    fixed = ", ".join(f"{k} {getattr(base, k)}" for k in ("res_slot", "job_rate", "predictable") if k != args.param)
    print(f"average slowdown (mean ± s.e. over {args.sequences} sequences, seed {args.seed}) against {args.param}; "
          f"jobs: {table.source} ({len(table)}); {fixed}, simu_len {base.simu_len}; {time.perf_counter() - t0:.1f} s")
    print(format_table(result))
    if args.plot:
        print(f"plot: {args.plot}")
    return 0


def sweep_agent(agent, path):
    """`agent` when its checkpoints are methods of the sweep (`schedrl.agents.base.DTSimSweep`), else ValueError."""
    from schedrl.agents.base import DTSimSweep, capable

    return capable(agent, DTSimSweep, f"{path} is a {agent.name} checkpoint; the sweep runs checkpoints of the "
                                      "discrete-time agents (rlschert, deeprm)")


def _checkpoints(specs: list[str]) -> list:
    if not specs:
        return []
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import load_policy
    from schedrl.dtsim.sweep import parse_checkpoint_arg

    methods = []
    for spec in specs:
        label, path = parse_checkpoint_arg(spec)
        loaded = load_policy(path)  # CheckpointError / FileNotFoundError naming the file
        method = sweep_agent(get_agent(loaded.record.agent), path).dtsim_method(path, label, loaded)
        if any(m.label == method.label for m in methods):
            method.label = f"{method.label}#{len(methods) + 1}"
        methods.append(method)
    return methods


if __name__ == "__main__":
    sys.exit(main())
