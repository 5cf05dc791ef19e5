"""`schedrl tune FILE.yaml`: a hyperparameter sweep as one Ray Tune experiment, then a report.

The report (`results.csv`, `results.md`, `results.json`, `trials.csv`, `sweep_curves.png` in --out)
gives the best trial of each trial group and the final evaluation of its best checkpoint against the
heuristics on held-out sequences; with `evaluate.traces`, every group's policy on every listed trace.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("runs") / "tune"


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("file", metavar="FILE.yaml", help="sweep definition (see tune_configs/README.md)")
    p.add_argument("--address", default=None, metavar="auto|ray://HOST:PORT",
                   help="Ray cluster to run on (auto: the cluster this node belongs to); default: start Ray locally")
    p.add_argument("--dry-run", action="store_true", help="validate, list the trials and exit without starting Ray")
    p.add_argument("--resume", action="store_true", help="continue an interrupted sweep in --out (finished trials are kept)")
    p.add_argument("--out", default=None, metavar="DIR", help=f"output directory (default: {DEFAULT_OUT}/<name>)")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    import os

    from schedrl.algorithms.sweep import check_traces, run_sweep
    from schedrl.algorithms.sweep_spec import SweepError, load_sweep
    from schedrl.cli.main import UsageError

    try:
        spec = load_sweep(args.file)
    except SweepError as e:
        raise UsageError(str(e)) from None
    if args.dry_run:
        check_traces(spec)
        print(dry_run_text(spec))
        return 0
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    out = Path(args.out) if args.out else DEFAULT_OUT / spec.name
    try:
        result = run_sweep(spec, out, address=args.address, resume=args.resume)
    except (FileExistsError, SweepError) as e:
        raise UsageError(str(e)) from None
    if not result.finished:
        print(f"sweep interrupted; continue it with: schedrl tune {args.file} --resume --out {out}")
        return 130
    print(write_report(spec, result.results, out))
    return 0


# ---------------------------------------------------------------- dry run


def dry_run_text(spec) -> str:
    """What `--dry-run` prints: the sweep in words, then one line per trial."""
    from schedrl.algorithms.sweep_spec import expand_trials, group_label

    lines = [f"{spec.source}: sweep {spec.name!r} ({spec.agent}): {spec.num_trials()} trials = "
             f"grid of {spec.grid_size()} x {spec.num_samples} sample(s)"]
    fixed_env = {k: v for k, v in spec.env.to_dict().items()
                 if f"env.{k}" not in spec.param_space and v not in ([], {}, 0)}
    lines.append("  fixed: " + " ".join(f"{k}={v}" for k, v in fixed_env.items())
                 + ("" if "model" in spec.param_space else f" model={spec.model}"))
    if spec.param_space:
        lines.append("  searched: " + "; ".join(f"{k} {s}" for k, s in spec.param_space.items()))
    options = spec.scheduler_options
    lines.append(f"  scheduler: {spec.scheduler}" + (" " + _options_text(options) if options else "")
                 + f"; metric {spec.metric} ({spec.mode})")
    stop = [f"{spec.stop.iterations} iterations" if spec.stop.iterations else "",
            f"{spec.stop.time_budget_s:.0f} s per trial" if spec.stop.time_budget else "",
            f"{spec.stop.total_time_budget_s:.0f} s in all" if spec.stop.total_time_budget else ""]
    cpus = spec.resources.cpus_for_main_process + spec.ppo.num_env_runners * spec.resources.cpus_per_env_runner
    lines.append(f"  stop: {', '.join(s for s in stop if s)}; each trial reserves {cpus:g} CPU(s)"
                 + (f", at most {spec.resources.max_concurrent_trials} at once" if spec.resources.max_concurrent_trials else ""))
    groups = [group_label(v) for v in spec.env_variants()]
    lines.append(f"  environments prepared before training: {len(groups)} ({', '.join(groups)})")
    if spec.evaluate.enabled:
        on = ", ".join(spec.evaluate.traces) or "its training trace"
        lines.append(f"  evaluation: best checkpoint of each group on {on}, "
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


# ---------------------------------------------------------------- report


@dataclass
class TrialRow:
    """One trial of the finished sweep."""

    name: str
    group: str
    values: dict
    env_config: dict
    status: str
    iterations: int
    best: float
    checkpoint: str | None
    heuristic: tuple[str, float] | None = None
    curve: Any = field(default=None, repr=False)


def trial_rows(spec, results) -> list[TrialRow]:
    from schedrl.algorithms.callbacks import VALIDATION_KEY
    from schedrl.algorithms.sweep_spec import group_label, trial_group, trial_values

    rows = []
    for r in results:
        config = r.config
        best, checkpoint = math.nan, None
        scored = [(c, _lookup(m, spec.metric)) for c, m in (r.best_checkpoints or [])]
        scored = [(c, v) for c, v in scored if v is not None and math.isfinite(v)]
        if scored:
            checkpoint, best = (min if spec.mode == "min" else max)(scored, key=lambda cv: cv[1])
        elif r.checkpoint is not None:
            checkpoint = r.checkpoint
        df = r.metrics_dataframe
        validation = config["learner_config_dict"].get(VALIDATION_KEY) or {}
        if validation.get("heuristics"):
            h = validation["heuristics"]
            name = (min if validation["lower_is_better"] else max)(h, key=h.get)
            heuristic = (name, h[name])
        else:
            heuristic = None
        rows.append(TrialRow(
            name=Path(r.path).name, group=group_label(trial_group(spec, config)), values=trial_values(spec, config),
            env_config=dict(config["env_config"]), status="error" if r.error else "ok",
            iterations=int((r.metrics or {}).get("training_iteration", 0)), best=float(best),
            checkpoint=checkpoint.path if checkpoint is not None else None, heuristic=heuristic,
            curve=df[["training_iteration", spec.metric]] if df is not None and spec.metric in df else None))
    return rows


def _lookup(metrics: dict, key: str):
    if key in metrics:
        return metrics[key]
    value = metrics
    for part in key.split("/"):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def best_per_group(spec, rows: list[TrialRow]) -> dict[str, TrialRow]:
    best: dict[str, TrialRow] = {}
    sign = 1 if spec.mode == "min" else -1
    for row in rows:
        if row.checkpoint is None:
            continue
        key = (math.isnan(row.best), sign * (0 if math.isnan(row.best) else row.best))
        current = best.get(row.group)
        if current is None or key < (math.isnan(current.best), sign * (0 if math.isnan(current.best) else current.best)):
            best[row.group] = row
    return best


def evaluate_groups(spec, best: dict[str, TrialRow]) -> list[dict]:
    """Each group's best checkpoint next to the heuristics, on held-out sequences of each evaluation trace."""
    from schedrl.algorithms.train import BASELINES
    from schedrl.envs.rlscheduler import RLSchedulerEnvConfig, load_env_workload, sim_config_for
    from schedrl.eval.compare import choose_starts, compare
    from schedrl.metrics import METRICS

    heuristics_cache: dict[tuple, Any] = {}
    rows = []
    for group, row in best.items():
        train_env = RLSchedulerEnvConfig.from_dict(row.env_config)
        for trace in spec.evaluate.traces or (train_env.trace,):
            env = RLSchedulerEnvConfig.from_dict({**row.env_config, "trace": trace})
            workload = load_env_workload(env)
            length = min(spec.evaluate.jobs, len(workload))
            starts = choose_starts(workload, length, spec.evaluate.sequences, 20_000 + (spec.ppo.seed or 0),
                                   list(spec.evaluate.starts) or None)
            args = ([env.backfill], starts, length, env.metric, sim_config_for(env))
            key = (trace, env.cleaning, env.preset, env.backfill, env.metric)
            if key not in heuristics_cache:
                heuristics_cache[key] = compare(workload, list(BASELINES), *args, progress=False)
            heuristics = heuristics_cache[key]
            rl = compare(workload, [f"checkpoint:{row.checkpoint}"], *args, progress=False)
            values = {h: heuristics.mean(env.backfill, h) for h in BASELINES}
            lower = METRICS[env.metric][1]
            best_h = (min if lower else max)(values, key=values.get)
            rl_value = rl.mean(env.backfill, rl.policies[0])
            gain = (values[best_h] - rl_value) / values[best_h] * (1 if lower else -1) * 100
            rows.append({"group": group, "trial": row.name, "evaluated_on": Path(trace).name if "/" in trace else trace,
                         "backfill": env.backfill, "metric": env.metric, "sequences": len(starts), "jobs": length,
                         "starts": starts,
                         **values, "rl": rl_value, "best_heuristic": best_h, "rl_vs_best_heuristic_pct": gain,
                         "per_sequence_rl": rl.values[(env.backfill, rl.policies[0])]})
    return rows


