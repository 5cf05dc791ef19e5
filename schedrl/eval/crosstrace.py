"""RLScheduler Table VII: one trained policy and its agent's heuristics on several traces, one row per trace.

The training trace is scored on its held-out evaluation zone, the others on the whole trace; every row pairs the
policy with that trace's second-best heuristic (the table's bar): the difference, its 95% interval and a verdict.
`schedrl evaluate CKPT --traces ...` prints `table(cross_trace(...))`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from schedrl.eval import paired
from schedrl.agents.base import env_for_trace
from schedrl.eval.as_trained import Given, as_trained, evaluation_sim
from schedrl.metrics import METRICS
from schedrl.scenarios.scoring import independent_windows
from schedrl.scenarios.semantics import comparison_semantics, row_semantics, trained_note
from schedrl.scenarios.workload import WorkloadSpec
from schedrl.sim.config import BACKFILLS


def cross_trace(policy, traces: list[str], *, jobs: int, sequences: int, seed: int, policy_seed: int = 0,
                cleaning: str | None = None, preset: str | None = None, backfill: str | None = None,
                metric: str | None = None, augment: str | None = None, augment_seed: int = 0,
                sim_options: Mapping[str, Any] | None = None, done: Callable[[str], None] | None = None) -> list[dict]:
    """One row per trace (JSON-ready): every mean, the per-sequence values, RL's rank and its paired comparison
    with the second-best heuristic. ValueError (naming the trace) on a trace that cannot be evaluated."""
    from schedrl.agents import get_agent
    from schedrl.eval.compare import compare
    from schedrl.workload.sampling import choose_starts

    record = policy.record
    agent = get_agent(record.agent)
    trained = dict(record.env_config)
    env = agent.env_config_class.from_dict(trained)
    judge = agent.judge(env)
    judge.trace_only(f"{agent.name} runs on the discrete-time cluster: it has no traces to cross")
    rows, said = [], set()
    for trace in traces:
        own = trace == trained.get("trace")
        given = Given(None if own else trace, cleaning, preset, backfill, augment, augment_seed)
        filled, _ = as_trained(given, trained, record.sim_config)
        chosen = [b.strip() for b in filled.backfill.split(",")][0]
        if chosen not in BACKFILLS:
            raise ValueError(f"unknown backfill strategy {chosen}; choose from {', '.join(BACKFILLS)}")
        row_metric = metric or judge.metric
        try:
            workload = judge.load() if own and filled.cleaning == trained.get("cleaning", filled.cleaning) \
                else WorkloadSpec(filled.trace, filled.cleaning, preset or "standard", filled.augment,
                                  filled.augment_seed).load()
            lo, hi = judge.split_range(len(workload)) if own else (0, len(workload))
            starts = [lo + s for s in choose_starts(workload[lo:hi], jobs, sequences, seed)]
            # the row's one semantics: the run's record under the options given, the policy and every baseline
            config = comparison_semantics(evaluation_sim(record.sim_config, chosen, preset=preset,
                                                         **dict(sim_options or {})), [policy])
            baselines = judge.baselines
            if judge.runs_baselines:
                target = agent.judge(env_for_trace(env, trace, filled.cleaning)) if not own else judge
                values = target.score_baselines(workload, starts, jobs, sim_config=config, seed=policy_seed)
                values["RL"] = target.score_policy(policy, workload, starts, jobs, sim_config=config)
            else:
                names = list(dict.fromkeys(b.policy for b in baselines))
                result = compare(workload, names + [policy], [chosen], starts, jobs, row_metric, config,
                                 seed=policy_seed, progress=False)
                values = {b.name: result.values[(chosen, b.policy)] for b in baselines}
                values["RL"] = result.values[(chosen, result.policies[-1])]
        except ValueError as e:
            raise ValueError(f"{trace}: {e}") from None
        line = trained_note("RL", policy, config)
        if line and done is not None and line not in said:
            said.add(line)
            done(line)
        note = judge.evaluation_note(workload, starts, jobs) if own else "another trace"
        means = {k: float(np.mean(v)) for k, v in values.items()}
        lower = METRICS[row_metric][1]
        order = sorted(means.values(), reverse=not lower)
        # RLScheduler Table VII's bar: the second-best heuristic, and whether the gap to it is more than noise
        # overlapping windows count only the disjoint ones that fit where they were drawn from
        k = judge.independent(workload, starts, jobs) if own else independent_windows(len(starts), jobs, len(workload))
        versus = paired.against_second_best(values, "RL", row_metric, independent=k)
        second = means[versus["baseline"]]
        semantics = {k: row_semantics(config, b.sim.backfill if b.sim is not None else None)
                     for k, b in ((b.name, b) for b in baselines)} if judge.runs_baselines else \
            {k: config for k in values}
        semantics["RL"] = config
        rows.append({"trace": workload.name, "metric": row_metric, "backfill": chosen,
                     "semantics": {k: v.to_dict() for k, v in semantics.items()},
                     "starts": [int(s) for s in starts], "jobs": jobs, "note": note, "means": means,
                     "per_sequence": values, "rl_rank": order.index(means["RL"]) + 1,
                     "rl_vs_second_best": "at or better" if (means["RL"] <= second if lower else means["RL"] >= second)
                     else "worse",
                     "paired_vs_second_best": versus})
        if done is not None:
            done(f"{workload.name}: done ({note})")
    return rows


def table(rows: list[dict], markdown: bool = False) -> str:
    """The rows as a text or Markdown table, with the heading that says how to read it."""
    labels = list(rows[0]["means"])
    header = ["trace"] + labels + ["RL rank", "RL vs 2nd-best heuristic", "paired: difference [95% CI], verdict"]
    body = []
    for r in rows:
        best = min(r["means"].values()) if METRICS[r["metric"]][1] else max(r["means"].values())
        body.append([r["trace"]] + [f"{r['means'][k]:.2f}" + ("*" if r["means"][k] == best else "") for k in labels]
                    + [f"{r['rl_rank']} of {len(labels)}", r["rl_vs_second_best"], paired.short(r["paired_vs_second_best"])])
    first = rows[0]
    lines = [f"avg {first['metric']} per trace: {len(first['starts'])} sequences of {first['jobs']} jobs each, backfill "
             f"{first['backfill']}; the training trace on its held-out part; * = best; paired: RL minus the second-best "
             "heuristic per sequence, as a % of its mean, with the 95% interval of that mean"]
    if markdown:
        lines.append("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
        lines.append("\n".join("| " + " | ".join(r) + " |" for r in body))
    else:
        widths = [max(len(x[i]) for x in [header] + body) for i in range(len(header))]
        for line in [header] + body:
            lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
    return "\n".join(lines)
