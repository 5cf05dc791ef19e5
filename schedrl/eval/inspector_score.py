"""`schedrl inspector score`: policies on a scenario's validation or evaluation sequences, paired with its reference,
with the longest wait, utilisation and the inspector's counts (issue 46's table).

Each policy (a heuristic, `tuned:FILE`, `checkpoint:PATH`, `zoo:NAME`, `plan:BASE[:key=value...]`) runs under the
scenario's semantics on the part's fixed sequences; the paired difference against the reference (the scenario's, or
`--against`) counts only the disjoint windows where sequences overlap, as the leaderboard does. For the inspector's
policies (a trained inspector, the planning baseline) it also counts inspections, rejections and the points where the
starvation guard accepted without asking the policy.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import numpy as np


class _Pooled:
    """The pooled row's per-sequence figures: the means over the pooled policies of each sequence's."""

    def __init__(self, ms):
        self.ms = ms
        self.max_wait = float(np.mean([m.max_wait for m in ms]))
        self.utilization = float(np.mean([m.utilization for m in ms]))


def counts(policy) -> dict[str, int] | None:
    """The cumulative decision counts of an inspector-type policy (None for others)."""
    totals = getattr(policy, "totals", None)
    return dict(totals) if totals is not None else None


def score(scenario_name: str, specs: list[str], part: str = "validation", against: str | None = None,
          progress=None, pool: list[str] | None = None) -> dict[str, Any]:
    """Score `specs` on the scenario's `part`; with `pool` (some of `specs`, at least two: the seeds of one command),
    also a row of their per-sequence values averaged, paired with the reference (issue 46's pooled interval)."""
    from schedrl.eval import paired
    from schedrl.eval.leaderboard import independent_windows
    from schedrl.eval.policies import resolve_policy
    from schedrl.scenarios import get_scenario, scoring

    pool = list(pool or [])
    missing = [p for p in pool if p not in specs]
    if missing:
        raise ValueError(f"--pool names {', '.join(missing)}, not among --policies")
    if len(set(pool)) == 1:
        raise ValueError("--pool needs at least two policies (the seeds of one command)")
    scenario = get_scenario(scenario_name)
    scenario.trace_only(f"scenario {scenario.name!r} is generated on the discrete-time cluster; the inspector runs "
                        "on trace scenarios")
    reference = against or scenario.reference
    policies = {spec: resolve_policy(spec) for spec in specs}
    for spec, p in policies.items():  # the planner's metric is the scenario's unless the spec names one
        if spec.startswith("plan:") and "metric=" not in spec:
            p.metric = scenario.metric
    data = scoring.load(scenario)
    seqs = scoring.sequences(scenario, data, part)
    t0 = time.perf_counter()
    result = scoring.score(scenario, policies, part, data=data, progress=progress)
    seconds = time.perf_counter() - t0
    from schedrl.scenarios.semantics import trained_note

    for spec, p in policies.items():  # one line where a policy was trained under other semantics than the table's
        line = trained_note(spec, p, result.semantics[spec])
        if line and progress is not None:
            progress(line)
    metric = scenario.metric
    labels = list(result.metrics)
    ref_label = next((lab for lab in labels if lab.lower() == reference.lower()
                      or lab.lower().split("+")[0] == reference.lower()), None)
    if ref_label is None:
        raise ValueError(f"--against {reference!r} is not among the scored methods: {', '.join(labels)}")
    values = {lab: [m.value(metric) for m in ms] for lab, ms in result.metrics.items()}
    k = independent_windows(scenario, data, seqs)
    if pool:
        pooled = f"pooled over {len(pool)}"
        values[pooled] = [float(v) for v in np.mean([values[p] for p in pool], axis=0)]
        result.metrics[pooled] = [_Pooled([result.metrics[p][i] for p in pool])
                                  for i in range(len(values[pooled]))]
        labels.append(pooled)
    rows = []
    for lab in labels:
        ms = result.metrics[lab]
        row = {"method": lab, "mean": float(np.mean(values[lab])), "values": values[lab],
               "max_wait_mean": float(np.mean([m.max_wait for m in ms])),
               "max_wait_max": float(np.max([m.max_wait for m in ms])),
               "utilization": float(np.mean([m.utilization for m in ms]))}
        if lab != ref_label:
            row["paired"] = paired.against(values, lab, ref_label, metric, independent=k)
        if lab in result.semantics:  # every row's: one semantics per comparison (`scoring.score`)
            row["semantics"] = result.semantics[lab].to_dict()
        if lab in policies and counts(policies[lab]) is not None:
            row["counts"] = counts(policies[lab])
        rows.append(row)
    return {"scenario": scenario.name, "sha256": scenario.sha256(), "part": part, "metric": metric,
            "reference": ref_label, "starts": [int(s) for s in seqs.ids], "length": seqs.length,
            "independent": k, "rows": rows, "seconds": seconds, "pool": pool}


def to_markdown(r: dict) -> str:
    from schedrl.eval import paired

    lines = [f"scenario {r['scenario']} (definition {r['sha256'][:12]}), {len(r['starts'])} {r['part']} sequences of "
             f"{r['length']} jobs ({r['independent']} independent); paired with {r['reference']}", "",
             f"| method | {r['metric']} | vs {r['reference']} (95% interval) | better/equal/worse | MDE | "
             "max wait (s, mean) | max wait (s, max) | utilisation | inspections / rejections / guard |",
             "|---|--:|---|---|--:|--:|--:|--:|---|"]
    for row in r["rows"]:
        c = row.get("paired")
        if c:
            ci = f" [{c['ci95_pct'][0]:+.1f}, {c['ci95_pct'][1]:+.1f}]" if c["ci95_pct"] else ""
            vs, bew = f"{paired.percent(c['difference_pct'])}{ci}", f"{c['better']}/{c['equal']}/{c['worse']}"
            mde = f"{c['mde_pct']:.1f}%" if c.get("mde_pct") is not None else "–"
        else:
            vs, bew, mde = "–", "–", "–"
        n = row.get("counts")
        cnt = f"{n['inspections']:,} / {n['rejections']:,} / {n['guarded']:,}" if n else "–"
        lines.append(f"| {row['method']} | {row['mean']:,.2f} | {vs} | {bew} | {mde} | {row['max_wait_mean']:,.0f} | "
                     f"{row['max_wait_max']:,.0f} | {100 * row['utilization']:.1f}% | {cnt} |")
    if r.get("pool"):
        lines.append(f"\npooled over {len(r['pool'])}: the per-sequence mean of {', '.join(r['pool'])}.")
    lines.append("\nMDE: the smallest true difference these windows detect with 80% power (two-sided 5%), as a share "
                 f"of {r['reference']}'s mean.")
    lines.append(f"\n{r['seconds']:.0f} s")
    return "\n".join(lines) + "\n"


def add_parser(sub) -> None:
    p = sub.add_parser("score", help="policies on a scenario's validation or evaluation sequences, paired with its "
                                     "reference, with longest wait, utilisation and the inspector's counts")
    add_arguments(p)


def add_arguments(p) -> None:
    p.add_argument("--scenario", required=True, help="a trace scenario")
    p.add_argument("--policies", required=True,
                   help="comma-separated: heuristics, tuned:FILE, checkpoint:PATH, zoo:NAME, plan:BASE[:key=value...]")
    p.add_argument("--part", choices=("validation", "evaluation"), default="validation",
                   help="which of the scenario's sequences (default validation: choices are made there)")
    p.add_argument("--against", default=None, help="the reference (default: the scenario's)")
    p.add_argument("--pool", default=None, metavar="SPEC,SPEC,...",
                   help="some of --policies (the seeds of one command): also their per-sequence values averaged, "
                        "paired with the reference (the seeds' pooled interval)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the result (per-sequence values) here")
    p.add_argument("--force", action="store_true", help="replace --json's file even where schedrl did not write it")


def run(args) -> int:
    from schedrl.agents.checkpoint import CheckpointError
    from schedrl.heuristics.tuned import RuleError
    from schedrl.workload.errors import TraceError

    from pathlib import Path

    from schedrl.outputs import Out, claim

    specs = [s.strip() for s in args.policies.split(",") if s.strip()]
    pool = [s.strip() for s in (args.pool or "").split(",") if s.strip()]
    try:
        if not specs:
            raise ValueError("--policies names no policy")
        if args.pool is not None and not pool:
            raise ValueError("--pool names no policy")
        outputs = claim("inspector score", [Out("--json", Path(args.json))], force=getattr(args, "force", False)) \
            if args.json else None
        result = score(args.scenario, specs, args.part, args.against,
                       progress=lambda m: print(f"schedrl inspector score: {m}", file=sys.stderr, flush=True),
                       pool=pool)
    except (ValueError, CheckpointError, TraceError, RuleError, FileNotFoundError) as e:
        print(f"schedrl inspector: error: {e}", file=sys.stderr)
        return 2
    print(to_markdown(result), end="")
    if outputs is not None:
        outputs.write(args.json, json.dumps(result, indent=1) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`schedrl inspector score ARGS` (reached through `schedrl.cli.inspector`)."""
    import argparse

    parser = argparse.ArgumentParser(prog="schedrl inspector score", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))
