"""Configuration of the DRAS environment: a frozen dataclass built from RLlib's env_config dict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from schedrl.agents.dictconfig import DictConfig

# DRAS §IV-C, Table III: Theta's window W = 50; the SDSC-SP2 runs use W = 10
DEFAULT_WINDOW = 10
# DRAS §IV-D: w1 = w2 = w3 = 1/3 for Theta's capability reward
DEFAULT_WEIGHT = 1.0 / 3.0
# DRAS §IV-C / the authors' Theta gym: a job of >= 802 of Theta's 4,360 nodes is high priority
DEFAULT_PRIORITY_FRACTION = 802.0 / 4360.0
# the Eq. (1) reading: queued time is scaled by max(max queued time, 6 h)
DEFAULT_MIN_TMAX = 6 * 3600.0
REWARDS = ("capability", "capacity")
BACKFILL_RULES = ("easy", "holes")
NORM_KEYS = ("time_scale", "wait_scale")


@dataclass(frozen=True)
class DRASEnvConfig(DictConfig):
    """What a `DRASEnv` simulates and rewards. Unknown keys are rejected by `from_dict`."""

    dict_label = "DRAS env"
    tuple_fields = {"starts": int, "jobs_range": int}
    dict_fields = {"norm": float}

    trace: str = "default"
    """Catalog name or SWF path of the workload."""
    cleaning: str = "default"
    """Trace cleaning preset: default, none or rlscheduler."""
    window: int = DEFAULT_WINDOW
    """W: the oldest W waiting jobs are visible to level 1; the first W backfill candidates to level 2."""
    reward: str = "capability"
    """`capability` (DRAS Eq. 1, per pick) or `capacity` (DRAS Eq. 2, per decision)."""
    w1: float = DEFAULT_WEIGHT
    """Eq. (1) weight of the picked job's queued time over max(max queued time, `min_tmax`)."""
    w2: float = DEFAULT_WEIGHT
    """Eq. (1) weight of the picked job's size over the machine size N."""
    w3: float = DEFAULT_WEIGHT
    """Eq. (1) weight of the node utilisation after the pick."""
    min_tmax: float = DEFAULT_MIN_TMAX
    """Floor (seconds) of Eq. (1)'s t_max, so a queue of fresh jobs does not make every wait term ~1."""
    priority_fraction: float = DEFAULT_PRIORITY_FRACTION
    """Without a `priority` column in the trace, a job is high priority when size >= fraction x N."""
    two_level: bool = True
    """True: DRAS (level 1 picks/reserves, level 2 backfills). False: Decima-PG (flat picks that start now)."""
    backfill_rule: str = "easy"
    """Level-2 candidates: `easy` (EASY's: end by the reservation, or use only nodes it leaves spare) or
    `holes` (the paper's wording: only jobs that end, by requested time, before the reservation)."""
    starvation_wait: float = 0.0
    """Seconds (0: off, the paper's DRAS). Ours, not the paper's: at a level-1 decision, once the oldest waiting
    job has waited this long, it is picked for the agent (it starts, or is reserved as FCFS+EASY would), so the
    agent cannot pass over a wide job indefinitely. Two-level only; Decima-PG has no reservation to give it."""
    sequence_length: int = 512
    """Jobs per episode."""
    starts: tuple[int, ...] = ()
    """Fixed start indices, cycled through in order (evaluation); empty: seeded random starts."""
    train_fraction: float = 1.0
    """Random sequences lie inside the first `train_fraction` of the cleaned trace (the rest is held out
    for evaluation); `jobs_range` overrides it."""
    curriculum: str = "real"
    """Where training episodes come from, in order (§III-D, Fig. 4): `kind[:episodes],...` with kinds
    `sampled` (trace jobs re-timed as Poisson arrivals), `real` (contiguous trace windows) and `synthetic`
    (jobs drawn from the trace's distributions with its hourly/weekly arrivals); episodes per env instance,
    the last phase open-ended. E.g. `sampled:200,real:200,synthetic` (`schedrl.envs.episodes`)."""
    jobs_range: tuple[int, ...] = ()
    """(first, end): random sequences lie inside jobs [first, end) of the cleaned trace (a training
    split such as the first 70%); empty: the whole trace."""
    norm: Mapping[str, float] = field(default_factory=dict)
    """Normalisation constants `time_scale` (max requested time of the training trace) and `wait_scale`
    (24 h); empty: derived from this trace. Saved with checkpoints so evaluation sees the same scales."""

    def __post_init__(self) -> None:
        from schedrl.envs.episodes import parse_curriculum

        parse_curriculum(self.curriculum)  # ValueError naming an unknown phase
        problems = []
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 1:
            problems.append(f"window must be an integer >= 1; got {self.window!r}")
        if self.reward not in REWARDS:
            problems.append(f"reward must be one of {', '.join(REWARDS)}; got {self.reward!r}")
        for name in ("w1", "w2", "w3"):
            if not getattr(self, name) >= 0:
                problems.append(f"{name} must be >= 0 (a reward weight); got {getattr(self, name)}")
        if not self.starvation_wait >= 0:
            problems.append(f"starvation_wait must be >= 0 seconds (0: off); got {self.starvation_wait}")
        if not self.min_tmax > 0:
            problems.append(f"min_tmax must be > 0 seconds; got {self.min_tmax}")
        if not 0.0 < self.priority_fraction <= 1.0:
            problems.append(f"priority_fraction must be in (0, 1]; got {self.priority_fraction}")
        if self.backfill_rule not in BACKFILL_RULES:
            problems.append(f"backfill_rule must be one of {', '.join(BACKFILL_RULES)}; got {self.backfill_rule!r}")
        if self.sequence_length < 1:
            problems.append(f"sequence_length must be >= 1; got {self.sequence_length}")
        if not 0.0 < self.train_fraction <= 1.0:
            problems.append(f"train_fraction must be in (0, 1]; got {self.train_fraction}")
        if self.jobs_range and (len(self.jobs_range) != 2 or not 0 <= self.jobs_range[0] < self.jobs_range[1]):
            problems.append(f"jobs_range must be (first, end) with 0 <= first < end; got {self.jobs_range}")
        if self.norm and set(self.norm) != set(NORM_KEYS):
            problems.append(f"norm must have exactly the keys {', '.join(NORM_KEYS)}; got {', '.join(sorted(self.norm))}")
        elif self.norm and not all(v > 0 for v in self.norm.values()):
            problems.append(f"norm constants must be > 0; got {dict(self.norm)}")
        if problems:
            raise ValueError("; ".join(problems))
        from schedrl.workload.cleaning import CleaningRules

        CleaningRules.preset(self.cleaning)  # raises ValueError naming the valid presets
