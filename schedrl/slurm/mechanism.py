"""How an order reaches Slurm: a negative nice value per ranked job, in bands above Slurm's own priorities.

Why Nice= (scontrol(1), Slurm 22.05):

- `scontrol update JobId=J Priority=P` sets an explicit priority, which "clears any previously set nice value and
  removes the priority/multifactor plugin's ability to manage a job's priority"; only a hold and a release give it
  back. An order kept that way must be undone job by job, with a hold/release that other tools see, and a job left
  with an explicit priority by a killed adapter keeps it for ever. Under priority/basic every job's priority is a
  decreasing counter near 4.29e9 (2^32 - 1 minus the submit count), so explicit values would also have to be chosen
  against that counter.
- `Nice=N` is an adjustment that priority/multifactor subtracts from the priority it computes, and keeps
  recomputing the other factors (age, fair share, size, partition, QOS, TRES). Negative values (privileged users
  only: root, SlurmUser or an AdminLevel=Operator account) raise a job; the range is +/- 2147483645.

The bands: multifactor's priority is sum(weight_i * factor_i) with every factor in [0, 1] (PriorityFlags without
NO_NORMAL_*, no site factor), so two jobs' priorities differ by at most W = the sum of the PriorityWeight* values.
A ranked job gets nice -bonus, with bonuses strictly decreasing along the order, at least `step` = W + 2 apart,
and the lowest at least `step`: then the ranked jobs come first, in the policy's order, whatever their factors do,
and the unranked ones keep Slurm's order behind them. The adapter needs PriorityType=priority/multifactor.

Changes are few: the longest run of ranked jobs whose bonuses are already in order keeps them (jobs starting from
the head change nothing), a job entering the order gets a bonus spaced evenly between its neighbours' (bonuses
range up to half the nice range, so entries find room for a long time before the bands are laid out afresh), and
a job that leaves the order gets its own nice value back.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

NICE_MAX = 2147483645
"""scontrol(1): the nice adjustment range is +/- 2147483645."""
WEIGHTS = ("PriorityWeightAge", "PriorityWeightAssoc", "PriorityWeightFairShare", "PriorityWeightJobSize",
           "PriorityWeightPartition", "PriorityWeightQOS")
GAP = 3
"""The bands need at least this many steps per ranked job below the ceiling."""
CEILING = NICE_MAX // 2
"""The largest bonus: half the nice range, so priorities stay below 2^31 whatever the weights add."""
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?")


class MechanismError(ValueError):
    """A Slurm configuration under which the nice bands cannot order jobs; the message says what to set."""


@dataclass(frozen=True)
class Change:
    """One job's nice value to set."""

    job: int
    old: int
    new: int
    why: str
    """`rank 3`, `guard`, `restore` (left the order), `reset`."""


def priority_spread(config: Mapping[str, str]) -> int:
    """W: how far apart multifactor can put two jobs (the sum of the priority weights); MechanismError where the
    configuration cannot be ordered by nice values."""
    kind = config.get("PriorityType", "")
    if kind != "priority/multifactor":
        raise MechanismError(f"PriorityType is {kind or 'unset'}: nice values order jobs only under "
                             "priority/multifactor; set PriorityType=priority/multifactor in slurm.conf (docs/slurm.md)")
    flags = config.get("PriorityFlags", "")
    if "NO_NORMAL" in flags:
        raise MechanismError(f"PriorityFlags={flags}: unnormalised factors have no bound the bands could exceed; "
                             "drop the NO_NORMAL_* flags or give --band-step")
    if config.get("PrioritySiteFactorPlugin", "(null)") not in ("(null)", ""):
        raise MechanismError("PrioritySiteFactorPlugin is set: its factor has no bound the bands could exceed; "
                             "give --band-step larger than the largest site factor plus the weights")
    total = 0.0
    for name in WEIGHTS:
        value = config.get(name, "0")
        total += float(value) if _NUMBER.fullmatch(value) else 0.0
    tres = config.get("PriorityWeightTRES", "(null)")
    if tres not in ("(null)", ""):
        total += sum(float(m.group()) for m in (_NUMBER.search(part.partition("=")[2]) for part in tres.split(","))
                     if m)
    return math.ceil(total)


