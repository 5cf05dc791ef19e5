"""`schedrl tune FILE.yaml`: a hyperparameter sweep as one Ray Tune experiment, then a report.

The report (`results.csv`, `results.md`, `results.json`, `trials.csv`, `sweep_curves.png` in --out)
gives the best trial of each trial group and the final evaluation of its best checkpoint against the
heuristics on held-out sequences; with `evaluate.traces`, every group's policy on every listed trace.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from schedrl.cli.options import apart
from schedrl.outputs import add_force

DEFAULT_OUT = Path("runs") / "tune"


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("file", metavar="FILE.yaml", help="sweep definition (see tune_configs/README.md)")
    p.add_argument("--address", default=None, metavar="auto|ray://HOST:PORT",
                   help="Ray cluster to run on (auto: the cluster this node belongs to); default: start Ray locally")
    p.add_argument("--dry-run", action="store_true", help="validate, list the trials and exit without starting Ray")
    p.add_argument("--resume", action="store_true", help="continue an interrupted sweep in --out (finished trials are kept)")
    p.add_argument("--out", default=None, metavar="DIR", help=f"output directory (default: {DEFAULT_OUT}/<name>)")
    add_force(p, "--out's files")
    p.add_argument("--set", action="append", default=[], metavar="KEY.PATH=VALUE", dest="overrides",
                   help="change one setting of the file, VALUE read as YAML (e.g. --set stop.time_budget=15m "
                        "--set ppo.seed='{grid: [0, 1]}'); repeatable; give the same ones again with --resume")
    apart(p, "--dry-run", ("--out", "--resume", "--address", "--force"),
          "a dry run validates the file and lists its trials; it starts nothing and writes nothing")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.training.driver import check_traces, run_experiment
    from schedrl.training.report import write_report
    from schedrl.training.sweep import dry_run_text
    from schedrl.training.sweep_file import load_sweep
    from schedrl.training.yaml_reader import SweepError

    try:
        spec = load_sweep(args.file, args.overrides)
    except SweepError as e:
        raise UsageError(str(e)) from None
    if args.dry_run:
        for problem in check_traces(spec, strict=False):
            print(f"schedrl tune: warning: {problem} (a dry run only validates; the sweep needs the trace "
                  "where it runs)", file=sys.stderr)
        print(dry_run_text(spec))
        return 0
    from schedrl.outputs import In, Out, has_checkpoint, writing
    from schedrl.training.sweep import SWEEP_FILE

    out = Path(args.out) if args.out else DEFAULT_OUT / spec.name
    try:
        with writing("tune", [Out("--out", out, "dir", signature=(SWEEP_FILE,))], [In("FILE.yaml", Path(args.file))],
                     force=args.force, keep=has_checkpoint):
            result = run_experiment(spec, out, address=args.address, resume=args.resume)
    except (FileExistsError, SweepError) as e:
        raise UsageError(str(e)) from None
    if not result.finished:
        sets = "".join(f" --set {shlex.quote(o)}" for o in args.overrides)
        print(f"sweep interrupted; continue it with: schedrl tune {args.file}{sets} --resume --out {out}")
        return 130
    print(write_report(spec, result.results, out))
    return 0
