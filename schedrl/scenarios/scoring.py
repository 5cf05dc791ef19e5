"""Scoring a policy and a scenario's baselines on its validation or evaluation sequences.

Two implementations behind one call, so nothing above this layer asks which simulator a policy runs on:
trace scenarios run the event simulator (`schedrl.sim`) on windows of the trace and return every aggregate
(`schedrl.metrics.Metrics`) per sequence; generated scenarios run the discrete-time cluster (`schedrl.dtsim`)
on seeded sequences and return its episode summaries. `Scores.values(metric)` reads either.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from schedrl.scenarios.scenario import Scenario

PARTS = ("validation", "evaluation")


@dataclass
class DrawnSequences:
    """The sequences of one part of a scenario: trace start positions (or generated seeds) and their length."""

    part: str
    ids: list[int]
    length: int
    """Jobs per sequence (trace scenarios) or arrival steps (generated: `simu_len`)."""
    overlapping: bool = False
    """Trace windows that share jobs (a zone shorter than count x length): they are not independent samples."""
    independent: int | None = None
    """How many of them count as independent samples (`independent_windows`; None: all of them)."""
    data: Any = None
    """The workload the start positions index (trace scenarios): the scenario's, or its evaluation's own trace."""
    zone: tuple[int, int] | None = None
    """The zone the windows were drawn from (positions in `data`)."""
    source: str | None = None
    """The evaluation's own trace (`evaluation.trace`), else None (the scenario's trace)."""

    def __post_init__(self) -> None:
        if self.independent is None:
            self.independent = len(self.ids)


def independent_windows(count: int, length: int, room: int) -> int:
    """How many of `count` windows of `length` jobs drawn from `room` jobs count as independent samples in a paired
    interval: all of them where they fit side by side; else only the disjoint windows of their length that fit in the
    room (at least 1). Lublin-1's evaluation zone of 2,250 jobs holds two disjoint 1,024-job windows, so its ten
    evaluation sequences count as 2. Conservative: it ignores what the extra overlapping windows do add."""
    if count * length <= room:
        return count
    return max(1, min(count, room // max(1, length)))


def independent_starts(starts, length: int, room: int | None = None) -> int:
    """`independent_windows` of the windows of `length` jobs at `starts`, drawn from `room` jobs (default: the stretch
    of trace from the first start to the last window's end, for starts given by hand)."""
    if len(starts) < 2:
        return len(starts)
    if room is None:
        room = max(int(s) for s in starts) + length - min(int(s) for s in starts)
    return independent_windows(len(starts), length, room)


@dataclass
class Scores:
    """Every aggregate per sequence of each scored method, keyed by its label."""

    scenario: Scenario
    sequences: DrawnSequences
    metrics: dict[str, list[Any]] = field(default_factory=dict)
    """label -> per sequence: `Metrics` (trace scenarios) or a summary dict (generated)."""

    def values(self, metric: str | None = None) -> dict[str, list[float]]:
        """label -> the metric's value on each sequence (default: the scenario's objective)."""
        metric = metric or self.scenario.metric
        return {label: [_value(m, metric) for m in ms] for label, ms in self.metrics.items()}


def _value(m: Any, metric: str) -> float:
    return float(m[metric]) if isinstance(m, Mapping) else m.value(metric)


def load(scenario: Scenario, note: Callable[[str], None] | None = None):
    """The scenario's cleaned workload (trace scenarios) or job table (generated): `Scenario.load`."""
    return scenario.load(note)


@functools.lru_cache(maxsize=4)
def job_table(jobs: str = "vasp", synthetic_size: int = 1000):
    """The discrete-time cluster's job table: RLSchert's VASP jobs (`SCHEDRL_DATA_PATH` or ../shared/data), or the
    synthetic stand-in. A named `vasp` table that is absent is a FileNotFoundError saying where it looked."""
    from schedrl.dtsim import load_jobs, synthetic_jobs, vasp_jobs_path

    if jobs == "synthetic":
        return synthetic_jobs(synthetic_size, seed=0)
    return load_jobs(vasp_jobs_path())


@functools.lru_cache(maxsize=4)
def _source(spec):
    return spec.load()


def part_data(scenario: Scenario, data, part: str):
    """The workload a part's windows come from: `data` (the scenario's, from `load`), or the evaluation's own trace
    (`evaluation.trace`, read with the scenario's cleaning; cached)."""
    trace = getattr(scenario, part).trace
    if trace is None:
        return load(scenario) if data is None else data
    from dataclasses import replace

    return _source(replace(scenario.workload, trace=trace, augment=scenario.workload.augment))


def zone(scenario: Scenario, data, part: str) -> tuple[int, int]:
    """The positions of `data` (from `part_data`) a part's windows are drawn from: its zone of the split, or the whole
    of an evaluation's own trace."""
    if getattr(scenario, part).trace is not None:
        return 0, len(data)
    return scenario.split.zone(len(data), validation=(part == "validation"))


def window_starts(spec, data, lo: int, hi: int, where: str) -> tuple[list[int], bool, int]:
    """(starts, overlapping, independent) of `spec`'s windows (`SequenceSpec`: count, jobs, seed, placement) in
    positions [lo, hi). Windows that could not all be disjoint are refused with the numbers unless the placement is
    `overlapping`; `random` draws as `choose_starts` on data[lo:hi]; `disjoint` tiles the zone and picks `count` of
    its slots with the seed (a seeded shift spreads the
    spare jobs)."""
    import numpy as np

    room, need = hi - lo, spec.count * spec.jobs
    if spec.jobs > room:
        raise ValueError(f"{where}: sequences of {spec.jobs:,} jobs do not fit its {room:,} jobs (positions "
                         f"{lo}..{hi - 1})")
    if need > room and spec.placement != "overlapping":
        raise ValueError(f"{where}: {spec.count} disjoint windows of {spec.jobs:,} jobs need {need:,} jobs; it holds "
                         f"{room:,} (positions {lo}..{hi - 1}), room for {room // spec.jobs}: ask for fewer or shorter "
                         f"windows, or say `placement: overlapping` (fewer independent samples)")
    rng = np.random.default_rng(spec.seed)
    if spec.placement == "disjoint":
        slots = room // spec.jobs
        shift = int(rng.integers(0, room - slots * spec.jobs + 1))
        chosen = sorted(int(i) for i in rng.choice(slots, size=spec.count, replace=False))
        return [lo + shift + i * spec.jobs for i in chosen], False, spec.count
    from schedrl.workload.sampling import choose_starts

    starts = [lo + s for s in choose_starts(data[lo:hi], spec.jobs, spec.count, spec.seed, warn=lambda m: None)]
    return starts, need > room, independent_windows(len(starts), spec.jobs, room)


def sequences(scenario: Scenario, data, part: str = "evaluation") -> DrawnSequences:
    """The scenario's fixed sequences of `part` (`validation` or `evaluation`) on `data` (from `load`; ignored where
    the evaluation has a trace of its own: `DrawnSequences.data` is the workload the starts index)."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
    return scenario.draw(data, part)


def trace_sequences(scenario: Scenario, data, part: str) -> DrawnSequences:
    """`TraceScenario.draw`: the part's windows in its zone (or in the evaluation's own trace)."""
    spec = getattr(scenario, part)
    data = part_data(scenario, data, part)
    lo, hi = zone(scenario, data, part)
    where = (f"scenario {scenario.name!r}: its {part} " + (f"trace {spec.trace!r}" if spec.trace else
                                                          f"zone of {data.name!r}"))
    starts, overlapping, independent = window_starts(spec, data, lo, hi, where)
    return DrawnSequences(part, starts, spec.jobs, overlapping=overlapping, independent=independent, data=data,
                          zone=(lo, hi), source=spec.trace)


def generated_sequences(scenario: Scenario, part: str) -> DrawnSequences:
    """`GeneratedScenario.draw`: the part's held-out sequence seeds."""
    from schedrl.dtsim.episodes import held_out_seeds
    from schedrl.scenarios.split import SCENARIO_SEED_SALTS

    spec = getattr(scenario, part)
    # validation and evaluation seeds never coincide: the evaluation's are salted
    return DrawnSequences(part, held_out_seeds(spec.count, SCENARIO_SEED_SALTS[part] + spec.seed),
                          scenario.dtsim_config().simu_len)


