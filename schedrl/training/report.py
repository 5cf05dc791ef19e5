"""Reports of finished runs: a sweep's results tables and curves, a single run's curve and evaluation.

Everything here reads Tune's results and the run records and reaches agents only through the
contract (`baselines`, `sim_config`, `metric`, `load_workload`), so every agent's runs report alike.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from schedrl.agents.base import env_for_trace
from schedrl.agents.checkpoint import load_policy
from schedrl.agents.trial_keys import RESULT_KEY, TRAIN_METRIC, VALIDATION_KEY, best_heuristic
from schedrl.eval import paired
from schedrl.scenarios.protocol import RunProtocol
from schedrl.scenarios.semantics import row_semantics
from schedrl.eval.evaluation import Evaluation  # noqa: F401  (re-exported)
from schedrl.eval.paired import t975
from schedrl.metrics import METRICS
from schedrl.training.sweep import cell as _cell
from schedrl.training.sweep import group_label, short_value, trial_group, trial_values


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
    time_to_beat: tuple[int, float] | None = None
    """(iteration, training seconds) at which validation first beat the best heuristic; None if it never did."""


def best_checkpoint(spec, result) -> tuple[Any, float, int] | None:
    """(checkpoint, its `spec.metric` value, iteration) of a trial's best kept checkpoint, ties to the later
    iteration (more training at the same score); None when no kept checkpoint has a finite value."""
    scored = []
    for c, metrics in result.best_checkpoints or []:
        value = lookup_metric(metrics, spec.metric)
        if value is not None and math.isfinite(value):
            scored.append((c, float(value), int(metrics.get("training_iteration", 0))))
    if not scored:
        return None
    scored.sort(key=lambda t: -t[2])
    return (min if spec.mode == "min" else max)(scored, key=lambda t: t[1])


def trial_rows(spec, results) -> list[TrialRow]:
    rows = []
    for r in results:
        config = r.config
        if config is None:  # created, never started (a sweep's time budget ran out before it)
            continue
        best, checkpoint = math.nan, r.checkpoint
        picked = best_checkpoint(spec, r)
        if picked:
            checkpoint, best, _ = picked
        df = r.metrics_dataframe
        heuristic = best_heuristic(config["learner_config_dict"].get(VALIDATION_KEY))
        rows.append(TrialRow(
            time_to_beat=time_to_beat(df, spec.metric, spec.mode, heuristic[1] if heuristic else None),
            name=Path(r.path).name, group=group_label(trial_group(spec, config)), values=trial_values(spec, config),
            env_config=dict(config["env_config"]), status="error" if r.error else "ok",
            iterations=int((r.metrics or {}).get("training_iteration", 0)), best=float(best),
            checkpoint=checkpoint.path if checkpoint is not None else None, heuristic=heuristic,
            curve=df[["training_iteration", spec.metric]] if df is not None and spec.metric in df else None))
    return rows


def time_to_beat(df, metric: str, mode: str, target: float | None) -> tuple[int, float] | None:
    """(iteration, time_total_s) of the first result whose `metric` beats `target` (strictly), or None."""
    if df is None or target is None or metric not in df or "time_total_s" not in df:
        return None
    values = df[metric].to_numpy(dtype=float)
    better = values < target if mode == "min" else values > target
    hits = np.flatnonzero(better & np.isfinite(values))
    if not hits.size:
        return None
    i = int(hits[0])
    return int(df["training_iteration"].iloc[i]), float(df["time_total_s"].iloc[i])


def lookup_metric(metrics: dict, key: str):
    """`metrics[key]`, where a key `a/b` also reads the nested `metrics[a][b]`; None when absent."""
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
    """Each group's best checkpoint next to the agent's baselines, on held-out sequences of each evaluation trace
    (agents whose sequences are generated, with no trace: on their own held-out sequences)."""
    agent = spec.agent_impl
    cache: dict[tuple, dict] = {}
    rows = []
    for group, row in best.items():
        train_env = agent.env_config_class.from_dict(row.env_config)
        for trace in spec.evaluate.traces or (getattr(train_env, "trace", None),):
            env = train_env if trace is None else env_for_trace(train_env, trace)
            judge = agent.judge(env)
            protocol = RunProtocol(judge, spec.scenario)
            workload = protocol.evaluation_data(spec.evaluate)
            length, starts = protocol.evaluation_sequences(workload, spec.evaluate, getattr(spec.settings, "seed", 0))
            policy = load_policy(row.checkpoint)
            semantics = protocol.policy_judge(policy).sim  # the table's one semantics (None: the discrete-time cluster)
            key = (trace, json.dumps(env.to_dict(), sort_keys=True, default=str), tuple(starts), semantics)
            if key not in cache:
                cache[key] = judge.score_baselines(workload, starts, length, sim_config=semantics)
            per_sequence = cache[key]
            values = {k: float(np.mean(v)) for k, v in per_sequence.items()}
            rl = judge.score_policy(policy, workload, starts, length, sim_config=semantics)
            metric = judge.metric
            if trace is None:
                trace = getattr(workload, "name", agent.name)
            k = judge.independent(workload, starts, length)  # overlapping windows: only the disjoint ones count
            (versus,) = paired.comparisons({**per_sequence, "RL": rl}, ("RL",), metric, independent=k)
            second = paired.against_second_best({**per_sequence, "RL": rl}, "RL", metric, independent=k)  # Table VII's bar
            lower = METRICS[metric][1]
            best_h = (min if lower else max)(values, key=values.get)
            rl_value = float(np.mean(rl))
            gain = (values[best_h] - rl_value) / values[best_h] * (1 if lower else -1) * 100
            rows.append({"group": group, "trial": row.name, "evaluated_on": Path(trace).name if "/" in trace else trace,
                         "backfill": getattr(env, "backfill", "-"), "metric": metric, "sequences": len(starts),
                         "jobs": length, "starts": starts, "baselines": list(values),
                         **values, "rl": rl_value, "best_heuristic": best_h, "rl_vs_best_heuristic_pct": gain,
                         "per_sequence_rl": rl, "paired_vs_best_heuristic": versus,
                         "paired_vs_second_best": second})
    return rows


def evaluate_trials(spec, rows: list[TrialRow]) -> list[dict]:
    """Every trial's selected checkpoint (best validation) on the held-out sequences (`evaluate.each_trial`)."""
    by_trial = {r.name: r for r in rows if r.checkpoint is not None}
    evaluation = evaluate_groups(spec, by_trial)
    for e in evaluation:
        row = by_trial[e["group"]]
        e["group"] = row.group
        e["values"] = row.values
        e["time_to_beat_s"] = row.time_to_beat[1] if row.time_to_beat else None
        e["iterations"] = row.iterations
    return evaluation


