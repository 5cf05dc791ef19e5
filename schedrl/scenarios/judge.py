"""What a policy trained on one env is judged on, and how: an agent's own held-out protocol.

A `Scenario` is a named, fixed protocol (`schedrl scenarios list`); a `Judge` is the protocol an agent's env config
implies when no scenario is given (`Agent.judge(env_config)`): the data, the simulator semantics, the objective,
the baselines, the held-out split and how sequences are drawn from it, and scoring. Validation during training,
`schedrl train`'s final table, `evaluate`, `select`, the methods and cross-trace tables all ask the judge, so none of
them asks which simulator an agent runs on. Two implementations:

- `TraceJudge`: the event simulator (`schedrl.sim`) on windows of a trace; sequences are start positions in the
  held-out part's validation or evaluation zone.
- `GeneratedJudge`: the discrete-time cluster (`schedrl.dtsim`) on seeded generated sequences (RLSchert, DeepRM);
  sequences are seeds.

Imports no agent, no ray, no torch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from schedrl.scenarios.split import VALIDATION_SHARE, zone
from schedrl.sim.config import SimConfig


@dataclass(frozen=True)
class Baseline:
    """A heuristic an agent's paper compares with, and how it is run."""

    policy: str
    """Heuristic name (`schedrl.heuristics.HEURISTICS`, or on the discrete-time cluster `schedrl.dtsim.heuristics`)."""
    sim: SimConfig | None = None
    """The semantics this baseline is defined with; of it a table takes only the backfilling (DRAS's BinPacking runs
    without EASY): the rest is the comparison's (`schedrl.scenarios.semantics.row_semantics`). None: the table's."""
    label: str | None = None
    """Column label (default: the policy name upper-cased, e.g. `FCFS+EASY`)."""
    make: Callable[[], Any] | None = None
    """For a baseline that is not a named heuristic (MRSch's GA): builds the policy object; `policy` is then
    only its short name."""

    @property
    def name(self) -> str:
        return self.label or self.policy.upper()


