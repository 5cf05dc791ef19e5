"""Hindsight bounds on a scenario (`schedrl hindsight`): the perfect-knowledge rollout policies of
`schedrl.heuristics.hindsight` against their base rule on the scenario's sequences, paired as the leaderboard pairs.

`hindsight(scenario, decision)` scores one policy against the base on a scenario's sequences.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from schedrl.heuristics.hindsight import (  # noqa: F401  (the policies, here since `schedrl hindsight` began)
    BACKFILL_CLASS_RULES,
    DECISIONS,
    HindsightBackfill,
    HindsightInspector,
    TUNED_PREFIX,
    _JOB_MEANS,
    _Rollouts,
    _compiled,
    _improves,
    make_base,
    metric_value,
)
from schedrl.sim import Simulator


@dataclass
class Row:
    """One sequence: the base's and the hindsight policy's aggregates, and what the policy did."""

    start: int
    base: Any
    """`schedrl.metrics.Metrics` of the base alone."""
    hindsight: Any
    """`Metrics` of the hindsight policy."""
    decisions: int
    """Decision points with a choice (inspections where a rejection was allowed; backfills with a choice)."""
    changed: int
    """Decisions that differ from the base's (rejections; a candidate other than the first)."""
    rollouts: int
    seconds: float


def check_decision(scenario, decision: str) -> None:
    """ValueError (one line) where the decision class does not apply to `scenario`."""
    if decision not in DECISIONS:
        raise ValueError(f"unknown decision class {decision!r}; choose one of {', '.join(DECISIONS)}")
    scenario.trace_only(f"scenario {scenario.name!r} runs on the discrete-time cluster: the hindsight bounds are for "
                        f"the event simulator's scenarios")
    if decision == "backfill" and scenario.sim.backfill not in BACKFILL_CLASS_RULES:
        raise ValueError(f"scenario {scenario.name!r} backfills with {scenario.sim.backfill!r}: the backfill decision "
                         f"class chooses among EASY's candidates ({', '.join(BACKFILL_CLASS_RULES)}); use "
                         f"--decision inspector")


def base_label(scenario, base: str) -> str:
    """The scenario's label of the base rule when it is one of its baselines under its own semantics (`F1+EASY`),
    else the rule's name upper-cased (with the backfilling)."""
    for b in scenario.baselines:
        if b.policy.lower() == base.lower() and b.backfill is None:
            return b.name(scenario.sim)
    name = "TUNED" if base.startswith("tuned:") else base.upper()
    return name + ("" if scenario.sim.backfill == "none" else "+" + scenario.sim.backfill.upper())


def hindsight(scenario, decision: str, base: str = "f1", part: str = "evaluation", sequences: int | None = None, *,
              candidates: int | None = None, skip: bool = False, depth: int = 1, verify: bool = False,
              progress: Callable[[str], None] | None = None, data=None) -> dict:
    """The hindsight policy of `decision` over `base` against the base alone on the scenario's sequences of `part`
    (the first `sequences` of them: a subsample of the fixed ones, not a redraw), as a JSON-ready dict: per-sequence
    rows, means, and the paired comparison (`schedrl.eval.paired.against`, counting only the independent windows where
    they overlap, as the leaderboard does)."""
    from schedrl.eval import paired
    from schedrl.eval.leaderboard import independent_windows
    from schedrl.metrics import summarize
    from schedrl.scenarios import get_scenario, scoring
    from schedrl.workload.sampling import sequence

    scenario = get_scenario(scenario)
    check_decision(scenario, decision)
    make_base(base)  # an unknown base: one ValueError naming the valid ones
    if sequences is not None and sequences < 1:
        raise ValueError(f"sequences must be >= 1, got {sequences}")
    metric = scenario.metric
    data = scoring.load(scenario) if data is None else data
    seqs = scoring.sequences(scenario, data, part)
    if sequences is not None:
        seqs = replace(seqs, ids=seqs.ids[:sequences])
    label = base_label(scenario, base)
    rows: list[Row] = []
    started = time.perf_counter()
    for i, start in enumerate(seqs.ids):
        # the windows index the workload they were drawn from: the scenario's, or its evaluation's own trace
        jobs = sequence(seqs.data if seqs.data is not None else data, start, seqs.length)
        t0 = time.perf_counter()
        base_metrics = summarize(make_base(base).run(Simulator(jobs, scenario.sim)))
        if decision == "inspector":
            policy = HindsightInspector(base, metric, verify=verify, depth=depth)
            schedule = Simulator(jobs, scenario.sim).run(policy)
            counts = policy.inspections, policy.changed
        else:
            policy = HindsightBackfill(base, metric, candidates=candidates, skip=skip, verify=verify)
            schedule = policy.run(Simulator(jobs, HindsightBackfill.sim_config(scenario.sim)))
            counts = policy.decisions, policy.changed
        rows.append(Row(int(start), base_metrics, summarize(schedule), *counts, policy.rollouts,
                        time.perf_counter() - t0))
        if progress is not None:
            r = rows[-1]
            progress(f"{scenario.name}: sequence {i + 1}/{len(seqs.ids)} (start {start}): {label} "
                     f"{r.base.value(metric):,.2f}, hindsight {r.hindsight.value(metric):,.2f}; {r.changed} of "
                     f"{r.decisions} decisions changed, {r.rollouts} rollouts, {r.seconds:.1f} s")
    hs = f"hindsight {decision}"
    values = {label: [r.base.value(metric) for r in rows], hs: [r.hindsight.value(metric) for r in rows]}
    k = independent_windows(scenario, data, seqs)
    comparison = paired.against(values, hs, label, metric, independent=k)
    lo, hi = seqs.zone if seqs.zone is not None else scenario.split.zone(len(data), validation=(part == "validation"))

    def summary(which: str) -> dict:
        ms = [getattr(r, which) for r in rows]
        return {"mean": float(np.mean([m.value(metric) for m in ms])),
                "max_wait": float(np.mean([m.max_wait for m in ms])),
                "utilization": float(np.mean([m.utilization for m in ms]))}

    return {"scenario": scenario.name, "sha256": scenario.sha256(), "decision": decision, "base": base,
            "base_label": label, "metric": metric, "part": part,
            "sequences": {"starts": [int(s) for s in seqs.ids], "length": seqs.length, "overlapping": seqs.overlapping,
                          "independent": k, "zone": [lo, hi - 1], "subsample": sequences is not None},
            "options": {"candidates": candidates, "skip": skip} if decision == "backfill" else
            ({"depth": depth} if depth > 1 else {}),
            "rows": [{"start": r.start, "base": r.base.value(metric), "hindsight": r.hindsight.value(metric),
                      "base_max_wait": r.base.max_wait, "hindsight_max_wait": r.hindsight.max_wait,
                      "base_utilization": r.base.utilization, "hindsight_utilization": r.hindsight.utilization,
                      "decisions": r.decisions, "changed": r.changed, "rollouts": r.rollouts, "seconds": r.seconds}
                     for r in rows],
            "base_summary": summary("base"), "hindsight_summary": summary("hindsight"),
            "comparison": comparison, "seconds": time.perf_counter() - started}


