"""The inspector's env configuration and its base heuristic (no ray or torch)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from schedrl.agents.dictconfig import DictConfig
from schedrl.heuristics.hindsight import TUNED_PREFIX
from schedrl.metrics import METRICS
from schedrl.sim.config import BACKFILLS, PRESETS, SimConfig
from schedrl.workload.workload import Workload

TRAIN_SEQUENCE_LENGTH = 256
"""Jobs per training episode (RLScheduler's training length, which SchedInspector's code also samples)."""


def base_label(base: str) -> str:
    """The base's column label: `F1`, `SJF`, ... or `TUNED`."""
    return "TUNED" if base.startswith(TUNED_PREFIX) else base.upper()


def make_base(base: str, seed: int = 0):
    """The base heuristic as a policy (`pick(sim)`, compiled `run(sim)`): a heuristic name or `tuned:FILE`.
    ValueError naming the valid names for an unknown one; a tuned file that cannot be read raises `RuleError`
    (one `error:` line naming the file)."""
    from schedrl.heuristics.hindsight import make_base as base_rule

    return base_rule(base, seed)


def check_base(base: str) -> str:
    """`base` in the form the env config keeps: a heuristic's name in lower case, or `tuned:` and an absolute path."""
    make_base(base)
    if base.startswith(TUNED_PREFIX):
        return TUNED_PREFIX + str(Path(base[len(TUNED_PREFIX):]).expanduser().resolve())
    return base.lower()


@dataclass(frozen=True)
class InspectorEnvConfig(DictConfig):
    """What an `InspectorEnv` simulates and rewards. Unknown keys are rejected by `from_dict`."""

    dict_label = "inspector env"
    tuple_fields = {"starts": int}
    dict_fields = {"norm": None}

    trace: str = "default"
    """Catalog name or SWF path of the workload."""
    cleaning: str = "default"
    """Trace cleaning preset."""
    preset: str = "standard"
    """Simulator semantics (`SimConfig.preset`): `standard` or `rlscheduler` (SchedGym's)."""
    base: str = "f1"
    """The heuristic whose proposals are inspected: a name of `schedrl.heuristics.HEURISTICS` or `tuned:FILE`."""
    metric: str = "bsld"
    """Objective: the episode's reward is its value relative to the base heuristic's on the same sequence."""
    backfill: str = "none"
    """Backfilling while an accepted job that does not fit waits (`SimConfig.backfill`); a rejection starts nothing,
    backfilled or not, until the next event."""
    window: int = 0
    """0: pick-and-wait (RLScheduler's discipline: one proposal at a time, held until it fits); N > 0: list
    scheduling from the first N waiting jobs (DRAS's discipline: proposals start until one does not fit, which is
    reserved)."""
    sequence_length: int = TRAIN_SEQUENCE_LENGTH
    """Jobs per training episode."""
    starts: tuple[int, ...] = ()
    """Fixed starts (cycled); empty: seeded random windows of the training part."""
    train_fraction: float = 0.7
    """Training windows lie in the first `train_fraction` of the cleaned trace; validation and evaluation use the rest."""
    validation_share: float = 0.25
    """Share of the held-out part (its first jobs) that validation sequences come from."""
    norm: Mapping[str, float] = field(default_factory=dict)
    """Normalisation constants (`observation.Normalisation`); empty: from this trace's training part."""
    history_features: bool = False
    """Also observe the recent arrivals (`observation.HISTORY_FEATURES`); False: the 21 features of runs before them."""
    starvation_wait: float = 0.0
    """Starvation guard, seconds (0: off): a proposal that has waited this long cannot be rejected (`env.reject_allowed`).
    0 here so that run records written before the guard keep their meaning; `schedrl train inspector` sets 24 h."""

    def __post_init__(self) -> None:
        from schedrl.workload.cleaning import CleaningRules

        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {self.metric!r}")
        if self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {', '.join(PRESETS)}; got {self.preset!r}")
        if self.backfill not in BACKFILLS:
            raise ValueError(f"backfill must be one of {', '.join(BACKFILLS)}; got {self.backfill!r}")
        CleaningRules.preset(self.cleaning)
        object.__setattr__(self, "base", check_base(self.base))
        if self.window < 0:
            raise ValueError(f"window must be >= 0 (0: pick-and-wait), got {self.window}")
        if self.sequence_length < 2:
            raise ValueError(f"sequence_length must be >= 2, got {self.sequence_length}")
        if not 0.0 < self.train_fraction <= 1.0:
            raise ValueError(f"train_fraction must be in (0, 1]; got {self.train_fraction}")
        if not 0.0 < self.validation_share < 1.0:
            raise ValueError(f"validation_share must be in (0, 1); got {self.validation_share}")
        if not self.starvation_wait >= 0:
            raise ValueError(f"starvation_wait must be >= 0 seconds (0: off); got {self.starvation_wait}")

    def sim_config(self) -> SimConfig:
        discipline = "list" if self.window > 0 else "pick-and-wait"
        return SimConfig.preset(self.preset, discipline=discipline, window=self.window, backfill=self.backfill)

    def workload(self) -> Workload:
        from schedrl.workload.catalog import load_trace
        from schedrl.workload.cleaning import CleaningRules

        return load_trace(self.trace, CleaningRules.preset(self.cleaning))
