"""Scoring a policy and a scenario's baselines on its validation or evaluation sequences.

Two implementations behind one call, so nothing above this layer asks which simulator a policy runs on:
trace scenarios run the event simulator (`schedrl.sim`) on windows of the trace and return every aggregate
(`schedrl.metrics.Metrics`) per sequence; generated scenarios run the discrete-time cluster (`schedrl.dtsim`)
on seeded sequences and return its episode summaries. `Scores.values(metric)` reads either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Mapping

from schedrl.scenarios.drawing import (PARTS, DrawnSequences, generated_sequences, independent_starts,  # noqa: F401
                                       independent_windows, job_table, part_data, run_policy, trace_sequences,
                                       window_starts, zone)
from schedrl.scenarios.scenario import Scenario


@dataclass
class Scores:
    """Every aggregate per sequence of each scored method, keyed by its label."""

    scenario: Scenario
    sequences: DrawnSequences
    metrics: dict[str, list[Any]] = field(default_factory=dict)
    """label -> per sequence: `Metrics` (trace scenarios) or a summary dict (generated)."""
    semantics: dict[str, Any] = field(default_factory=dict)
    """label -> what the row ran under: a `SimConfig` (trace scenarios: one per comparison, `semantics.check_rows`) or
    the discrete-time cluster's config."""

    def values(self, metric: str | None = None) -> dict[str, list[float]]:
        """label -> the metric's value on each sequence (default: the scenario's objective)."""
        metric = metric or self.scenario.metric
        return {label: [_value(m, metric) for m in ms] for label, ms in self.metrics.items()}


def _value(m: Any, metric: str) -> float:
    return float(m[metric]) if isinstance(m, Mapping) else m.value(metric)


def load(scenario: Scenario, note: Callable[[str], None] | None = None):
    """The scenario's cleaned workload (trace scenarios) or job table (generated): `Scenario.load`."""
    return scenario.load(note)


def sequences(scenario: Scenario, data, part: str = "evaluation") -> DrawnSequences:
    """The scenario's fixed sequences of `part` (`validation` or `evaluation`) on `data` (from `load`; ignored where
    the evaluation has a trace of its own: `DrawnSequences.data` is the workload the starts index)."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
    return scenario.draw(data, part)


def describe(scenario: Scenario, seqs: DrawnSequences, n_jobs: int) -> str:
    """One line saying which scenario (and definition) and which of its sequences a table is on."""
    lo, hi = seqs.zone or scenario.split.zone(n_jobs)
    where = f"trace {seqs.source}" if seqs.source else "its evaluation zone"
    return (f"scenario {scenario.name} (definition {scenario.sha256()[:12]}): {len(seqs.ids)} sequences of "
            f"{seqs.length} jobs from {where}, positions {lo}..{hi - 1}"
            + (f" (overlapping: {seqs.independent} independent)" if seqs.overlapping else ""))


def baseline_metrics(baseline, workload, sim_config, seed: int = 0):
    """An agent's `Baseline` (`schedrl.agents.base.Baseline`: a heuristic name or a `make`) on one sequence under the
    comparison's `sim_config`, with the baseline's own backfilling where it has one: every aggregate (`Metrics`)."""
    from schedrl.heuristics import get_heuristic
    from schedrl.metrics import summarize
    from schedrl.scenarios.semantics import row_semantics
    from schedrl.sim import Simulator

    config = row_semantics(sim_config, baseline.sim.backfill if baseline.sim is not None else None)
    policy = baseline.make() if baseline.make is not None else get_heuristic(baseline.policy, seed)
    return summarize(run_policy(policy, Simulator(workload, config)))


def score(scenario: Scenario, policies: Mapping[str, Any] | None = None, part: str = "evaluation", *,
          baselines: bool = True, data=None, progress: Callable[[str], None] | None = None,
          policy_sims: Mapping[str, Any] | None = None, alongside: Collection[Any] = ()) -> Scores:
    """The scenario's baselines (unless `baselines=False`) and `policies` (label -> policy object: `pick(sim)` on
    trace scenarios, `act(sim)` on generated ones) on the sequences of `part`. On a trace scenario every row runs under
    one `SimConfig`, resolved here once (`Scenario.comparison_semantics`: the scenario's, with the decision a trained
    policy cannot make otherwise); a baseline changes only its declared backfilling. `policy_sims` (label -> what the
    caller resolved for a policy: `RunProtocol.policy_semantics`) must agree with it there (ValueError otherwise); on
    the discrete-time cluster it gives a policy the cluster as its env saw it (DeepRM's pre-run estimates).
    `alongside`: policies scored in other calls for the same table (the leaderboard's entrants), whose exception these
    rows share."""
    from schedrl.scenarios.semantics import check_rows

    data = load(scenario) if data is None else data
    seqs = sequences(scenario, data, part)
    data = seqs.data if seqs.data is not None else data
    out = Scores(scenario, seqs)
    policies = dict(policies or {})
    shared = scenario.comparison_semantics([*policies.values(), *alongside])
    methods: list[tuple[str, Callable[[int], Any], Any]] = []
    if baselines:
        methods += [(b.name(scenario.sim), scenario.baseline_factory(b), b) for b in scenario.baselines]
    methods += [(label, (lambda i, p=p: p), None) for label, p in policies.items()]
    for label, make, baseline in methods:
        if progress is not None:
            progress(f"{scenario.name}: {label} on {len(seqs.ids)} {part} sequences")
        semantics = scenario.semantics_of(baseline, shared)
        asked = (policy_sims or {}).get(label)
        if asked is not None and baseline is None:
            if shared is None:
                semantics = asked
            elif asked != semantics:
                raise ValueError(f"scenario {scenario.name}: {label} was asked to run under other semantics than the "
                                 f"comparison's ({', '.join(semantics.differences(asked))})")
        out.semantics[label] = semantics
        out.metrics[label] = scenario.run_sequences(make, data, seqs, semantics)
    if shared is not None:
        check_rows(out.semantics, f"scenario {scenario.name}")
    return out


def best_baseline(scores: Scores, metric: str | None = None) -> tuple[str, float]:
    """(label, mean) of the best baseline in `scores` on `metric` (default: the scenario's)."""
    import numpy as np

    from schedrl.metrics import lower_is_better

    metric = metric or scores.scenario.metric
    labels = [b.name(scores.scenario.sim) for b in scores.scenario.baselines]
    means = {label: float(np.mean(v)) for label, v in scores.values(metric).items() if label in labels}
    pick = min if lower_is_better(metric) else max
    label = pick(means, key=means.get)
    return label, means[label]
