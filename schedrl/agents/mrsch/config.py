"""Configuration of the MRSch environment: a frozen dataclass built from RLlib's env_config dict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from schedrl.agents.dictconfig import DictConfig

# MRSch §IV-C: a window of 10 jobs
WINDOW = 10
# DFP (Dosovitskiy & Koltun 2017, §4) as MRSch §III-C uses it: offsets 1, 2, 4, 8, 16, 32 decisions,
# the goal weighting the last three (0.5, 0.5, 1)
OFFSETS = (1, 2, 4, 8, 16, 32)
OFFSET_WEIGHTS = (0.0, 0.0, 0.0, 0.5, 0.5, 1.0)
REWARDS = ("none", "utilization")
AUGMENT_NONE = "none"


TRAIN_FRACTION = 0.7
"""Share of the cleaned trace training draws from, in sweep files and on the command line alike."""


@dataclass(frozen=True)
class MRSchEnvConfig(DictConfig):
    """What an `MRSchEnv` simulates and observes. Unknown keys are rejected by `from_dict`."""

    dict_label = "MRSch env"
    tuple_fields = {"offsets": int, "starts": int, "offset_weights": float, "reward_weights": float}
    dict_fields = {"norm": None}

    trace: str = "default"
    """Catalog name or SWF path of the workload."""
    cleaning: str = "default"
    """Trace cleaning preset: default, none or rlscheduler."""
    augment: str = "S4"
    """MRSch workload preset S1–S10 (`schedrl.workload.augment.MRSCH_PRESETS`, scaled to the trace's
    machine) or `none` for a trace that already carries `bb` (and `power`) columns."""
    augment_seed: int = 0
    """Seed of the augmentation's random draws (which jobs get burst buffer, sizes, power)."""
    window: int = WINDOW
    """Jobs at the front of the queue the agent picks from (the action space)."""
    offsets: tuple[int, ...] = OFFSETS
    """Future offsets τ, in decisions, at which DFP predicts the measurement changes."""
    offset_weights: tuple[float, ...] = OFFSET_WEIGHTS
    """Weight of each offset in the objective (goal ⊗ offset weights · prediction)."""
    sequence_length: int = 256
    """Jobs per episode."""
    starts: tuple[int, ...] = ()
    """Fixed start indices, cycled through in order (evaluation); empty: seeded random starts."""
    train_fraction: float = TRAIN_FRACTION
    """Random starts come from the first `train_fraction` of the cleaned trace (default 0.7, as `schedrl train mrsch`:
    the rest is held out for validation and evaluation; 1: the whole trace)."""
    curriculum: str = "real"
    """Where training episodes come from, in order (§III-D, Fig. 4): `kind[:episodes],...` with kinds
    `sampled` (trace jobs re-timed as Poisson arrivals), `real` (contiguous trace windows) and `synthetic`
    (jobs drawn from the trace's distributions with its hourly/weekly arrivals); episodes per env instance,
    the last phase open-ended. E.g. `sampled:200,real:200,synthetic` (`schedrl.envs.episodes`)."""
    reward: str = "none"
    """`none`: DFP learns from measurements only, reward 0. `utilization`: the scalar-RL baseline's
    reward, Σ_j w_j·U_j after each decision (MRSch §IV-D: 0.5·U_node + 0.5·U_BB)."""
    reward_weights: tuple[float, ...] = ()
    """Weights w_j of the `utilization` reward, one per resource; empty: equal weights summing to 1."""
    fit_first: bool = False
    """Ours, not MRSch's (False: the paper's action space, any window job). When True, while some window job fits
    every resource now only those can be picked; a job that does not fit is picked (and reserved) only when none
    fits, as FCFS's, the GA's and Random's picks are. Without it a pick can reserve a big job while others fit."""
    queue_weight: float = 0.0
    """Ours, not MRSch's (0: the paper's measurements). When positive, DFP also measures the waiting queue,
    q / (q + `queue_scale`) for q waiting jobs, and the goal gives it the fixed weight -`queue_weight`: the
    agent then also predicts how its picks grow or shrink the queue over the next decisions and avoids
    growing it (fewer waiting jobs over time is less waiting, by Little's law)."""
    queue_scale: float = 100.0
    """Waiting jobs at which the queue measurement reaches 0.5 (with `queue_weight`)."""
    bb_unit_gb: float = 1000.0
    """Burst-buffer unit of the state vector, GB (MRSch §III-A: "a TB burst buffer as the unit")."""
    power_units: int = 100
    """Units the power budget is cut into for the state vector (our choice; the paper does not say)."""
    norm: Mapping[str, float] = field(default_factory=dict)
    """Normalisation constants (`time_scale`); empty: derived from this trace. Saved with checkpoints."""

    def __post_init__(self) -> None:
        from schedrl.envs.episodes import parse_curriculum

        parse_curriculum(self.curriculum)  # ValueError naming an unknown phase
        from schedrl.workload.augment import MRSCH_PRESETS
        from schedrl.workload.cleaning import CleaningRules

        CleaningRules.preset(self.cleaning)  # raises ValueError naming the valid presets
        if self.augment != AUGMENT_NONE and self.augment not in MRSCH_PRESETS:
            raise ValueError(f"augment must be one of {', '.join(MRSCH_PRESETS)} or 'none'; got {self.augment!r}")
        if self.window < 1:
            raise ValueError(f"window must be >= 1; got {self.window}")
        if not self.offsets or any(t < 1 for t in self.offsets) or list(self.offsets) != sorted(set(self.offsets)):
            raise ValueError(f"offsets must be increasing positive decision counts; got {self.offsets}")
        if len(self.offset_weights) != len(self.offsets):
            raise ValueError(f"offset_weights has {len(self.offset_weights)} entries for {len(self.offsets)} offsets")
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}; got {self.reward!r}")
        if self.sequence_length < 1:
            raise ValueError(f"sequence_length must be >= 1; got {self.sequence_length}")
        if not 0.0 < self.train_fraction <= 1.0:
            raise ValueError(f"train_fraction must be in (0, 1]; got {self.train_fraction}")
        if not self.queue_weight >= 0.0 or not self.queue_scale > 0.0:
            raise ValueError(f"queue_weight must be >= 0 and queue_scale > 0; "
                             f"got {self.queue_weight} and {self.queue_scale}")
        if not self.bb_unit_gb > 0 or self.power_units < 1:
            raise ValueError("bb_unit_gb must be positive and power_units >= 1")
