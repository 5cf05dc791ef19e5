"""A trained policy against the best baseline on the same sequences, paired: is the difference real?

Evaluation sequences differ in difficulty by orders of magnitude, so two means a few % apart may say nothing.
Pairing by sequence removes the difficulty: `comparisons` reports the difference of the means (as a % of the
baseline's), the 95% Student's t interval of the mean per-sequence difference in the same unit, and on how many
sequences the policy is better, equal and worse; `lines` words it, with a verdict. Used by `schedrl train`'s
final table, `schedrl evaluate`, `select`, the multi-seed protocol (`schedrl.training.report`) and the leaderboard.

Trace windows that must share jobs (ten 1,024-job windows in Lublin-1's 2,250-job evaluation zone) are not
independent samples: the callers pass `independent` (`Judge.independent`, `scoring.DrawnSequences.independent`), and the
interval then counts only the disjoint windows that fit, as if only those had been drawn. A comparison says so
(`independent` in its dict, "overlapping: interval from 2 disjoint windows" in its line).

Every comparison also carries its minimum detectable effect (`against`'s `mde_pct`; `mde`): the true difference this many
independent windows would detect with 80% power at the 5% level, so that "not distinguishable" says whether a 5% or
only a 50% difference could have been seen. t quantiles are scipy's (`scipy.stats.t`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from schedrl.metrics import lower_is_better

POWER = 0.8
"""The power the minimum detectable effect is stated for (with the two-sided 5% level of every interval)."""


@functools.lru_cache(maxsize=256)
def t_quantile(q: float, df: int) -> float:
    """Student's t `q` quantile for `df` degrees of freedom (scipy.stats.t)."""
    from scipy.stats import t

    return float(t.ppf(q, df))


def t975(df: int) -> float:
    """Student's t 97.5% quantile for `df` degrees of freedom (two-sided 95% interval), from scipy. (Until
    2026-11-28 a table of 3 decimals for df <= 30 and the normal 1.96 past it: the table's values differ from these by
    under 0.0005; past 30 the normal quantile was too small, e.g. 1.96 for t's 2.040 at 31 and 2.009 at 50.)"""
    return t_quantile(0.975, int(df))


def mde(sd: float, k: int, power: float = POWER) -> float | None:
    """The minimum detectable effect of a paired comparison over `k` independent samples whose differences spread
    `sd`: (t_{0.975,k-1} + t_{power,k-1}) * sd / sqrt(k), the true mean difference a two-sided 5% test detects with
    probability `power`. None with fewer than 2 samples."""
    if k < 2 or not math.isfinite(sd):
        return None
    return (t975(k - 1) + t_quantile(power, k - 1)) * sd / math.sqrt(k)


def _mde_fields(diff: np.ndarray, k: int, scale: float) -> dict:
    d = mde(float(diff.std(ddof=1)), k) if len(diff) > 1 else None
    return {"mde_pct": None if d is None else 100.0 * d / scale}


def comparisons(values: Mapping[str, Sequence[float]], trained: Sequence[str], metric: str, place: int = 1,
                independent: int | None = None) -> list[dict]:
    """Each of the `trained` columns of `values` (label -> per-sequence values) against the best of the others
    (`place` 2: the second best, e.g. RLScheduler Table VII's bar; the last one where there are fewer).

    `independent`: how many of the sequences count as independent samples where they overlap (`against`'s rule, from
    `Judge.independent` or `schedrl.scenarios.scoring.DrawnSequences.independent`); a comparison then carries
    `independent` too, and its interval counts only that many."""
    trained = [k for k in trained if k in values]
    baselines = [k for k in values if k not in trained]
    if not trained or not baselines:
        return []
    if place < 1:
        raise ValueError(f"place must be >= 1 (1: the best baseline), got {place}")
    lower = lower_is_better(metric)
    ranked = sorted(baselines, key=lambda k: float(np.mean(values[k])), reverse=not lower)  # stable: ties keep order
    best = ranked[min(place, len(ranked)) - 1]
    base = np.asarray(values[best], dtype=float)
    out = []
    for label in trained:
        diff = np.asarray(values[label], dtype=float) - base
        n, scale = len(diff), abs(float(base.mean())) or 1.0
        k = n if independent is None else max(1, min(n, int(independent)))
        half = t975(k - 1) * float(diff.std(ddof=1)) / math.sqrt(k) if k > 1 else 0.0
        better = int(np.sum(diff < 0 if lower else diff > 0))
        equal = int(np.sum(diff == 0))
        mean = float(diff.mean())
        out.append({"policy": label, "baseline": best, "sequences": n, **({"independent": k} if k < n else {}),
                    "difference_pct": 100.0 * mean / scale,
                    "ci95_pct": None if k < 2 else [100.0 * (mean - half) / scale, 100.0 * (mean + half) / scale],
                    "better": better, "equal": equal, "worse": n - better - equal, **({"place": place} if place > 1 else {})})
    return out