def write_report(spec, results, out: Path) -> str:
    """Write results.csv/.md/.json, trials.csv and sweep_curves.png under `out`; returns the summary text."""
    from schedrl.algorithms.train import BASELINES

    out = Path(out)
    rows = trial_rows(spec, results)
    best = best_per_group(spec, rows)
    evaluation = evaluate_groups(spec, best) if spec.evaluate.enabled else []
    keys = list(spec.param_space)
    metric_col = spec.metric

    with open(out / "trials.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["trial", "group", *keys, "status", "iterations", f"best {metric_col}", "checkpoint"])
        for r in rows:
            w.writerow([r.name, r.group, *[r.values[k] for k in keys], r.status, r.iterations, r.best, r.checkpoint])
    eval_cols = ["evaluated_on", "backfill", "metric", "sequences", "jobs", *BASELINES, "rl", "best_heuristic",
                 "rl_vs_best_heuristic_pct"]
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["group", "trial", *keys, metric_col, "iterations", "checkpoint"] + (eval_cols if evaluation else []))
        for group, r in best.items():
            head = [group, r.name, *[r.values[k] for k in keys], r.best, r.iterations, r.checkpoint]
            evals = [e for e in evaluation if e["group"] == group]
            for e in evals or [None]:
                w.writerow(head + ([e[c] for c in eval_cols] if e else []))
    (out / "results.json").write_text(json.dumps({
        "spec": spec.to_data(),
        "best": {g: vars(r) | {"curve": None, "env_config": {k: v for k, v in r.env_config.items() if k != "train_starts"}}
                 for g, r in best.items()},
        "evaluation": evaluation}, indent=2, default=str))
    plot = plot_curves(spec, rows, out / "sweep_curves.png")
    text = results_markdown(spec, rows, best, evaluation, plot)
    (out / "results.md").write_text(text + "\n")
    return text


