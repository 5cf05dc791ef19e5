"""Hindsight bounds: what a decision class is worth to a policy that knows the future (issue 37's honest stopping).

Two learned agents add a decision to a priority rule: the inspector accepts or rejects the base rule's proposal
(`schedrl.agents.inspector`, `Simulator.defer`), learned backfilling chooses which of EASY's candidates starts
(`schedrl.agents.rlbackfill`, `SimConfig(backfill_choice="policy")`). How much better than the base rule alone can
such a decision make a sequence at all? This module answers with a perfect-knowledge rollout policy of each class:

- `HindsightInspector`: at every scheduling point where a rejection is allowed (an event is left to wait for), the
  simulator is copied twice and the rest of the sequence is simulated both ways with the true arrivals and true run
  times: accept the proposal, or reject it (start nothing until the next event), each continued by the base rule
  alone. The decision whose finished sequence has the better metric is taken (ties accept).
- `HindsightBackfill`: at every backfill decision with two or more candidates (or one, with `skip`), the rest of the
  sequence is simulated for each candidate started (and, with `skip`, for starting none), each continued by the base
  with EASY first-fit; the best is taken (ties: the first candidate, EASY's own choice).

A one-step rollout never does worse than its base on any sequence: the value of "the decisions so far, then the
base" can only go down, since at each decision the base's own choice is among the options and its continuation is
the trajectory already valued. So the accept (or first-candidate) value need not be simulated again: it is the value
chosen at the previous decision (`verify=True` simulates it anyway and checks). The bound is a lower bound on what a
perfect-knowledge policy of the class can reach: a deeper search could do better still.

`hindsight(scenario, decision)` scores one policy against the base on a scenario's sequences (`schedrl hindsight`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from schedrl.heuristics import keys
from schedrl.sim import DECIDE_PICK, Simulator
from schedrl.sim.engine import STUCK

DECISIONS = ("inspector", "backfill")
"""The decision classes with a hindsight policy."""
BACKFILL_CLASS_RULES = ("easy", "rlscheduler")
"""Backfilling rules whose candidates the backfill class chooses among (learned backfilling's)."""
_JOB_MEANS = ("bsld", "wait", "turnaround", "slowdown")
"""Metrics that are the mean of a per-job array of `schedrl.metrics.jobs.job_metrics` (read without `summarize`)."""


def metric_value(sim: Simulator, metric: str) -> float:
    """The finished schedule's value of `metric`, as `summarize(schedule).value(metric)` gives it (the per-job means
    computed directly, the rest through `summarize`)."""
    from schedrl.metrics import summarize
    from schedrl.metrics.jobs import job_metrics

    schedule = sim.schedule()
    if metric in _JOB_MEANS:
        return float(job_metrics(schedule)[metric].mean())
    return summarize(schedule).value(metric)


TUNED_PREFIX = "tuned:"
"""`--base tuned:FILE`: a rule fitted by `schedrl tuned fit`."""


def make_base(base: str):
    """The base rule as a policy: a heuristic name (`schedrl.heuristics.HEURISTICS`) or `tuned:FILE`. ValueError
    naming the valid names for an unknown one; a tuned file that cannot be read is the tuned rule's one-line error."""
    from schedrl.heuristics import HEURISTICS, get_heuristic

    if base.startswith(TUNED_PREFIX):
        from schedrl.heuristics.tuned import load_rule

        path = base[len(TUNED_PREFIX):]
        if not path:
            raise ValueError("--base tuned:FILE needs the file of a rule fitted by `schedrl tuned fit`")
        return load_rule(path)
    if base.lower() not in HEURISTICS:
        raise ValueError(f"unknown base heuristic {base!r}; choose one of {', '.join(HEURISTICS)}, or tuned:FILE")
    return get_heuristic(base.lower())


def _compiled(base, sim: Simulator) -> tuple:
    """(kind, coefficients, processors, random numbers) of the base for `keys.run_rule`: the compiled form of a
    heuristic or a tuned rule (a rule fitted on another trace is refused, as its own `run` refuses it)."""
    from schedrl.heuristics.heuristic import Heuristic
    from schedrl.heuristics.tuned import TunedRule

    procs = np.asarray(sim.workload.procs_req, dtype=np.float64)
    if type(base) is Heuristic:
        return base.kind, keys.NO_COEFFICIENTS, procs, base._rand
    if type(base) is TunedRule:
        base._check(sim.workload)
        return keys.LINEAR, base.coefficients, procs, base._rand
    raise ValueError(f"a hindsight rollout needs a base with a compiled key (a heuristic or a tuned rule), got "
                     f"{type(base).__name__}")


class _Rollouts:
    """The base rule continued to the end of the sequence from a copy of a simulator, after one action."""

    def __init__(self, base, metric: str, objective: Callable[[Simulator], float] | None = None):
        self.base, self.metric, self.objective = base, metric, objective
        self.count = 0
        self._fast: tuple | None = None
        self._for: Simulator | None = None

    def value(self, sim: Simulator, action: Callable[[Simulator], None]) -> float:
        """The metric of the sequence finished by the base after `action(copy)`."""
        if self._for is not sim:
            self._fast, self._for = _compiled(self.base, sim), sim
        fork = sim.copy()
        action(fork)
        kind, coef, procs, rand = self._fast
        if keys.run_rule(fork.state_ref, kind, coef, procs, rand) == STUCK:
            raise RuntimeError("simulation stuck: a waiting job can never fit the machine")
        self.count += 1
        return metric_value(fork, self.metric) if self.objective is None else self.objective(fork)


def _improves(metric: str) -> Callable[[float, float], bool]:
    """`better(new, old)`: True where `new` is better than `old` by more than rounding."""
    from schedrl.metrics import lower_is_better

    sign = 1.0 if lower_is_better(metric) else -1.0
    return lambda new, old: sign * (old - new) > 1e-9 * max(1.0, abs(old))


class HindsightInspector:
    """The inspector with perfect knowledge of the future (a one-step rollout of the base rule; see the module).

    A simulator policy (`defer`, `pick`); run it with `sim.run(policy)` under the base's own `SimConfig`. `depth`
    M > 1 also tries rejecting 2..M times in a row (the base's next proposals too, at the next events), each then
    continued by the base: M + 1 options per point instead of 2; a plan of several rejections is an option again at
    the next point, so the value still only goes down. Counters of the last simulation: `inspections` (scheduling
    points where a rejection was allowed), `changed` (rejections), `rollouts` (sequences simulated to the end) and
    `value` (the chosen metric value: the schedule's at the end)."""

    decision = "inspector"

    def __init__(self, base: str | Any = "f1", metric: str = "bsld", verify: bool = False, depth: int = 1,
                 objective: Callable[[Simulator], float] | None = None):
        if depth < 1:
            raise ValueError(f"depth must be >= 1 (rejections in a row tried at a point), got {depth}")
        self.base = make_base(base) if isinstance(base, str) else base
        self.metric, self.verify, self.depth = metric, verify, int(depth)
        self.objective = objective
        """A finished simulation's value in place of the metric (lower is better; the teacher's penalised one)."""
        self._better = _improves(metric) if objective is None else _improves("wait")
        self._rollouts = _Rollouts(self.base, metric, objective)
        self._for: Simulator | None = None
        self._proposal = -1

    def _reset(self, sim: Simulator) -> None:
        self._for = sim
        self._rollouts = _Rollouts(self.base, self.metric, self.objective)
        self.inspections = self.changed = 0
        self.value: float | None = None
        self._plan = 0  # rejections still planned after this point (depth > 1)

    @property
    def rollouts(self) -> int:
        return self._rollouts.count

    def _option(self, j: int, m: int) -> Callable[[Simulator], None]:
        """Accept `j` (m = 0), or reject now and at the next m - 1 points (where an event is left), as this policy
        would carry it out."""
        if m == 0:
            return lambda s: s.pick(j)

        def reject(s: Simulator) -> None:
            s.defer()
            for _ in range(m - 1):
                if s.advance() != DECIDE_PICK:
                    return
                proposal = int(self.base.pick(s))
                if not s.has_event:
                    s.pick(proposal)
                    return
                s.defer()
        return reject

    def option_values(self, sim: Simulator, proposal: int) -> np.ndarray:
        """The finished sequence's metric for each option at this point, simulated from copies of `sim` (nothing is
        cached, `sim` is not changed): entry 0 accepts `proposal`, entry m rejects it and the base's next m - 1
        proposals, each then continued by the base alone. The hindsight teacher's labels (`agents/inspector/
        teacher.py`) compare them."""
        if self._for is not sim:
            self._reset(sim)
        return np.array([self._rollouts.value(sim, self._option(int(proposal), m)) for m in range(self.depth + 1)])

    def defer(self, sim: Simulator) -> bool:
        """Reject (True) where rejecting, then the base, ends the sequence better than accepting, then the base."""
        if self._for is not sim:
            self._reset(sim)
        j = self._proposal = int(self.base.pick(sim))
        planned, self._plan = self._plan, 0
        if not sim.has_event:  # a rejection would wait for ever: always accepted (a plan of rejections ends here)
            return False
        self.inspections += 1
        known = self.value
        best: tuple[int, float] | None = None
        for m in range(self.depth + 1):
            if m == planned and known is not None and not self.verify:
                value = known  # the trajectory valued at the previous point
            else:
                value = self._rollouts.value(sim, self._option(j, m))
                if m == planned and known is not None and value != known:
                    raise AssertionError(f"the planned continuation changed between decisions: {value!r} != {known!r}")
            if best is None or self._better(value, best[1]):
                best = (m, value)
        m, self.value = best
        if m == 0:
            return False
        self._plan, self._proposal = m - 1, -1
        self.changed += 1
        return True

    def pick(self, sim: Simulator) -> int:
        """The base's proposal (the one `defer` accepted)."""
        return self._proposal if self._proposal >= 0 and self._for is sim else int(self.base.pick(sim))


class HindsightBackfill:
    """Learned backfilling with perfect knowledge of the future (a one-step rollout of the base with EASY first-fit).

    A simulator policy (`pick`, `backfill`; `run(sim)` checks the semantics and runs it); it must run under `backfill_choice="policy"`
    (`sim_config`). `candidates`: how many candidates (the first, in queue order) are tried at a decision (None:
    all); `skip`: also try starting none of them until the next event. Counters as `HindsightInspector`'s:
    `decisions` (backfill points with a choice), `changed` (where the choice was not the first candidate)."""

    decision = "backfill"

    def __init__(self, base: str | Any = "f1", metric: str = "wait", candidates: int | None = None, skip: bool = False,
                 verify: bool = False):
        if candidates is not None and candidates < 1:
            raise ValueError(f"candidates must be >= 1 (or None: all), got {candidates}")
        self.base = make_base(base) if isinstance(base, str) else base
        self.metric, self.candidates, self.skip, self.verify = metric, candidates, skip, verify
        self._better = _improves(metric)
        self._for: Simulator | None = None

    @staticmethod
    def sim_config(config):
        """The base's `SimConfig` with every backfill a decision."""
        if config.backfill not in BACKFILL_CLASS_RULES:
            rules = ", ".join(BACKFILL_CLASS_RULES)
            raise ValueError(f"the backfill decision class needs EASY-style backfilling ({rules}), not "
                             f"{config.backfill!r}")
        return replace(config, backfill_choice="policy")

    def _reset(self, sim: Simulator) -> None:
        self._for = sim
        self._rollouts = _Rollouts(self.base, self.metric)
        self.decisions = self.changed = 0
        self.value: float | None = None

    @property
    def rollouts(self) -> int:
        return self._rollouts.count if self._for is not None else 0

    def pick(self, sim: Simulator) -> int:
        return int(self.base.pick(sim))

    def backfill(self, sim: Simulator) -> int | None:
        """The candidate whose start, then the base, ends the sequence best (None: start none, only with `skip`)."""
        if self._for is not sim:
            self._reset(sim)
        cands = sim.candidates.copy()
        if len(cands) == 1 and not self.skip:
            return int(cands[0])
        return self._choose(sim, cands)

    def _choose(self, sim: Simulator, cands: np.ndarray) -> int | None:
        self.decisions += 1
        tried = cands if self.candidates is None else cands[: self.candidates]
        first = self.value
        if first is None or self.verify:
            found = self._rollouts.value(sim, lambda s: s.backfill(int(tried[0])))
            if first is not None and found != first:
                raise AssertionError(f"the base's continuation changed between decisions: {found!r} != {first!r}")
            first = found
        best, choice = first, int(tried[0])
        options: list[int | None] = [int(c) for c in tried[1:]] + ([None] if self.skip else [])
        for c in options:
            v = self._rollouts.value(sim, lambda s, c=c: s.backfill(c))
            if self._better(v, best):
                best, choice = v, c
        self.value = best
        if choice != int(tried[0]):
            self.changed += 1
        return choice

    def run(self, sim: Simulator):
        """Schedule the whole workload (`sim.run(self)`, after checking the semantics)."""
        if sim.config.backfill_choice != "policy":
            raise ValueError("HindsightBackfill runs under backfill_choice='policy' (HindsightBackfill.sim_config)")
        self._reset(sim)
        return sim.run(self)


# --- scoring on a scenario ---------------------------------------------------------------------------------------

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
        jobs = sequence(data, start, seqs.length)
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
    lo, hi = scenario.split.zone(len(data), validation=(part == "validation"))

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
    lines.append(f"paired vs {label}: {c['difference_pct']:+.1f}%{interval} (95% interval over {c['independent']} "
                 f"independent of {c['sequences']} sequences); better on {c['better']}, equal on {c['equal']}, worse "
                 f"on {c['worse']}: {c['verdict']}")
    lines.append(f"{sum(r['changed'] for r in result['rows']):,} of {sum(r['decisions'] for r in result['rows']):,} "
                 f"decisions changed; {result['seconds']:.1f} s")
    return "\n".join(lines) + "\n"


__all__ = ["DECISIONS", "HindsightBackfill", "HindsightInspector", "check_decision", "hindsight", "metric_value",
           "to_markdown"]