def against(values: Mapping[str, Sequence[float]], label: str, baseline: str, metric: str,
            independent: int | None = None) -> dict:
    """`label`'s column against the given `baseline` column (a scenario's fixed reference), with its `verdict`.

    `independent`: how many of the sequences are independent samples when they overlap (windows of a zone shorter than
    their total length share jobs, so their differences are correlated). The interval then uses that many: the
    standard error of the mean difference is sd / sqrt(independent) with independent - 1 degrees of freedom, as if
    only the disjoint windows that fit in the zone had been drawn; with fewer than 2 there is no interval and the
    verdict is "not distinguishable" unless every sequence agrees. Conservative (it ignores what the extra windows do
    add), never optimistic as a t interval over all of them would be."""
    diff = np.asarray(values[label], dtype=float) - np.asarray(values[baseline], dtype=float)
    base = np.asarray(values[baseline], dtype=float)
    n = len(diff)
    k = n if independent is None else max(1, min(n, int(independent)))
    scale, mean = abs(float(base.mean())) or 1.0, float(diff.mean())
    half = t975(k - 1) * float(diff.std(ddof=1)) / math.sqrt(k) if k > 1 and n > 1 else None
    lower = lower_is_better(metric)
    better = int(np.sum(diff < 0 if lower else diff > 0))
    equal = int(np.sum(diff == 0))
    c = {"policy": label, "baseline": baseline, "sequences": n, "independent": k, "difference_pct": 100.0 * mean / scale,
         "ci95_pct": None if half is None else [100.0 * (mean - half) / scale, 100.0 * (mean + half) / scale],
         **_mde_fields(diff, k if n > 1 else 1, scale), "better": better, "equal": equal, "worse": n - better - equal}
    said = verdict(c, metric)
    if half is None and n > 1 and said in ("better", "worse") and c[said] < n:
        said = "not distinguishable"  # no interval, and the sequences disagree
    return {**c, "verdict": said}


def verdict(c: dict, metric: str) -> str:
    """"the same" (equal on every sequence), "not distinguishable" (the 95% interval holds 0), "better" or "worse"
    (with one sequence there is no interval: the sign decides)."""
    interval = c["ci95_pct"]
    if c["equal"] == c["sequences"]:
        return "the same"
    if interval and interval[0] <= 0 <= interval[1]:
        return "not distinguishable"
    return "better" if (c["difference_pct"] < 0) == lower_is_better(metric) else "worse"


def against_second_best(values: Mapping[str, Sequence[float]], label: str, metric: str,
                        independent: int | None = None) -> dict:
    """`label`'s column against the second best of the others (RLScheduler Table VII's bar), with its `verdict`."""
    (c,) = comparisons(values, (label,), metric, place=2, independent=independent)
    return {**c, "verdict": _strict(c, metric)}


def _strict(c: dict, metric: str) -> str:
    """`verdict`, but "not distinguishable" where overlapping sequences leave no interval and they disagree."""
    said = verdict(c, metric)
    if c["ci95_pct"] is None and c["sequences"] > 1 and said in ("better", "worse") and c[said] < c["sequences"]:
        return "not distinguishable"
    return said


def short(c: dict, interval: bool = True) -> str:
    """"SJF +9.3% [+2.1, +16.5], worse" for a comparison carrying its `verdict` (without the interval: "SJF +9.3%, worse")."""
    bounds = f" [{c['ci95_pct'][0]:+.1f}, {c['ci95_pct'][1]:+.1f}]" if interval and c["ci95_pct"] else ""
    return f"{c['baseline']} {c['difference_pct']:+.1f}%{bounds}, {c['verdict']}"


def overlap_note(c: dict) -> str:
    """" (overlapping: interval from 2 disjoint windows)" for a comparison whose sequences overlap, else ""."""
    k = c.get("independent", c["sequences"])
    if k >= c["sequences"]:
        return ""
    return f" (overlapping: interval from {k} disjoint windows)" if k > 1 else " (overlapping: 1 disjoint window, no interval)"


_LONG = {"the same": "the same schedule quality on every sequence",
         "not distinguishable": "not distinguishable from it on these sequences"}


def lines(found: list[dict], metric: str) -> list[str]:
    """One sentence per comparison, ending in its verdict (better / worse / not distinguishable / the same)."""
    out = []
    for c in found:
        said = _strict(c, metric)
        said = _LONG.get(said, said)
        interval = c["ci95_pct"]
        interval = f"; 95% CI of the paired mean difference {interval[0]:+.1f}% to {interval[1]:+.1f}%" if interval else ""
        which = "the best baseline" if c.get("place", 1) == 1 else "the second-best baseline" if c["place"] == 2 \
            else f"baseline number {c['place']} by mean"
        out.append(f"{c['policy']} vs {c['baseline']} ({which}): {c['difference_pct']:+.1f}%{interval}; "
                   f"better on {c['better']}, equal on {c['equal']}, worse on {c['worse']} of {c['sequences']} "
                   f"sequences{overlap_note(c)}: {said}")
    return out
