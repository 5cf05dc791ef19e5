"""The held-out protocol: which jobs of a trace training may draw from, and where validation and evaluation
sequences come from.

A trace of n jobs splits into a training part (its first `train_fraction`) and a held-out part (the rest);
the held-out part splits again, its first `validation_share` for validation (checkpoint selection, choosing
a scenario's reference heuristic) and the rest for evaluation (the final tables). With `train_fraction` 1
(RLScheduler's paper protocol) there is no held-out part and both come from the whole trace.
"""

from __future__ import annotations

from dataclasses import dataclass

VALIDATION_SHARE = 0.25
"""Default share of the held-out part that validation sequences come from."""

VALIDATION_SEEDS = 10_000
"""A run's seeded validation sequences are drawn with seed `VALIDATION_SEEDS` + the run's seed (`validation_seed`)."""
EVALUATION_SEEDS = 20_000
"""A run's seeded evaluation sequences (its final table, `schedrl tuned evaluate`'s default) are drawn with seed
`EVALUATION_SEEDS` + the run's seed (`evaluation_seed`), so they never coincide with its validation ones."""
SCENARIO_SEED_SALTS = {"validation": 0, "evaluation": EVALUATION_SEEDS}
"""What a generated scenario adds to its parts' seeds (`validation.seed`, `evaluation.seed`) to draw their sequence
seeds: validation unsalted, evaluation salted as a run's evaluation is, so the two parts never coincide. (Trace
scenarios draw windows in disjoint zones and use their seeds as given.)"""


def validation_seed(seed: int | None) -> int:
    """The seed of a run's validation sequences, for the run's `seed` (None: 0)."""
    return VALIDATION_SEEDS + (seed or 0)


def evaluation_seed(seed: int | None) -> int:
    """The seed of a run's evaluation sequences, for the run's `seed` (None: 0)."""
    return EVALUATION_SEEDS + (seed or 0)


def training_end(train_fraction: float, n_jobs: int) -> int:
    """End of the training part when training draws from the first `train_fraction` of `n_jobs` jobs."""
    return n_jobs if train_fraction >= 1.0 else max(1, int(train_fraction * n_jobs))


def held_out_after(end: int, n_jobs: int) -> tuple[int, int]:
    """The held-out part of a trace whose training part is [0, end): the rest, or the whole trace when
    training uses all of it."""
    return (end, n_jobs) if end < n_jobs else (0, n_jobs)


def zone(held_out: tuple[int, int], validation: bool, share: float = VALIDATION_SHARE) -> tuple[int, int]:
    """Validation (`validation=True`) or evaluation zone of a held-out part: validation first. A held-out part
    that is the whole trace (no training split) is both."""
    lo, hi = held_out
    if lo == 0:
        return lo, hi
    cut = lo + int((hi - lo) * share)
    return (lo, cut) if validation else (cut, hi)


@dataclass(frozen=True)
class Split:
    """A scenario's split of its trace (ignored by generated scenarios, whose sequences are seeds)."""

    train_fraction: float = 0.7
    """Training draws from the first `train_fraction` of the cleaned trace (1: the whole trace, no held-out part)."""
    validation_share: float = VALIDATION_SHARE
    """Share of the held-out part (its first jobs) for validation; evaluation takes the rest (1: all of it is
    validation, allowed only where the evaluation has a trace of its own, `Scenario` checks)."""

    def __post_init__(self) -> None:
        for name in ("train_fraction", "validation_share"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
                raise ValueError(f"split.{name} must be a number in (0, 1], got {value!r}")

    def training_range(self, n_jobs: int) -> tuple[int, int]:
        return 0, training_end(self.train_fraction, n_jobs)

    def held_out(self, n_jobs: int) -> tuple[int, int]:
        return held_out_after(training_end(self.train_fraction, n_jobs), n_jobs)

    def zone(self, n_jobs: int, validation: bool = False) -> tuple[int, int]:
        return zone(self.held_out(n_jobs), validation, self.validation_share)

    def record(self, n_jobs: int) -> dict:
        """The split of a trace of `n_jobs` jobs as a tuned rule's file stores it: the training part, the validation
        and evaluation zones, and the two shares."""
        return {"train": list(self.training_range(n_jobs)), "validation": list(self.zone(n_jobs, validation=True)),
                "evaluation": list(self.zone(n_jobs)), "train_fraction": self.train_fraction,
                "validation_share": self.validation_share}
