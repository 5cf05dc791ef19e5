"""The base rule and the env settings every base-rule agent reads (no ray or torch)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from schedrl.agents.dictconfig import DictConfig, check_choices
from schedrl.heuristics.hindsight import TUNED_PREFIX
from schedrl.metrics import METRICS
from schedrl.sim.config import PRESETS, SimConfig, check_slurm_site
from schedrl.workload.workload import Workload

TRAIN_SEQUENCE_LENGTH = 256
"""Jobs per training episode (RLScheduler's training length, which SchedInspector's code also samples)."""


def base_label(base: str) -> str:
    """The base's label: `F1`, `SJF`, ... or `TUNED`."""
    return "TUNED" if base.startswith(TUNED_PREFIX) else base.upper()


def make_base(base: str, seed: int = 0):
    """The base rule as a policy (`pick(sim)`, compiled `run(sim)`): a heuristic name or `tuned:FILE`. ValueError
    naming the valid names for an unknown one; a tuned file that cannot be read raises the tuned rule's one-line error
    naming the file."""
    from schedrl.heuristics.hindsight import make_base as base_rule

    return base_rule(base, seed)


def check_base(base: str) -> str:
    """`base` as the env config keeps it: a heuristic's name in lower case, or `tuned:` and an absolute path."""
    make_base(base)
    if base.startswith(TUNED_PREFIX):
        return TUNED_PREFIX + str(Path(base[len(TUNED_PREFIX):]).expanduser().resolve())
    return base.lower()


@dataclass(frozen=True)
class BaseRuleEnvConfig(DictConfig):
    """What a base-rule env simulates and rewards; each agent adds its own fields and may redeclare a default (a
    redeclared field keeps its place). Unknown keys are rejected by `from_dict`."""

    tuple_fields = {"starts": int}
    dict_fields = {"norm": float, "slurm": None}

    trace: str = "default"
    """Catalog name or SWF path of the workload."""
    cleaning: str = "default"
    """Trace cleaning preset."""
    preset: str = "standard"
    """Simulator semantics (`SimConfig.preset`): `standard` or `rlscheduler` (SchedGym's)."""
    base: str = "f1"
    """The base rule: a name of `schedrl.heuristics.HEURISTICS` or `tuned:FILE`."""
    metric: str = "bsld"
    """Objective: the episode's reward is its value relative to the base's on the same sequence."""
    backfill: str = "none"
    """Backfilling (`SimConfig.backfill`)."""
    slurm: Mapping[str, int] = field(default_factory=dict)
    """Under backfill slurm, the site's Slurm (`SimConfig` fields of `schedrl.sim.config.SLURM_SITE`: bf_interval,
    bf_resolution, bf_window, bf_max_job_test, node_procs) over Slurm's defaults; a scenario's are given here."""
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

    def check_backfill(self) -> None:
        """ValueError where `backfill` is not one this agent runs under."""
        raise NotImplementedError

    def __post_init__(self) -> None:
        from schedrl.workload.cleaning import CleaningRules

        check_choices(self, metric=METRICS, preset=PRESETS)
        self.check_backfill()
        object.__setattr__(self, "slurm", check_slurm_site(self.backfill, self.slurm))
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

    def base_sim_config(self) -> SimConfig:
        """The base's own semantics: the discipline `window` gives, with the env's backfilling (first fit)."""
        discipline = "list" if self.window > 0 else "pick-and-wait"
        return SimConfig.preset(self.preset, discipline=discipline, window=self.window, backfill=self.backfill,
                                **self.slurm)

    def sim_config(self) -> SimConfig:
        """The semantics the policy decides under (the base's, unless the agent says otherwise)."""
        return self.base_sim_config()

    def workload(self) -> Workload:
        from schedrl.workload.catalog import load_trace
        from schedrl.workload.cleaning import CleaningRules

        return load_trace(self.trace, CleaningRules.preset(self.cleaning))
