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
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.training.driver import check_traces, run_experiment
    from schedrl.training.report import write_report
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


# ---------------------------------------------------------------- dry run


def dry_run_text(spec) -> str:
    """What `--dry-run` prints: the sweep in words, then one line per trial."""
    from schedrl.training.sweep import expand_trials, group_label

    lines = [f"{spec.source}: sweep {spec.name!r} ({spec.agent}): {spec.num_trials()} trials = "
             f"grid of {spec.grid_size()} x {spec.num_samples} sample(s)"]
    fixed_env = {k: v for k, v in spec.env.to_dict().items()
                 if f"env.{k}" not in spec.param_space and v not in ([], {}, 0)}
    lines.append("  fixed: " + " ".join(f"{k}={v}" for k, v in fixed_env.items())
                 + ("" if "model" in spec.param_space or not spec.model else f" model={spec.model}"))
    if spec.param_space:
        lines.append("  searched: " + "; ".join(f"{k} {s}" for k, s in spec.param_space.items()))
    options = spec.scheduler_options
    lines.append(f"  scheduler: {spec.scheduler}" + (" " + _options_text(options) if options else "")
                 + f"; metric {spec.metric} ({spec.mode})")
    stop = [f"{spec.stop.iterations} iterations" if spec.stop.iterations else "",
            f"{spec.stop.time_budget_s:.0f} s per trial" if spec.stop.time_budget else "",
            f"{spec.stop.total_time_budget_s:.0f} s in all" if spec.stop.total_time_budget else ""]
    cpus = (spec.resources.cpus_for_main_process
            + getattr(spec.settings, "num_env_runners", 0) * spec.resources.cpus_per_env_runner)
    lines.append(f"  stop: {', '.join(s for s in stop if s)}; each trial reserves {cpus:g} CPU(s)"
                 + (f", at most {spec.resources.max_concurrent_trials} at once" if spec.resources.max_concurrent_trials else ""))
    groups = [group_label(v) for v in spec.env_variants()]
    lines.append(f"  environments prepared before training: {len(groups)} ({', '.join(groups)})")
    if spec.evaluate.enabled:
        on = ", ".join(spec.evaluate.traces) or "its training trace"
        which = ("every trial's best-validation checkpoint (per trial, then mean, 95% CI, worst, trials beating the "
                 "best heuristic)" if spec.evaluate.each_trial else "best checkpoint of each group")
        lines.append(f"  evaluation: {which} on {on}, "
                     f"{len(spec.evaluate.starts) or spec.evaluate.sequences} sequences x {spec.evaluate.jobs} jobs")
    trials = expand_trials(spec)
    keys = list(spec.param_space)
    drawn = {k for k, s in spec.param_space.items() if not s.discrete}
    header = ["trial"] + [k + ("~" if k in drawn else "") for k in keys]
    rows = [[str(i + 1)] + [_cell(t[k]) for k in keys] for i, t in enumerate(trials)]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines.append("")
    lines += [("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths))).rstrip() for r in [header] + rows]
    if drawn:
        lines.append("  ~ drawn at random: each run draws its own values")
    if not spec.param_space and spec.num_samples == 1:
        lines.append("  (nothing searched: one trial)")
    return "\n".join(lines)


def _options_text(options) -> str:
    items = vars(options).items()
    return " ".join(f"{k}={({m: str(s) for m, s in v.items()} if isinstance(v, dict) else v)}" for k, v in items)


def _cell(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