@dataclass(frozen=True)
class Judge(ABC):
    """The held-out protocol and scoring of one env config. Subclasses: `TraceJudge`, `GeneratedJudge`."""

    load: Callable[[], Any]
    """The data: the cleaned `Workload` (trace judges) or the job table (generated)."""
    metric: str
    """The objective (`schedrl.metrics.METRICS` key) validation and evaluation report."""
    baselines: tuple[Baseline, ...]
    """The heuristics the agent's paper compares with (validation and the final table)."""
    sequence_length: int
    """Jobs per training episode (generated: the expected number, arrival steps x rate)."""

    generated: ClassVar[bool] = False
    sim: ClassVar[SimConfig | None] = None
    """Simulator semantics of the env (None on the discrete-time cluster)."""
    id_kind: ClassVar[str] = "starts"
    """What a sequence id is: trace start positions, or sequence seeds."""

    def held_out_range(self, n_jobs: int) -> tuple[int, int]:
        """The part [lo, hi) of the data that validation and evaluation sequences come from."""
        return 0, n_jobs

    def split_range(self, n_jobs: int, validation: bool = False) -> tuple[int, int]:
        """Where validation or evaluation sequences start from (the whole data where there is no split)."""
        return 0, n_jobs

    @abstractmethod
    def evaluation_ids(self, data, count: int, seed: int, length: int, validation: bool = False) -> list[int]:
        """`count` seeded held-out sequences, by id (start positions, or seeds)."""

    def validation_length(self, data, evaluation_jobs: int) -> int:
        """Jobs per validation sequence when `training.validation_jobs` is not set: the training episode's length."""
        return self.sequence_length

    @abstractmethod
    def evaluation_sequences(self, data, jobs: int, count: int, seed: int) -> tuple[int, list[int]]:
        """(length, ids) of `count` seeded held-out evaluation sequences (`jobs`: the asked length, where the
        sequences are trace windows)."""

    @abstractmethod
    def selection_sequences(self, data, jobs: int, count: int, seed: int) -> tuple[int, list[int]] | None:
        """(length, ids) of `count` seeded sequences of the validation zone for choosing among a run's checkpoints
        (`schedrl select`); None where the trace has no held-out part (the caller keeps clear of the evaluation's)."""

    @abstractmethod
    def describe_validation(self, data, ids: Sequence[int], length: int) -> str:
        """One line on the validation sequences: how many, how long, from where."""

    @abstractmethod
    def evaluation_note(self, data, ids: Sequence[int], length: int) -> str:
        """Whether the sequences `ids` were held out from training: which jobs training drew from and where the
        sequences lie, or that they are generated from held-out seeds."""

    @abstractmethod
    def policy_metrics(self, policy, data, ids, length: int, sim_config: SimConfig | None = None) -> list:
        """Every aggregate of `policy` on each sequence `ids` (`Metrics`, or a discrete-time episode summary), under
        `sim_config` (a comparison's semantics; default: the judge's)."""

    @abstractmethod
    def baseline_metrics(self, data, ids, length: int, sim_config: SimConfig | None = None,
                         seed: int = 0) -> dict[str, list]:
        """Each baseline's aggregates on the sequences `ids`, keyed by its label."""

    def score_policy(self, policy, data, ids, length: int, sim_config: SimConfig | None = None) -> list[float]:
        """The objective's value on each sequence `ids` under `policy` (and `sim_config`, default the judge's)."""
        return [_value(m, self.metric) for m in self.policy_metrics(policy, data, ids, length, sim_config)]

    def score_baselines(self, data, ids, length: int, sim_config: SimConfig | None = None,
                        seed: int = 0) -> dict[str, list[float]]:
        """Each baseline's objective values on the sequences `ids`, keyed by its label, under `sim_config` (default:
        the judge's) with a baseline's own backfilling (`Baseline.sim`)."""
        return {label: [_value(m, self.metric) for m in ms]
                for label, ms in self.baseline_metrics(data, ids, length, sim_config, seed).items()}

    def sequence_fields(self) -> dict[str, Any]:
        """The env fields that decide a generated sequence's jobs (two policies share one table only where these
        agree); none for trace sequences, which are positions in a trace."""
        return {}

    def trace_only(self, message: str) -> None:
        """ValueError(`message`) where this judge's sequences are generated: a protocol of trace windows (RLScheduler
        Table VII's cross-trace table, the methods x metrics table) refuses it with its own words."""

    @property
    def runs_baselines(self) -> bool:
        """Whether the baselines must be run by the judge (`score_baselines`: each under its own semantics, a built
        policy such as MRSch's GA, or the discrete-time cluster's heuristics) rather than as named heuristics under
        one `SimConfig` (`schedrl.eval.compare`)."""
        return True

    @abstractmethod
    def check_shares_table(self, other: "Judge", who: str, host: str) -> None:
        """ValueError where the policy `other` judges (`who`: "PATH is a AGENT checkpoint") cannot be one more column
        of this judge's table of `host` (the first checkpoint's agent): another simulator."""

    @abstractmethod
    def check_sequences(self, data, count: int, jobs: int) -> tuple[list[int], int]:
        """(ids, length) of `count` short seeded sequences (`jobs` long where they are trace windows) of the validation
        part, where an export is checked decision by decision (`schedrl.agents.checkpoint.check_episodes`)."""

    def decisions_note(self, calls: int, choices: int) -> str:
        """"N decisions" a policy made on the check sequences, with how many were picks among several jobs where that
        is counted (trace windows)."""
        return f"{calls} decisions"

    @abstractmethod
    def independent(self, data, ids: Sequence[int], length: int) -> int:
        """How many of the sequences `ids` count as independent samples for a paired interval
        (`schedrl.eval.paired`): all of them, unless they are trace windows that must share jobs
        (`schedrl.scenarios.scoring.independent_windows`)."""


def _value(m: Any, metric: str) -> float:
    return float(m[metric]) if isinstance(m, Mapping) else m.value(metric)


