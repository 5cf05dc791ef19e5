"""How an order reaches Slurm: a bonus added to each ranked job's site factor (or, as a fallback, its nice value).

The handle: `SiteFactor` (scontrol(1), Slurm 22.05: "the job's admin priority factor in the range of
+/-2147483645. Only privileged users can modify the value"; sprio's SITE column, `%S`). priority/multifactor adds
it to the weighted factors (age, fair share, job size, partition, QOS, association, TRES) and subtracts the nice
value; it is there for exactly this: a site's own say in a job's priority. The adapter adds its bonus to the site
factor it finds on a job (the job's own, usually 0) and sets `own + bonus`; a value someone else sets meanwhile is
adopted as the job's new own (`Adapter` says so), so an admin's site factor keeps acting beside the policy's bonus;
users' nice values are never touched. `reset` sets every job back to its own. Refused where
PrioritySiteFactorPlugin is set: that plugin rewrites every pending job's site factor each cycle.

The fallback handle `nice` (`--handle nice`, for clusters where SiteFactor cannot be set): the bonus is subtracted
from the job's own nice value (own - bonus), which users see and may change; they are adopted the same way.

Why not `Priority=N`: it "clears any previously set nice value and removes the priority/multifactor plugin's ability
to manage a job's priority"; only a hold and a release give it back, and a job left with an explicit priority by a
killed adapter keeps it for ever.

The bands: multifactor's priority is sum(weight_i * factor_i) with every factor in [0, 1] (PriorityFlags without
NO_NORMAL_*), so two jobs' weighted factors differ by at most W = the sum of the PriorityWeight* values. Ranked jobs
get bonuses strictly decreasing along the order, at least `step` apart, the lowest at least `step`, where
`step` = ceil(scale * (W + 2)) (`--bonus-scale`, default 1). With scale >= 1 (strict) the ranked jobs come first
in the policy's order whatever their weighted factors say, and the unranked ones keep Slurm's order behind them;
with scale < 1 the factors (fair share first) may overturn ranks: two ranked jobs d ranks apart swap only if their
weighted factors differ by more than d * step. The largest bonus is `ceiling` (64 (K + 1) steps, at most half the
site factor range). A site factor the site itself set adds to the bonus and keeps its effect.

Changes are few: the longest run of ranked jobs whose bonuses are already in order keeps them (jobs starting from
the head change nothing), a job entering the order gets a bonus spaced evenly between its neighbours', and a job
that leaves the order gets its own value back.
"""

from __future__ import annotations

import math
import re

import numpy as np
from dataclasses import dataclass
from typing import Mapping, Sequence

NICE_MAX = 2147483645
"""scontrol(1): the nice and the site factor ranges are +/- 2147483645."""
HANDLES = ("site-factor", "nice")
"""The job fields an order can be set through: `site-factor` (SiteFactor=, the default) or `nice` (Nice=)."""
FIELD = {"site-factor": "SiteFactor", "nice": "Nice"}
SIGN = {"site-factor": 1, "nice": -1}
"""A bonus raises the site factor and lowers the nice value."""
ROOM = 64
"""The ceiling is this many steps per ranked job: room for entries between neighbours before a fresh layout."""
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
    own: int | None = None
    """The job's own value (what `restore` and `reset` give back), for its mark."""


def priority_spread(config: Mapping[str, str], handle: str = "nice") -> int:
    """W: how far apart multifactor can put two jobs (the sum of the priority weights); MechanismError where the
    configuration cannot be ordered through `handle`, whatever the bands' options (`--band-step`, `--bonus-scale`,
    `--max-bonus` bypass none of these checks)."""
    kind = config.get("PriorityType", "")
    if kind != "priority/multifactor":
        raise MechanismError(f"PriorityType is {kind or 'unset'}: site factors and nice values order jobs only under "
                             "priority/multifactor; set PriorityType=priority/multifactor in slurm.conf (docs/slurm.md)")
    flags = config.get("PriorityFlags", "")
    if "NO_NORMAL" in flags:
        raise MechanismError(f"PriorityFlags={flags}: unnormalised factors have no bound the bonuses could be "
                             "sized against; drop the NO_NORMAL_* flags from slurm.conf (docs/slurm.md)")
    plugin = config.get("PrioritySiteFactorPlugin", "(null)")
    if plugin not in ("(null)", ""):
        raise MechanismError(f"PrioritySiteFactorPlugin={plugin} rewrites every pending job's site factor each cycle "
                             "and its factor has no bound the bonuses could be sized against: unset it in slurm.conf "
                             "to let the adapter order the queue (docs/slurm.md)")
    return math.ceil(sum(weights(config).values()))


