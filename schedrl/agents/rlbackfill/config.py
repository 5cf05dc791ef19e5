"""Learned backfilling's env configuration and its simulator semantics: the base-rule settings (`baserule.config`)
and what learned backfilling adds (no ray or torch)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from schedrl.agents.baserule.config import (TRAIN_SEQUENCE_LENGTH, TUNED_PREFIX, BaseRuleEnvConfig, base_label,
                                            check_base, make_base)
from schedrl.sim.config import BACKFILLS, SimConfig

__all__ = ["LEARNED_BACKFILLS", "RLBackfillEnvConfig", "SLOTS", "TRAIN_SEQUENCE_LENGTH", "TUNED_PREFIX", "base_label",
           "check_base", "make_base"]

LEARNED_BACKFILLS = ("easy", "rlscheduler")
"""Backfilling rules whose candidates the policy chooses among: both reserve one blocked job at a shadow time."""
SLOTS = 32
"""Candidates the policy sees at once (the first, in queue order); later ones are seen once earlier ones started."""


@dataclass(frozen=True)
class RLBackfillEnvConfig(BaseRuleEnvConfig):
    """What an `RLBackfillEnv` simulates and rewards: the base orders the queue and its blocked choice is reserved;
    the policy chooses among the backfill candidates. The reward is relative to the base with first-fit backfilling
    on the same sequence. Unknown keys are rejected by `from_dict`."""

    dict_label = "rl-backfill env"

    backfill: str = "easy"
    """`easy` or `rlscheduler` (RLScheduler's variant: the shadow time fixed when the job blocks, candidates end before
    it); `none` and `conservative` are refused (nothing to choose, or every job reserved)."""
    slots: int = SLOTS
    """Candidates seen at once (the first ones in queue order)."""
    skip: bool = False
    """Whether the policy may also start none of the candidates (backfilling stops until the next arrival or
    completion); False: some candidate always starts while there is one, as under EASY."""

    def check_backfill(self) -> None:
        if self.backfill not in LEARNED_BACKFILLS:
            why = ("there is nothing to backfill" if self.backfill == "none" else
                   "it reserves every waiting job, so there is no choice to learn" if self.backfill == "conservative"
                   else f"it is not one of {', '.join(BACKFILLS)}")
            raise ValueError(f"rl-backfill learns which job EASY backfills: backfill must be one of "
                             f"{', '.join(LEARNED_BACKFILLS)}, got {self.backfill!r} ({why})")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.slots < 1:
            raise ValueError(f"slots must be >= 1, got {self.slots}")

    def sim_config(self) -> SimConfig:
        """The policy's semantics: the base's, with every backfill a decision (`backfill_choice="policy"`)."""
        return replace(self.base_sim_config(), backfill_choice="policy")
