"""Drawing a scenario's sequences: trace windows in a zone of its split (or in its evaluation's own trace), or held-out
sequence seeds on the discrete-time cluster; and the job table generated scenarios run on.

`TraceScenario.draw` and `GeneratedScenario.draw` call `trace_sequences` and `generated_sequences`; `scoring`
re-exports what its callers import from it. Imports no `Scenario` (the scenarios import this module).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

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


def part_data(scenario, data, part: str):
    """The workload a part's windows come from: `data` (the scenario's, from `load`), or the evaluation's own trace
    (`evaluation.trace`, read with the scenario's cleaning; cached)."""
    trace = getattr(scenario, part).trace
    if trace is None:
        return scenario.load() if data is None else data
    from dataclasses import replace

    return _source(replace(scenario.workload, trace=trace, augment=scenario.workload.augment))


def zone(scenario, data, part: str) -> tuple[int, int]:
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


def trace_sequences(scenario, data, part: str) -> DrawnSequences:
    """`TraceScenario.draw`: the part's windows in its zone (or in the evaluation's own trace)."""
    spec = getattr(scenario, part)
    data = part_data(scenario, data, part)
    lo, hi = zone(scenario, data, part)
    where = (f"scenario {scenario.name!r}: its {part} " + (f"trace {spec.trace!r}" if spec.trace else
                                                          f"zone of {data.name!r}"))
    starts, overlapping, independent = window_starts(spec, data, lo, hi, where)
    return DrawnSequences(part, starts, spec.jobs, overlapping=overlapping, independent=independent, data=data,
                          zone=(lo, hi), source=spec.trace)


def generated_sequences(scenario, part: str) -> DrawnSequences:
    """`GeneratedScenario.draw`: the part's held-out sequence seeds."""
    from schedrl.dtsim.episodes import held_out_seeds
    from schedrl.scenarios.split import SCENARIO_SEED_SALTS

    spec = getattr(scenario, part)
    # validation and evaluation seeds never coincide: the evaluation's are salted
    return DrawnSequences(part, held_out_seeds(spec.count, SCENARIO_SEED_SALTS[part] + spec.seed),
                          scenario.dtsim_config().simu_len)


def run_policy(policy, sim):
    """Run `policy` on an event `Simulator` to completion, on its compiled fast path when it has one. Where the
    simulator asks for backfill choices (a comparison's shared exception, `schedrl.scenarios.semantics`) and `policy`
    was trained with first-fit backfilling, its choices are first-fit, as they were in training."""
    from schedrl.scenarios.semantics import first_fit_where_trained

    policy = first_fit_where_trained(policy, sim.config)
    fast = getattr(policy, "run", None)
    return fast(sim) if fast is not None else sim.run(policy)
