"""Learned backfilling's env configuration, its base heuristic and its simulator semantics (no ray or torch)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from schedrl.agents.dictconfig import DictConfig
from schedrl.heuristics.hindsight import TUNED_PREFIX
from schedrl.metrics import METRICS
from schedrl.sim.config import BACKFILLS, PRESETS, SimConfig
from schedrl.workload.workload import Workload

LEARNED_BACKFILLS = ("easy", "rlscheduler")
"""Backfilling rules whose candidates the policy chooses among: both reserve one blocked job at a shadow time."""
SLOTS = 32
"""Candidates the policy sees at once (the first, in queue order); later ones are seen once earlier ones started."""
TRAIN_SEQUENCE_LENGTH = 256
"""Jobs per training episode."""


def base_label(base: str) -> str:
    """The base's label: `F1`, `SJF`, ... or `TUNED`."""
    return "TUNED" if base.startswith(TUNED_PREFIX) else base.upper()


def make_base(base: str, seed: int = 0):
    """The base heuristic as a policy (`pick(sim)`, compiled `run(sim)`): a heuristic name or `tuned:FILE`.
    ValueError naming the valid names for an unknown one; a tuned file that cannot be read raises the tuned rule's
    one-line error naming the file."""
    from schedrl.heuristics.hindsight import make_base as base_rule

    return base_rule(base, seed)


def check_base(base: str) -> str:
    """`base` as the env config keeps it: a heuristic's name in lower case, or `tuned:` and an absolute path."""
    make_base(base)
    if base.startswith(TUNED_PREFIX):
        return TUNED_PREFIX + str(Path(base[len(TUNED_PREFIX):]).expanduser().resolve())
    return base.lower()


@dataclass(frozen=True)
class RLBackfillEnvConfig(DictConfig):
    """What an `RLBackfillEnv` simulates and rewards. Unknown keys are rejected by `from_dict`."""

    dict_label = "rl-backfill env"
    tuple_fields = {"starts": int}
    dict_fields = {"norm": float}

    trace: str = "default"
    """Catalog name or SWF path of the workload."""
    cleaning: str = "default"
    """Trace cleaning preset."""
    preset: str = "standard"
    """Simulator semantics (`SimConfig.preset`): `standard` or `rlscheduler` (SchedGym's)."""
    base: str = "f1"
    """The heuristic that orders the queue and whose blocked choice is reserved: a name of
    `schedrl.heuristics.HEURISTICS` or `tuned:FILE`."""
    metric: str = "bsld"
    """Objective: the episode's reward is its value relative to the base with first-fit backfilling on the same
    sequence."""
    backfill: str = "easy"
    """`easy` or `rlscheduler` (RLScheduler's variant: the shadow time fixed when the job blocks, candidates end before
    it); `none` and `conservative` are refused (nothing to choose, or every job reserved)."""
    window: int = 0
    """0: pick-and-wait (RLScheduler's discipline); N > 0: list scheduling from the first N waiting jobs (DRAS's)."""
    slots: int = SLOTS
    """Candidates seen at once (the first ones in queue order)."""
    skip: bool = False
    """Whether the policy may also start none of the candidates (backfilling stops until the next arrival or
    completion); False: some candidate always starts while there is one, as under EASY."""
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

    def __post_init__(self) -> None:
        from schedrl.workload.cleaning import CleaningRules

        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {self.metric!r}")
        if self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {', '.join(PRESETS)}; got {self.preset!r}")
        if self.backfill not in LEARNED_BACKFILLS:
            why = ("there is nothing to backfill" if self.backfill == "none" else
                   "it reserves every waiting job, so there is no choice to learn" if self.backfill == "conservative"
                   else f"it is not one of {', '.join(BACKFILLS)}")
            raise ValueError(f"rl-backfill learns which job EASY backfills: backfill must be one of "
                             f"{', '.join(LEARNED_BACKFILLS)}, got {self.backfill!r} ({why})")
        CleaningRules.preset(self.cleaning)
        object.__setattr__(self, "base", check_base(self.base))
        if self.window < 0:
            raise ValueError(f"window must be >= 0 (0: pick-and-wait), got {self.window}")
        if self.slots < 1:
            raise ValueError(f"slots must be >= 1, got {self.slots}")
        if self.sequence_length < 2:
            raise ValueError(f"sequence_length must be >= 2, got {self.sequence_length}")
        if not 0.0 < self.train_fraction <= 1.0:
            raise ValueError(f"train_fraction must be in (0, 1]; got {self.train_fraction}")
        if not 0.0 < self.validation_share < 1.0:
            raise ValueError(f"validation_share must be in (0, 1); got {self.validation_share}")

    def base_sim_config(self) -> SimConfig:
        """The base's own semantics: the same discipline and backfilling, candidates started first-fit."""
        discipline = "list" if self.window > 0 else "pick-and-wait"
        return SimConfig.preset(self.preset, discipline=discipline, window=self.window, backfill=self.backfill)

    def sim_config(self) -> SimConfig:
        """The policy's semantics: the base's, with every backfill a decision (`backfill_choice="policy"`)."""
        return replace(self.base_sim_config(), backfill_choice="policy")

    def workload(self) -> Workload:
        from schedrl.workload.catalog import load_trace
        from schedrl.workload.cleaning import CleaningRules

        return load_trace(self.trace, CleaningRules.preset(self.cleaning))