def to_markdown(result: dict) -> str:
    """The result as the tables `schedrl hindsight` prints: one row per sequence, then the means and the verdict."""
    from schedrl.eval import paired

    metric, label = result["metric"], result["base_label"]
    seq = result["sequences"]
    hs = f"hindsight {result['decision']}"
    lines = [f"scenario {result['scenario']} (definition {result['sha256'][:12]}), {result['part']} sequences: "
             f"{len(seq['starts'])} of {seq['length']} jobs from positions {seq['zone'][0]}..{seq['zone'][1]}"
             + (" (the first of the scenario's)" if seq["subsample"] else "")
             + (f"; they overlap: the interval counts {seq['independent']} independent windows" if seq["overlapping"]
                else ""),
             f"{hs} over {label}: metric {metric}" + (f", options {result['options']}" if result["options"] else ""),
             "",
             f"| start | {label} {metric} | {hs} {metric} | difference | {label} max wait (s) | {hs} max wait (s) | "
             f"{label} util | {hs} util | decisions | changed | rollouts | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        diff = 100.0 * (r["hindsight"] - r["base"]) / abs(r["base"]) if r["base"] else math.nan
        lines.append(f"| {r['start']} | {r['base']:,.2f} | {r['hindsight']:,.2f} | {diff:+.1f}% | "
                     f"{r['base_max_wait']:,.0f} | {r['hindsight_max_wait']:,.0f} | "
                     f"{100 * r['base_utilization']:.1f}% | "
                     f"{100 * r['hindsight_utilization']:.1f}% | {r['decisions']:,} | {r['changed']:,} | "
                     f"{r['rollouts']:,} | {r['seconds']:.1f} |")
    b, h = result["base_summary"], result["hindsight_summary"]
    lines += ["", f"| method | mean {metric} | max wait (s, mean over sequences) | utilisation |", "|---|---|---|---|",
              f"| {label} | {b['mean']:,.2f} | {b['max_wait']:,.0f} | {100 * b['utilization']:.1f}% |",
              f"| {hs} | {h['mean']:,.2f} | {h['max_wait']:,.0f} | {100 * h['utilization']:.1f}% |", ""]
    c = result["comparison"]
    interval = f" [{c['ci95_pct'][0]:+.1f}, {c['ci95_pct'][1]:+.1f}]" if c["ci95_pct"] else " (no interval)"
    lines.append(f"paired vs {label}: {paired.percent(c['difference_pct'])}{interval} (95% interval over {c['independent']} "
                 f"independent of {c['sequences']} sequences); better on {c['better']}, equal on {c['equal']}, worse "
                 f"on {c['worse']}: {c['verdict']}")
    lines.append(f"{sum(r['changed'] for r in result['rows']):,} of {sum(r['decisions'] for r in result['rows']):,} "
                 f"decisions changed; {result['seconds']:.1f} s")
    return "\n".join(lines) + "\n"


__all__ = ["DECISIONS", "HindsightBackfill", "HindsightInspector", "check_decision", "hindsight", "metric_value",
           "to_markdown"]