def weights(config: Mapping[str, str]) -> dict[str, float]:
    """The PriorityWeight* values of `scontrol show config` (TRES: the sum of its per-resource weights)."""
    out = {}
    for name in WEIGHTS:
        value = config.get(name, "0")
        out[name] = float(value) if _NUMBER.fullmatch(value) else 0.0
    tres = config.get("PriorityWeightTRES", "(null)")
    out["PriorityWeightTRES"] = 0.0 if tres in ("(null)", "") else sum(
        float(m.group()) for m in (_NUMBER.search(part.partition("=")[2]) for part in tres.split(",")) if m)
    return out


SCHEDULING_WEIGHTS = ("PriorityWeightAge", "PriorityWeightJobSize", "PriorityWeightPartition", "PriorityWeightTRES")
"""The factors a scheduling policy stands in for (how long a job waited, how large it is, where it runs): the
default `--max-bonus` is their weights' sum. QOS, fair share and association carry the site's say over who
deserves: a bonus within that sum cannot outweigh a difference they make beyond it."""


def default_max_bonus(config: Mapping[str, str], k: int) -> int:
    """The default `--max-bonus`: the sum of `SCHEDULING_WEIGHTS`, at least 2 `ROOM` (K + 1) (bonuses 2 apart, the
    lowest 2, above Slurm's floor of 1, with room for entries: where those weights are small, the bonuses little
    more than break Slurm's ties)."""
    w = weights(config)
    return max(math.ceil(sum(w[name] for name in SCHEDULING_WEIGHTS)), 2 * ROOM * (k + 1))


def protect(order: Sequence[int], slurm_order: Sequence[int], qos: Mapping[int, float],
            fairshare: Mapping[int, float], allowance: float, k: int) -> list[int]:
    """`order` made safe for the site's tiers: before each job, every pending job it must not pass, in Slurm's own
    order (`slurm_order`: the pending jobs by priority without the adapter's bonus, ties as Slurm breaks them):
    those Slurm has ahead of it with a higher QOS factor (`qos`, sprio's weighted QOS), or with a fair-share factor
    (`fairshare`, weighted) higher by `allowance` or more, and, in turn, those such a job must not pass; cut to `k`
    jobs. With bonuses strictly decreasing along the result, a job put before another in Slurm's own order stays
    before it: no bonus moves a job across a QOS tier or past a fair-share difference of `allowance`."""
    position = {job: i for i, job in enumerate(slurm_order)}
    n = len(slurm_order)
    q = np.array([qos.get(job, 0.0) for job in slurm_order], float)
    f = np.array([fairshare.get(job, 0.0) for job in slurm_order], float)
    placed = np.zeros(n, bool)
    out: list[int] = []
    for job in order:
        if len(out) >= k:
            break
        if job not in position:
            continue
        p = position[job]
        if placed[p]:
            continue
        need = np.zeros(n, bool)
        need[p] = True
        frontier = need.copy()
        while frontier.any():  # z is needed if some needed y behind z must not pass it (suffix minima over y)
            min_q = np.minimum.accumulate(np.where(frontier, q, np.inf)[::-1])[::-1]
            min_f = np.minimum.accumulate(np.where(frontier, f, np.inf)[::-1])[::-1]
            after_q, after_f = np.append(min_q[1:], np.inf), np.append(min_f[1:], np.inf)
            new = ~need & ~placed & ((q > after_q) | (f - allowance >= after_f))
            need |= new
            frontier = new
        for i in np.flatnonzero(need & ~placed):  # Slurm's order: every job's protectors before it
            if len(out) >= k:
                break
            out.append(slurm_order[i])
            placed[i] = True
    return out


