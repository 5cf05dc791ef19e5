"""The inspector's env configuration: the base-rule settings (`baserule.config`) and what the inspector adds."""

from __future__ import annotations

from dataclasses import dataclass

from schedrl.agents.baserule.config import (TRAIN_SEQUENCE_LENGTH, TUNED_PREFIX, BaseRuleEnvConfig, base_label,
                                            check_base, make_base)
from schedrl.agents.dictconfig import check_choices
from schedrl.agents.inspector.mask import WHERE
from schedrl.sim.config import BACKFILLS

__all__ = ["InspectorEnvConfig", "TRAIN_SEQUENCE_LENGTH", "TUNED_PREFIX", "base_label", "check_base", "make_base"]


@dataclass(frozen=True)
class InspectorEnvConfig(BaseRuleEnvConfig):
    """What an `InspectorEnv` simulates and rewards: the base heuristic's proposals, each accepted or rejected.
    Unknown keys are rejected by `from_dict`."""

    dict_label = "inspector env"

    backfill: str = "none"
    """Backfilling while an accepted job that does not fit waits (`SimConfig.backfill`); a rejection starts nothing,
    backfilled or not, until the next event."""

    history_features: bool = False
    """Also observe the recent arrivals (`observation.HISTORY_FEATURES`); False: the 21 features of runs before them."""
    starvation_wait: float = 0.0
    """Starvation guard, seconds (0: off): a proposal that has waited this long cannot be rejected (`env.reject_allowed`).
    0 here so that run records written before the guard keep their meaning; `schedrl train inspector` sets 24 h."""
    queue_starvation_wait: float = 0.0
    """Queue guard, seconds (0: off): while any waiting job has waited this long, no proposal is rejected
    (`mask.RejectMask.queue_wait`)."""
    reject_where: str = "any"
    """Where a rejection is offered (`mask.WHERE`): `any` (wherever the guard allows) or `pays` (only where another
    waiting job competes with the proposal: `mask.rejection_can_pay`) or `cheap`; `any` is also what run records written
    before it mean."""

    def check_backfill(self) -> None:
        check_choices(self, backfill=BACKFILLS)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.starvation_wait >= 0:
            raise ValueError(f"starvation_wait must be >= 0 seconds (0: off); got {self.starvation_wait}")
        if not self.queue_starvation_wait >= 0:
            raise ValueError(f"queue_starvation_wait must be >= 0 seconds (0: off); got {self.queue_starvation_wait}")
        check_choices(self, reject_where=WHERE)
