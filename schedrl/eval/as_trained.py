"""A checkpoint's run record as evaluation defaults: what `evaluate` takes from the record when not told otherwise.

Precedence (the same everywhere): options given on the command line, then `--scenario`, then the run record (these
functions), then the defaults. Callable from Python with plain values; the CLI only parses and prints.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from schedrl.sim.config import SimConfig


@dataclass(frozen=True)
class Given:
    """The trace options an evaluation was given (None: not given)."""

    trace: str | None = None
    cleaning: str | None = None
    preset: str | None = None
    backfill: str | None = None
    augment: str | None = None
    augment_seed: int = 0


def as_trained(given: Given, trained: Mapping, sim: SimConfig) -> tuple[Given, list[str]]:
    """`given` with what it leaves out filled from the run record (its env config `trained` and `SimConfig` `sim`):
    the training trace and its cleaning, the cleaning a SchedGym-preset run used, the backfilling, MRSch's
    augmentation. Returns the filled options and what was taken, for the user to read."""
    taken = []
    trace, cleaning, backfill = given.trace, given.cleaning, given.backfill
    augment, augment_seed = given.augment, given.augment_seed
    if trace is None:
        trace = trained["trace"]
        taken.append(f"trace {trace}")
        if cleaning is None:  # the training trace as it was cleaned for training
            cleaning = trained.get("cleaning", "default")
            taken.append(f"cleaning {cleaning}")
    if given.preset is None and trained.get("preset") == "rlscheduler":
        taken.append("preset rlscheduler")
        if cleaning is None:
            cleaning = "rlscheduler"
    if backfill is None:
        backfill = sim.backfill
        taken.append(f"backfill {backfill}")
    if augment is None and trained.get("augment") not in (None, "none"):
        augment, augment_seed = trained["augment"], trained.get("augment_seed", 0)
        taken.append(f"augment {augment}")
    return replace(given, trace=trace, cleaning=cleaning, backfill=backfill, augment=augment,
                   augment_seed=augment_seed), taken


def evaluation_sim(trained: SimConfig, backfill: str, *, preset: str | None = None, discipline: str | None = None,
                   event_order: str | None = None, allocation: str | None = None, no_kill: bool = False,
                   window: int = 0) -> SimConfig:
    """The run record's `SimConfig` with the options given now laid over it (never re-derived from a preset unless
    one is given)."""
    base = SimConfig.preset(preset) if preset else trained
    changes: dict = {"backfill": backfill}
    for name, value in (("discipline", discipline), ("event_order", event_order), ("allocation", allocation)):
        if value:
            changes[name] = value
    if no_kill:
        changes["kill_at_limit"] = False
    if window:
        changes["window"] = window
    return replace(base, **changes)