@dataclass(frozen=True)
class TraceJudge(Judge):
    """The event simulator on windows of a trace, with a held-out part split into validation and evaluation zones."""

    sim_config: SimConfig = field(default_factory=SimConfig)
    held_out: Callable[[int], tuple[int, int]] | None = None
    """The held-out part of a trace of n jobs (None: the whole trace, RLScheduler's paper protocol)."""
    validation_share: float = VALIDATION_SHARE
    """Share of the held-out part (its first jobs) validation sequences come from; evaluation takes the rest."""
    long_validation: bool = False
    """Validation sequences as long as the evaluation's where the validation zone holds two of them, else half the
    zone (at least the training length): RLScheduler's rule (`agents/rlscheduler/agent.py` says why)."""

    @property
    def sim(self) -> SimConfig:  # type: ignore[override]
        return self.sim_config

    def held_out_range(self, n_jobs: int) -> tuple[int, int]:
        return (0, n_jobs) if self.held_out is None else self.held_out(n_jobs)

    def split_range(self, n_jobs: int, validation: bool = False) -> tuple[int, int]:
        """The held-out part split in two disjoint zones, validation first, so the checkpoint chosen on validation
        is judged on jobs neither training nor selection saw; with no held-out part both use the whole trace."""
        return zone(self.held_out_range(n_jobs), validation, self.validation_share)

    def evaluation_ids(self, data, count: int, seed: int, length: int, validation: bool = False) -> list[int]:
        import numpy as np

        lo, hi = self.split_range(len(data), validation)
        if count and hi - lo < length:
            part = "validation" if validation else "evaluation"
            raise ValueError(f"trace {data.name!r}: the {hi - lo} held-out {part} jobs (positions {lo}..{hi - 1}) "
                             f"are fewer than the sequence length {length}")
        rng = np.random.default_rng(seed)
        return [lo + int(s) for s in rng.integers(0, hi - lo - length + 1, count)] if count else []

    def validation_length(self, data, evaluation_jobs: int) -> int:
        if not self.long_validation:
            return self.sequence_length
        lo, hi = self.split_range(len(data), validation=True)
        room, evaluation_jobs = hi - lo, int(evaluation_jobs)
        length = evaluation_jobs if room >= 2 * evaluation_jobs else min(evaluation_jobs, room // 2)
        return max(self.sequence_length, length)

    def evaluation_sequences(self, data, jobs: int, count: int, seed: int) -> tuple[int, list[int]]:
        from schedrl.workload.sampling import choose_starts

        lo, hi = self.split_range(len(data))
        if jobs > hi - lo:
            raise ValueError(f"evaluation sequences of {jobs} jobs do not fit the {hi - lo} held-out evaluation jobs of "
                             f"trace {data.name!r} (positions {lo}..{hi - 1}): ask for fewer --eval-jobs")
        starts = choose_starts(data[lo:hi], jobs, count, seed)
        return jobs, [lo + int(s) for s in starts]

    def selection_sequences(self, data, jobs: int, count: int, seed: int) -> tuple[int, list[int]] | None:
        lo, hi = self.split_range(len(data), validation=True)
        if (lo, hi) == (0, len(data)):
            return None
        if jobs > hi - lo:
            raise ValueError(f"--jobs {jobs} does not fit the {hi - lo} jobs of the run's validation zone of trace "
                             f"{data.name!r} (positions {lo}..{hi - 1}): ask for fewer --jobs")
        return jobs, sorted(self.evaluation_ids(data, count, seed, jobs, validation=True))

    def describe_validation(self, data, ids: Sequence[int], length: int) -> str:
        lo, hi = self.split_range(len(data), validation=True)
        return f"validation: {len(ids)} sequences of {length} jobs, starting in jobs {lo}..{hi - 1}"

    def evaluation_note(self, data, ids: Sequence[int], length: int) -> str:
        train_end = self.held_out_range(len(data))[0]
        if train_end == 0:
            return "from the whole trace, which training draws from too: not held out (the paper's protocol)"
        if all(int(s) >= train_end for s in ids):
            return f"held out: jobs {min(ids)}..{max(ids) + length - 1}; training drew from jobs 0..{train_end - 1}"
        inside = sum(int(s) < train_end for s in ids)
        return f"NOT held out: {inside} of {len(ids)} sequences start inside the training range 0..{train_end - 1}"

    @property
    def runs_baselines(self) -> bool:
        return any(b.sim is not None or b.make is not None for b in self.baselines)

    def check_shares_table(self, other: Judge, who: str, host: str) -> None:
        if other.generated:
            raise ValueError(f"{who} (the discrete-time cluster): it cannot share a table with {host} (the event "
                             "simulator)")

    def check_sequences(self, data, count: int, jobs: int) -> tuple[list[int], int]:
        import numpy as np

        lo, hi = self.split_range(len(data), validation=True)
        if hi - lo < jobs:
            lo, hi = 0, len(data)
        length = min(jobs, hi - lo)
        starts = np.random.default_rng(0).integers(lo, hi - length + 1, count)
        return [int(s) for s in starts], length

    def decisions_note(self, calls: int, choices: int) -> str:
        return f"{calls} decisions ({choices} picks among several jobs)"

    def independent(self, data, ids: Sequence[int], length: int) -> int:
        """The windows were drawn from a zone (the evaluation or validation zone that holds them all), else from the
        stretch of trace from the first start to the last window's end: where that room is shorter than their total
        length, only the disjoint windows that fit in it count."""
        from schedrl.scenarios.scoring import independent_starts

        if len(ids) < 2:
            return len(ids)
        first, end = min(int(s) for s in ids), max(int(s) for s in ids) + length
        for validation in (False, True):
            lo, hi = self.split_range(len(data), validation)
            if lo <= first and end <= hi:
                return independent_starts(ids, length, hi - lo)
        return independent_starts(ids, length)

    def policy_metrics(self, policy, data, ids, length: int, sim_config: SimConfig | None = None) -> list:
        from schedrl.metrics import summarize
        from schedrl.scenarios.scoring import run_policy
        from schedrl.sim import Simulator
        from schedrl.workload.sampling import sequence

        config = sim_config or self.sim_config
        return [summarize(run_policy(policy, Simulator(sequence(data, s, length), config))) for s in ids]

    def baseline_metrics(self, data, ids, length: int, sim_config: SimConfig | None = None,
                         seed: int = 0) -> dict[str, list]:
        from schedrl.scenarios.scoring import baseline_metrics
        from schedrl.workload.sampling import sequence

        config = sim_config or self.sim_config
        return {b.name: [baseline_metrics(b, sequence(data, s, length), config, seed) for s in ids]
                for b in self.baselines}


@dataclass(frozen=True)
class GeneratedJudge(Judge):
    """The discrete-time cluster on seeded generated sequences (held-out seeds: `schedrl.dtsim.episodes.held_out_seeds`)."""

    cluster: Any = None
    """The `schedrl.dtsim.DTSimConfig` the sequences are generated and run on."""
    kill: bool = False
    """Whether the baselines include each heuristic with the kill rule (labelled `NAME+KILL`)."""
    fields: Mapping[str, Any] = field(default_factory=dict)
    """The env fields that decide a seeded sequence (`sequence_fields`)."""

    generated: ClassVar[bool] = True
    id_kind: ClassVar[str] = "sequence seeds"

    def evaluation_ids(self, data, count: int, seed: int, length: int, validation: bool = False) -> list[int]:
        from schedrl.dtsim.episodes import held_out_seeds

        return held_out_seeds(count, seed)

    def evaluation_sequences(self, data, jobs: int, count: int, seed: int) -> tuple[int, list[int]]:
        return self.sequence_length, self.evaluation_ids(data, count, seed, self.sequence_length)

    def selection_sequences(self, data, jobs: int, count: int, seed: int) -> tuple[int, list[int]] | None:
        return self.sequence_length, self.evaluation_ids(data, count, seed, self.sequence_length, validation=True)

    def describe_validation(self, data, ids: Sequence[int], length: int) -> str:
        return f"validation: {len(ids)} generated sequences of about {length} jobs (seeds {min(ids)}..{max(ids)})"

    def evaluation_note(self, data, ids: Sequence[int], length: int) -> str:
        return "held-out seeds"

    def sequence_fields(self) -> dict[str, Any]:
        return dict(self.fields)

    def trace_only(self, message: str) -> None:
        raise ValueError(message)

    def check_shares_table(self, other: Judge, who: str, host: str) -> None:
        if not other.generated:
            raise ValueError(f"{who} (the event simulator): it cannot share a table with {host} (the discrete-time "
                             "cluster)")

    def check_sequences(self, data, count: int, jobs: int) -> tuple[list[int], int]:
        return self.evaluation_ids(data, count, 0, self.sequence_length, validation=True), self.sequence_length

    def independent(self, data, ids: Sequence[int], length: int) -> int:
        return len(ids)  # seeded sequences share no job

    def policy_metrics(self, policy, data, ids, length: int, sim_config: SimConfig | None = None) -> list:
        from schedrl.dtsim.episodes import run_episodes

        return run_episodes(lambda i: policy, self.load(), self.cluster, ids)

    def baseline_metrics(self, data, ids, length: int, sim_config: SimConfig | None = None,
                         seed: int = 0) -> dict[str, list]:
        from schedrl.dtsim.episodes import heuristic_summaries

        table = self.load()
        out = {k.upper(): v for k, v in heuristic_summaries(table, self.cluster, ids, False).items()}
        if self.kill:
            out.update({k.upper(): v for k, v in heuristic_summaries(table, self.cluster, ids, True).items()})
        return out