@dataclass(frozen=True)
class NiceBands:
    """Nice values that put ranked jobs first, in order, above priorities that differ by less than `step`."""

    k: int
    step: int
    ceiling: int = CEILING
    """The largest bonus set: far above the bands K jobs need, so jobs entering the order find room between their
    neighbours' bonuses (each entry halves a gap) and the bands are rarely laid out afresh."""

    def __post_init__(self) -> None:
        if self.k < 1 or self.step < 1:
            raise ValueError(f"NiceBands needs k >= 1 and step >= 1, got {self.k}, {self.step}")
        if GAP * (self.k + 1) * self.step > min(self.ceiling, NICE_MAX):
            raise MechanismError(f"--top {self.k} with bands {self.step:,} apart needs bonuses past Slurm's nice "
                                 f"range ({NICE_MAX:,}): lower --top or the priority weights")

    @classmethod
    def for_config(cls, config: Mapping[str, str], k: int, step: int | None = None) -> "NiceBands":
        """Bands for this slurm configuration (`scontrol show config`): `step` = W + 2 unless given."""
        return cls(k, priority_spread(config) + 2 if step is None else int(step))

    def bonuses(self, order: Sequence[int], current: Mapping[int, int]) -> dict[int, int]:
        """Bonus per ranked job: strictly decreasing along `order`, at least `step` apart, the last at least `step`.
        The longest run of jobs whose `current` bonuses already decrease along the order keeps them; each other job
        gets a bonus spaced evenly between its neighbours; where there is no room, all are laid out afresh."""
        n = len(order)
        kept = _kept(order, current, self.step, self.ceiling)
        out: dict[int, int] = {}
        high = self.ceiling
        for r, job in enumerate(order):
            if r in kept:
                out[job] = current[job]
            else:
                below = next((q for q in range(r + 1, n) if q in kept), None)
                floor, d = (current[order[below]], below - r) if below is not None else (0, n - r)
                bonus = floor + (high - floor) * d // (d + 1)
                if bonus > high or bonus < floor + d * self.step:
                    return self.fresh(order)
                out[job] = bonus
            high = out[job] - self.step
        return out

    def fresh(self, order: Sequence[int]) -> dict[int, int]:
        """Bonuses evenly spread over (0, ceiling]."""
        spacing = self.ceiling // (len(order) + 1)
        return {job: (len(order) - r) * spacing for r, job in enumerate(order)}

    def plan(self, order: Sequence[int], nice_now: Mapping[int, int], original: Mapping[int, int],
             guard: frozenset[int] = frozenset()) -> list[Change]:
        """The changes that make Slurm's order start with `order`: `nice_now` the pending jobs' present nice values,
        `original` the nice values of the jobs the adapter manages before it first changed them. Jobs that left the
        order get their original back. Ranked jobs come first, top first, then the restores."""
        current = {job: -nice for job, nice in nice_now.items() if job in original and nice < 0}
        bonus = self.bonuses([j for j in order if j in nice_now], current)
        changes = []
        for r, job in enumerate(order, 1):
            if job in bonus and nice_now[job] != -bonus[job]:
                changes.append(Change(job, nice_now[job], -bonus[job], "guard" if job in guard else f"rank {r}"))
        for job, nice in original.items():
            if job not in bonus and job in nice_now and nice_now[job] != nice:
                changes.append(Change(job, nice_now[job], nice, "restore"))
        return changes


def _kept(order: Sequence[int], current: Mapping[int, int], step: int, ceiling: int) -> set[int]:
    """Positions in `order` of the longest chain of jobs whose current bonuses decrease along the order, with room
    (`step` per position) for the jobs between them (a longest-decreasing-subsequence, O(K^2) for small K)."""
    n = len(order)
    value = [current.get(job, 0) for job in order]
    best = [0] * n
    prev = [-1] * n
    for i in range(n - 1, -1, -1):
        if not step * (n - i) <= value[i] <= ceiling:
            continue
        best[i], prev[i] = 1, -1
        for j in range(i + 1, n):
            if best[j] and value[i] - value[j] >= step * (j - i) and best[j] + 1 > best[i]:
                best[i], prev[i] = best[j] + 1, j
    if not any(best):
        return set()
    i = max(range(n), key=lambda q: (best[q], -q))
    chain = set()
    while i >= 0:
        chain.add(i)
        i = prev[i]
    return chain