def seed_summary(evaluation: list[dict]) -> list[dict]:
    """Per group and evaluation trace: trials, mean, sample std, 95% CI of the mean (t), worst, best, and how
    many trials beat the best heuristic (a multi-seed run's one table)."""
    out = []
    keys = list(dict.fromkeys((e["group"], e["evaluated_on"]) for e in evaluation))
    for group, trace in keys:
        es = [e for e in evaluation if e["group"] == group and e["evaluated_on"] == trace]
        rl = np.array([e["rl"] for e in es])
        lower = _lower(es[0])
        h = es[0]["best_heuristic"]
        target = es[0][h]
        n = len(rl)
        std = float(rl.std(ddof=1)) if n > 1 else float("nan")
        half = t975(n - 1) * std / math.sqrt(n) if n > 1 else float("nan")
        beats = int(np.sum(rl < target if lower else rl > target))
        times = [e["time_to_beat_s"] for e in es if e.get("time_to_beat_s") is not None]
        out.append({"group": group, "evaluated_on": trace, "trials": n, "mean": float(rl.mean()), "std": std,
                    "ci95": half, "worst": float(rl.max() if lower else rl.min()),
                    "best": float(rl.min() if lower else rl.max()), "best_heuristic": h,
                    "best_heuristic_value": float(target), "beat_best_heuristic": beats,
                    "median_time_to_beat_validation_s": float(np.median(times)) if times else None,
                    "validation_beat_in": len(times)})
    return out