@dataclass(frozen=True)
class NiceBands:
    """Bonuses that put ranked jobs first, in order, above priorities that differ by less than `step`; `handle` says
    which job field carries them (`SiteFactor` = own + bonus, `Nice` = own - bonus)."""

    k: int
    step: int
    ceiling: int = CEILING
    handle: str = "nice"
    """The largest bonus set: far above the bands K jobs need, so jobs entering the order find room between their
    neighbours' bonuses (each entry halves a gap) and the bands are rarely laid out afresh."""

    def __post_init__(self) -> None:
        if self.handle not in HANDLES:
            raise ValueError(f"handle must be one of {', '.join(HANDLES)}; got {self.handle!r}")
        if self.k < 1 or self.step < 1:
            raise ValueError(f"NiceBands needs k >= 1 and step >= 1, got {self.k}, {self.step}")
        if GAP * (self.k + 1) * self.step > min(self.ceiling, NICE_MAX):
            raise MechanismError(f"--top {self.k} with bands {self.step:,} apart needs bonuses past Slurm's "
                                 f"{FIELD[self.handle]} range ({NICE_MAX:,}): lower --top, --bonus-scale or the "
                                 "priority weights")

    @property
    def field(self) -> str:
        return FIELD[self.handle]

    @classmethod
    def for_config(cls, config: Mapping[str, str], k: int, step: int | None = None, scale: float = 1.0,
                   handle: str = "nice", max_bonus: int | None = None) -> "NiceBands":
        """Bands for this slurm configuration (`scontrol show config`; `priority_spread`'s refusals hold whatever
        the options): `step` = ceil(scale (W + 2)) unless given, the ceiling the smallest of 64 (K + 1) steps, half
        the range and `max_bonus` (default `default_max_bonus`); where `max_bonus` leaves less than 64 steps per
        rank, the step shrinks to fit it (at least 1; a given `step` that leaves less than `GAP` is refused)."""
        if not scale > 0 or not math.isfinite(scale):
            raise ValueError(f"--bonus-scale must be a positive number, got {scale}")
        spread = priority_spread(config, handle)
        cap = default_max_bonus(config, k) if max_bonus is None else int(max_bonus)
        if cap < GAP * (k + 1):
            raise MechanismError(f"--max-bonus {cap:,} leaves less than 1 priority unit between bonuses for --top {k}: "
                                 f"give at least {GAP * (k + 1):,} ({GAP} (K + 1)), or a lower --top")
        given = step is not None
        step = max(1, math.ceil(scale * (spread + 2))) if step is None else int(step)
        if given and GAP * (k + 1) * step > cap:
            raise MechanismError(f"--band-step {step:,} with --top {k} needs bonuses up to {GAP * (k + 1) * step:,}, "
                                 f"above --max-bonus {cap:,}: lower one or raise the other")
        if not given:
            step = min(step, max(1, cap // (ROOM * (k + 1))))
        return cls(k, step, min(CEILING, ROOM * (k + 1) * step, cap), handle)

    def strict(self, spread: int) -> bool:
        """Whether ranked jobs keep the policy's order whatever their weighted factors (steps above the spread W)."""
        return self.step >= spread + 2

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

    def plan(self, order: Sequence[int], value_now: Mapping[int, int], own: Mapping[int, int],
             guard: frozenset[int] = frozenset()) -> list[Change]:
        """The changes that make Slurm's order start with `order`: `value_now` the pending jobs' present values of
        the handle's field, `own` the own values of the jobs the adapter manages (before its bonus; a ranked job
        missing here has its present value as its own). A ranked job gets own + bonus (site factor) or own - bonus
        (nice); jobs that left the order get their own back. Ranked jobs come first, top first, then the restores."""
        sign = SIGN[self.handle]
        own = {**{job: value_now[job] for job in order if job in value_now}, **own}
        current = {job: sign * (value - own[job]) for job, value in value_now.items()
                   if job in own and sign * (value - own[job]) > 0}
        bonus = self.bonuses([j for j in order if j in value_now], current)
        changes = []
        for r, job in enumerate(order, 1):
            if job in bonus and value_now[job] != own[job] + sign * bonus[job]:
                changes.append(Change(job, value_now[job], own[job] + sign * bonus[job],
                                      "guard" if job in guard else f"rank {r}", own[job]))
        for job, value in own.items():
            if job not in bonus and job in value_now and value_now[job] != value:
                changes.append(Change(job, value_now[job], value, "restore", value))
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