def describe(scenario: Scenario, seqs: DrawnSequences, n_jobs: int) -> str:
    """One line saying which scenario (and definition) and which of its sequences a table is on."""
    lo, hi = seqs.zone or scenario.split.zone(n_jobs)
    where = f"trace {seqs.source}" if seqs.source else "its evaluation zone"
    return (f"scenario {scenario.name} (definition {scenario.sha256()[:12]}): {len(seqs.ids)} sequences of "
            f"{seqs.length} jobs from {where}, positions {lo}..{hi - 1}"
            + (f" (overlapping: {seqs.independent} independent)" if seqs.overlapping else ""))


def run_policy(policy, sim):
    """Run `policy` on an event `Simulator` to completion, on its compiled fast path when it has one."""
    fast = getattr(policy, "run", None)
    return fast(sim) if fast is not None else sim.run(policy)


def baseline_metrics(baseline, workload, sim_config, seed: int = 0):
    """An agent's `Baseline` (`schedrl.agents.base.Baseline`: a heuristic name or a `make`, and its own `SimConfig` if
    it has one) on one sequence: every aggregate (`Metrics`)."""
    from schedrl.heuristics import get_heuristic
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator

    config = baseline.sim or sim_config
    policy = baseline.make() if baseline.make is not None else get_heuristic(baseline.policy, seed)
    return summarize(run_policy(policy, Simulator(workload, config)))


def score(scenario: Scenario, policies: Mapping[str, Any] | None = None, part: str = "evaluation", *,
          baselines: bool = True, data=None, progress: Callable[[str], None] | None = None,
          policy_sims: Mapping[str, Any] | None = None) -> Scores:
    """The scenario's baselines (unless `baselines=False`) and `policies` (label -> policy object: `pick(sim)` on
    trace scenarios, `act(sim)` on generated ones) on the sequences of `part`. A policy runs under the scenario's
    `SimConfig` (or cluster) unless `policy_sims` gives it its own: a trained policy that makes more decisions (DRAS's
    choice of the backfilled job), or sees the cluster otherwise (DeepRM's pre-run estimates)."""
    data = load(scenario) if data is None else data
    seqs = sequences(scenario, data, part)
    data = seqs.data if seqs.data is not None else data
    out = Scores(scenario, seqs)
    methods: list[tuple[str, Callable[[int], Any], Any]] = []
    if baselines:
        methods += [(b.name(scenario.sim), scenario.baseline_factory(b), b) for b in scenario.baselines]
    methods += [(label, (lambda i, p=p: p), None) for label, p in (policies or {}).items()]
    for label, make, baseline in methods:
        if progress is not None:
            progress(f"{scenario.name}: {label} on {len(seqs.ids)} {part} sequences")
        semantics = scenario.semantics_of(baseline) if baseline is not None else \
            (policy_sims or {}).get(label, scenario.semantics_of(None))
        out.metrics[label] = scenario.run_sequences(make, data, seqs, semantics)
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