def write_report(spec, results, out: Path) -> str:
    """Write results.csv/.md/.json, trials.csv and sweep_curves.png under `out`; returns the summary text."""
    out = Path(out)
    rows = trial_rows(spec, results)
    best = best_per_group(spec, rows)
    evaluation = []
    if spec.evaluate.enabled:
        evaluation = evaluate_trials(spec, rows) if spec.evaluate.each_trial else evaluate_groups(spec, best)
    keys = list(spec.param_space)
    metric_col = spec.metric

    with open(out / "trials.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["trial", "group", *keys, "status", "iterations", f"best {metric_col}", "checkpoint"])
        for r in rows:
            w.writerow([r.name, r.group, *[r.values[k] for k in keys], r.status, r.iterations, r.best, r.checkpoint])
    baselines = [b.name for b in spec.agent_impl.judge(spec.env).baselines]
    eval_cols = ["evaluated_on", "backfill", "metric", "sequences", "jobs", *baselines, "rl", "best_heuristic",
                 "rl_vs_best_heuristic_pct"]
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["group", "trial", *keys, metric_col, "iterations", "checkpoint"] + (eval_cols if evaluation else []))
        by_name = {r.name: r for r in rows}
        for group, r in best.items():
            # each_trial: one row per evaluated trial of the group (the multi-seed protocol), else its best trial
            evals = [e for e in evaluation if e["group"] == group]
            listed = [(by_name[e["trial"]], e) for e in evals] if spec.evaluate.each_trial and evals else \
                [(r, e) for e in evals or [None]]
            for row, e in listed:
                head = [group, row.name, *[row.values[k] for k in keys], row.best, row.iterations, row.checkpoint]
                w.writerow(head + ([e.get(c, "") for c in eval_cols] if e else []))
    (out / "results.json").write_text(json.dumps({
        "spec": spec.to_data(),
        "best": {g: vars(r) | {"curve": None, "env_config": {k: v for k, v in r.env_config.items() if k != "train_starts"}}
                 for g, r in best.items()},
        "evaluation": evaluation,
        "seeds": seed_summary(evaluation) if spec.evaluate.each_trial and evaluation else None}, indent=2, default=str))
    plot = plot_curves(spec, rows, out / "sweep_curves.png")
    text = results_markdown(spec, rows, best, evaluation, plot)
    (out / "results.md").write_text(text + "\n")
    return text