def _md(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def results_markdown(spec, rows, best, evaluation, plot) -> str:
    from schedrl.algorithms.train import BASELINES

    keys = [k for k in spec.param_space if not k.startswith("env.")]  # env values are in the group's name
    failed = sum(r.status == "error" for r in rows)
    lines = [f"# Sweep `{spec.name}`", "",
             f"`{spec.source}`: {len(rows)} trials" + (f" ({failed} failed)" if failed else "")
             + f", scheduler {spec.scheduler}, best trial by `{spec.metric}` ({spec.mode}).", "",
             "## Best trial per group", ""]
    lines += _md(["group", "trial", *keys, spec.metric, "iterations"],
                 [[g, r.name, *[_cell(r.values[k]) for k in keys], f"{r.best:.2f}", str(r.iterations)]
                  for g, r in best.items()])
    if evaluation:
        e0 = evaluation[0]
        lines += ["", f"## Evaluation: avg {e0['metric']} on held-out sequences "
                      f"({e0['sequences']} x {e0['jobs']} jobs; * = best in the row)", ""]
        table = []
        for e in evaluation:
            cells = {p: e[p] for p in [*BASELINES, "rl"]}
            star = (min if _lower(e) else max)(cells, key=cells.get)
            table.append([e["group"], e["evaluated_on"], e["backfill"]]
                         + [f"{cells[p]:.2f}" + ("*" if p == star else "") for p in cells]
                         + [f"{e['rl_vs_best_heuristic_pct']:+.1f}% vs {e['best_heuristic'].upper()}"])
        lines += _md(["group", "evaluated on", "backfill", *[b.upper() for b in BASELINES], "RL", "RL gain over best heuristic (+ = better)"],
                     table)
        traces = list(dict.fromkeys(e["evaluated_on"] for e in evaluation))
        if len(traces) > 1:
            lines += ["", "## Generalisation: each group's policy (rows) on each trace (columns)", ""]
            matrix = [[g] + [next((f"{e['rl']:.2f}" for e in evaluation if e["group"] == g and e["evaluated_on"] == t), "")
                             for t in traces] for g in best]
            matrix.append(["best heuristic"] + [next(f"{e[e['best_heuristic']]:.2f} ({e['best_heuristic'].upper()})"
                                                     for e in evaluation if e["evaluated_on"] == t) for t in traces])
            lines += _md(["trained on \\ evaluated on", *traces], matrix)
    lines += ["", "## All trials", ""]
    lines += _md(["trial", "group", *keys, "status", "iterations", f"best {spec.metric}"],
                 [[r.name, r.group, *[_cell(r.values[k]) for k in keys], r.status, str(r.iterations), f"{r.best:.2f}"]
                  for r in rows])
    if plot:
        lines += ["", f"![{spec.metric} per iteration]({Path(plot).name})"]
    return "\n".join(lines)


def _lower(evaluation_row: dict) -> bool:
    from schedrl.metrics import METRICS

    return METRICS[evaluation_row["metric"]][1]


def plot_curves(spec, rows: list[TrialRow], path: Path) -> str | None:
    """The sweep's metric per iteration, one panel per group, one line per trial."""
    groups = list(dict.fromkeys(r.group for r in rows if r.curve is not None and len(r.curve)))
    if not groups:
        return None
    from schedrl.eval.plots import pyplot

    plt = pyplot()
    cols = min(3, len(groups))
    n_rows = math.ceil(len(groups) / cols)
    fig, axes = plt.subplots(n_rows, cols, figsize=(5 * cols, 3.5 * n_rows), squeeze=False)
    for ax, group in zip(axes.flat, groups):
        values = []
        for r in rows:
            if r.group == group and r.curve is not None:
                ax.plot(r.curve["training_iteration"], r.curve[spec.metric], label=r.name, alpha=0.8)
                values += list(r.curve[spec.metric].dropna())
        heuristic = next((r.heuristic for r in rows if r.group == group and r.heuristic), None)
        if heuristic and spec.metric == "schedrl/validation":
            ax.axhline(heuristic[1], linestyle="--", color="grey", label=f"{heuristic[0].upper()} (best heuristic)")
        ax.set_title(group, fontsize="medium")
        ax.set_xlabel("training iteration")
        ax.set_ylabel(spec.metric)
        if values and min(values) > 0 and max(values) / min(values) > 20:
            ax.set_yscale("log")
        if len([r for r in rows if r.group == group]) <= 8:
            ax.legend(fontsize="x-small")
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)