def _md(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def results_markdown(spec, rows, best, evaluation, plot) -> str:
    keys = [k for k in spec.param_space if not k.startswith("env.")]  # env values are in the group's name
    failed = sum(r.status == "error" for r in rows)
    lines = [f"# Sweep `{spec.name}`", "",
             f"`{spec.source}`: {len(rows)} trials" + (f" ({failed} failed)" if failed else "")
             + f", scheduler {spec.scheduler}, best trial by `{spec.metric}` ({spec.mode}).", "",
             "## Best trial per group", ""]
    lines += _md(["group", "trial", *keys, spec.metric, "iterations"],
                 [[g, r.name, *[_cell(r.values[k]) for k in keys], f"{r.best:.2f}", str(r.iterations)]
                  for g, r in best.items()])
    if evaluation and spec.evaluate.each_trial:
        lines += seeds_markdown(spec, evaluation)
    elif evaluation:
        e0 = evaluation[0]
        lines += ["", f"## Evaluation: avg {e0['metric']} on held-out sequences "
                      f"({e0['sequences']} x {e0['jobs']} jobs; * = best in the row)", ""]
        table = []
        for e in evaluation:
            cells = {p: e[p] for p in [*e["baselines"], "rl"]}
            star = (min if _lower(e) else max)(cells, key=cells.get)
            table.append([e["group"], e["evaluated_on"], e["backfill"]]
                         + [f"{cells[p]:.2f}" + ("*" if p == star else "") for p in cells]
                         + [f"{e['rl_vs_best_heuristic_pct']:+.1f}% vs {e['best_heuristic']}"])
        lines += _md(["group", "evaluated on", "backfill", *evaluation[0]["baselines"], "RL", "RL gain over best heuristic (+ = better)"],
                     table)
        lines += generalisation_markdown(evaluation, list(best))
    lines += ["", "## All trials", ""]
    lines += _md(["trial", "group", *keys, "status", "iterations", f"best {spec.metric}"],
                 [[r.name, r.group, *[_cell(r.values[k]) for k in keys], r.status, str(r.iterations), f"{r.best:.2f}"]
                  for r in rows])
    if plot:
        lines += ["", f"![{spec.metric} per iteration]({Path(plot).name})"]
    return "\n".join(lines)


def generalisation_markdown(evaluation: list[dict], groups: list[str]) -> list[str]:
    """RLScheduler Table VII: each group's policy (rows) on each evaluation trace (columns), with the paired
    comparison against that trace's second-best heuristic, the table's bar; nothing where there is one trace."""
    traces = list(dict.fromkeys(e["evaluated_on"] for e in evaluation))
    if len(traces) < 2:
        return []

    def cell(e: dict) -> str:
        versus = e.get("paired_vs_second_best")  # absent in evaluations made before the comparison existed
        return f"{e['rl']:.2f}" + (f" (vs {paired.short(versus, interval=False)})" if versus else "")

    def heuristic(e: dict, name: str | None) -> str:
        return f"{e[name]:.2f} ({name})" if name else ""

    matrix = [[g] + [next((cell(e) for e in evaluation if e["group"] == g and e["evaluated_on"] == t), "")
                     for t in traces] for g in groups]
    first = {t: next(e for e in evaluation if e["evaluated_on"] == t) for t in traces}
    matrix.append(["best heuristic"] + [heuristic(e, e["best_heuristic"]) for e in first.values()])
    matrix.append(["second-best heuristic"] + [heuristic(e, (e.get("paired_vs_second_best") or {}).get("baseline"))
                                               for e in first.values()])
    return ["", "## Generalisation: each group's policy (rows) on each trace (columns)", "",
            "Each policy against the trace's second-best heuristic, paired over the same sequences: the difference "
            "as a % of its mean and the verdict of the 95% interval (not distinguishable: it holds 0).", ""] \
        + _md(["trained on \\ evaluated on", *traces], matrix)


def seeds_markdown(spec, evaluation: list[dict]) -> list[str]:
    """Every trial's evaluation (`evaluate.each_trial`), then per group: mean, 95% CI, worst, seeds beating the
    best heuristic."""
    keys = [k for k in spec.param_space if not k.startswith("env.")]
    e0 = evaluation[0]
    lines = ["", f"## Every trial: avg {e0['metric']} of its best-validation checkpoint on held-out sequences "
                 f"({e0['sequences']} x {e0['jobs']} jobs)", ""]
    table = []
    for e in evaluation:
        lower = _lower(e)
        beat = e["rl"] < e[e["best_heuristic"]] if lower else e["rl"] > e[e["best_heuristic"]]
        ttb = f"{e['time_to_beat_s']:.0f}" if e.get("time_to_beat_s") is not None else "never"
        table.append([e["trial"], e["group"], e["evaluated_on"], *[_cell(e["values"].get(k, "")) for k in keys],
                      f"{e['rl']:.2f}", f"{e[e['best_heuristic']]:.2f} ({e['best_heuristic']})",
                      "yes" if beat else "no", _paired_cell(e.get("paired_vs_best_heuristic")), ttb, str(e["iterations"])])
    lines += _md(["trial", "group", "evaluated on", *keys, "RL", "best heuristic", "beats it",
                  "vs it, paired: difference [95% CI], better/worse sequences", "validation first beat it at (s)",
                  "iterations"], table)
    lines += ["", "## Summary per group (95% CI of the mean: Student's t)", ""]
    lines += _md(["group", "evaluated on", "trials", "mean", "± 95% CI", "std", "best", "worst", "best heuristic",
                  "trials beating it", "median time to beat on validation (s)"],
                 [[g["group"], g["evaluated_on"], str(g["trials"]), f"{g['mean']:.2f}", f"{g['ci95']:.2f}",
                   f"{g['std']:.2f}", f"{g['best']:.2f}", f"{g['worst']:.2f}",
                   f"{g['best_heuristic_value']:.2f} ({g['best_heuristic']})",
                   f"{g['beat_best_heuristic']} of {g['trials']}",
                   (f"{g['median_time_to_beat_validation_s']:.0f} ({g['validation_beat_in']} of {g['trials']})"
                    if g["median_time_to_beat_validation_s"] is not None else "never")]
                  for g in seed_summary(evaluation)])
    return lines


def _paired_cell(versus: dict | None) -> str:
    """"+5.2% [-3.0, +13.3], 3/7" from `Evaluation.comparisons` (an empty cell for runs evaluated before it existed)."""
    if not versus:
        return ""
    interval = f" [{versus['ci95_pct'][0]:+.1f}, {versus['ci95_pct'][1]:+.1f}]" if versus["ci95_pct"] else ""
    return f"{paired.percent(versus['difference_pct'])}{interval}, {versus['better']}/{versus['worse']}"


def _lower(evaluation_row: dict) -> bool:
    return METRICS[evaluation_row["metric"]][1]


UNITS = {"wait": "s", "turnaround": "s", "utilization": "fraction"}
"""The unit of a metric's value on an axis (bounded slowdown and slowdown are ratios: no unit)."""


def curve_label(column: str, metric: str | None) -> str:
    """A sweep curve's y label: the validation score as what it is (`validation: avg wait (s), lower is better`)."""
    if column != f"{RESULT_KEY}/validation" or metric not in METRICS:
        return column
    unit = f" ({UNITS[metric]})" if metric in UNITS else ""
    return f"validation: avg {metric}{unit}, " + ("lower" if METRICS[metric][1] else "higher") + " is better"


def validation_metric(spec, env_config: dict | None) -> str | None:
    """The metric a trial's validation scores: its env config's `metric`, else its agent's judge's (DRAS's env has
    none: its judge scores mean wait); None where neither says."""
    if not env_config:
        return None
    if env_config.get("metric"):
        return str(env_config["metric"])
    agent = getattr(spec, "agent_impl", None)
    if agent is None:
        return None
    try:
        return agent.judge(agent.env_config_class.from_dict(env_config)).metric
    except (ValueError, TypeError, KeyError):  # a config its agent refuses: the column's own name
        return None


def trial_label(row: TrialRow) -> str:
    """A trial's line: its searched values outside its group's (`seed 0`; `lr 0.0003, seed 1`), else its name."""
    own = [(k.rpartition(".")[2], v) for k, v in row.values.items() if not k.startswith("env.")]
    return ", ".join(f"{k.replace('_', ' ')} {short_value(v)}" for k, v in own) or row.name


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
                ax.plot(r.curve["training_iteration"], r.curve[spec.metric], label=trial_label(r), alpha=0.8)
                values += list(r.curve[spec.metric].dropna())
        heuristic = next((r.heuristic for r in rows if r.group == group and r.heuristic), None)
        if heuristic and spec.metric == "schedrl/validation":
            ax.axhline(heuristic[1], linestyle="--", color="grey", label=f"{heuristic[0].upper()} (best heuristic)")
        ax.set_title(group, fontsize="medium")
        ax.set_xlabel("training iteration")
        env = next((r.env_config for r in rows if r.group == group and r.env_config), None)
        ax.set_ylabel(curve_label(spec.metric, validation_metric(spec, env)))
        if values and min(values) > 0 and max(values) / min(values) > 20:
            ax.set_yscale("log")
        if len([r for r in rows if r.group == group]) <= 8:
            ax.legend(fontsize="x-small")
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    fig.tight_layout()
    from schedrl.outputs import save_figure

    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return str(path)


# ---------------------------------------------------------------- a single run


def plot_curve(df, validation: dict, path: Path, kept: tuple[int, float] | None = None) -> str | None:
    """Training and validation metric vs iteration, the baselines as horizontal lines, and the kept checkpoint
    (`kept`: its iteration and validation score) marked.

    The axis is sized to what can be compared: a heuristic more than `FAR` times the best one (FCFS at 40x F1 on
    bounded slowdown) would squash every other line into the bottom pixels, so it is named in a note instead of
    drawn, and the axis is logarithmic where the drawn values still span more than a factor of 5."""
    if df is None or len(df) == 0:
        return None
    from schedrl.eval.plots import pyplot

    metric = validation.get("metric", "metric")
    lower = validation.get("lower_is_better", METRICS.get(metric, (None, True))[1])
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    it = df["training_iteration"]
    drawn: list[float] = []
    train_col = f"env_runners/{TRAIN_METRIC}"
    valid_col = f"{RESULT_KEY}/validation"
    if train_col in df:
        ax.plot(it, df[train_col], label=f"training episodes ({metric})", alpha=0.6)
    if valid_col in df:  # validated every k-th iteration only (NaN between): join the validated points
        scored = df[[valid_col, "training_iteration"]].dropna()
        ax.plot(scored["training_iteration"], scored[valid_col], label="validation (greedy)", linewidth=2,
                marker="o", markersize=3)
        drawn += [float(v) for v in scored[valid_col]]
    heuristics = sorted(validation.get("heuristics", {}).items(), key=lambda kv: kv[1], reverse=not lower)
    best = heuristics[0][1] if heuristics else None
    left_out = []
    for i, (name, value) in enumerate(heuristics):
        far = best is not None and best > 0 and value > 0 and max(value / best, best / value) > FAR
        if far:
            left_out.append(f"{name} {value:,.2f}")
            continue
        ax.axhline(value, linestyle="--", linewidth=1, color=f"C{i + 2}", label=f"{name} (validation)")
        drawn.append(float(value))
    if kept is not None:
        iteration, value = kept
        ax.plot([iteration], [value], marker="*", markersize=14, color="black", linestyle="none",
                label=f"kept checkpoint (iteration {iteration}, {value:,.2f})")
        drawn.append(float(value))
    if train_col in df and drawn:  # the training curve may start far above: it must not set the axis
        low, high = min(drawn), max(drawn)
        values = [float(v) for v in df[train_col] if v == v]
        if values:
            low, high = min(low, min(values)), max(high, min(max(values), high * 1.5))
        if high > low:
            ax.set_ylim(low / 1.1 if low > 0 else low, high * 1.1)
    ax.set_xlabel("training iteration")
    ax.set_ylabel(f"avg {metric}" + (" (lower is better)" if lower else " (higher is better)"))
    positive = [v for v in drawn if v > 0]
    if positive and max(positive) / min(positive) > 5:
        ax.set_yscale("log")
    if left_out:
        ax.text(0.99, 0.01, f"off the chart (over {FAR:g}x the best heuristic): " + ", ".join(left_out),
                transform=ax.transAxes, ha="right", va="bottom", fontsize="x-small", color="dimgrey")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    from schedrl.outputs import save_figure

    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return str(path)


FAR = 5.0
"""`plot_curve` leaves out a heuristic more than this many times the best one (either way)."""


def final_evaluation(spec, record, checkpoint: str, out: Path, log=print) -> dict:
    """The trained policy next to the agent's baselines on held-out sequences (RLScheduler Table V layout)."""
    agent = spec.agent_impl
    judge = agent.judge(agent.env_config_class.from_dict(record.env_config))
    protocol = RunProtocol(judge, spec.scenario)
    workload = protocol.evaluation_data(spec.evaluate)
    length, starts = protocol.evaluation_sequences(workload, spec.evaluate, getattr(spec.settings, "seed", 0))
    policy = load_policy(checkpoint)
    # one semantics for every column: the trained policy's on the scenario (or its run's), the baselines' too
    semantics = protocol.policy_judge(policy).sim
    values = judge.score_baselines(workload, starts, length, sim_config=semantics)
    values["RL"] = judge.score_policy(policy, workload, starts, length, sim_config=semantics)
    rows = None if semantics is None else {
        **{b.name: row_semantics(semantics, b.sim.backfill if b.sim is not None else None) for b in judge.baselines},
        "RL": semantics}
    evaluation = Evaluation(getattr(workload, "name", agent.name), judge.metric, [int(s) for s in starts], length,
                            values, judge.evaluation_note(workload, starts, length),
                            independent=judge.independent(workload, starts, length), semantics=rows,
                            reference=getattr(spec.scenario, "reference", None))  # chosen on its validation sequences
    (out / "evaluation.md").write_text(evaluation.to_markdown() + "\n")
    (out / "evaluation.json").write_text(json.dumps(evaluation.to_dict(), indent=2))
    log(evaluation.to_text())
    return evaluation.to_dict()
