"""A trained policy against the best baseline on the same sequences, paired: is the difference real?

Evaluation sequences differ in difficulty by orders of magnitude, so two means a few % apart may say nothing.
Pairing by sequence removes the difficulty: `comparisons` reports the difference of the means (as a % of the
baseline's), the 95% Student's t interval of the mean per-sequence difference in the same unit, and on how many
sequences the policy is better, equal and worse; `lines` words it, with a verdict. Used by `schedrl train`'s
final table, `schedrl evaluate` and the multi-seed protocol (`schedrl.training.report`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from schedrl.metrics import lower_is_better

_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(df: int) -> float:
    """Student's t 97.5% quantile for `df` degrees of freedom (two-sided 95% interval); 1.96 past 30."""
    return _T975[df - 1] if 1 <= df <= len(_T975) else 1.96


def comparisons(values: Mapping[str, Sequence[float]], trained: Sequence[str], metric: str) -> list[dict]:
    """Each of the `trained` columns of `values` (label -> per-sequence values) against the best of the others."""
    trained = [k for k in trained if k in values]
    baselines = [k for k in values if k not in trained]
    if not trained or not baselines:
        return []
    lower = lower_is_better(metric)
    best = (min if lower else max)(baselines, key=lambda k: float(np.mean(values[k])))
    base = np.asarray(values[best], dtype=float)
    out = []
    for label in trained:
        diff = np.asarray(values[label], dtype=float) - base
        n, scale = len(diff), abs(float(base.mean())) or 1.0
        half = t975(n - 1) * float(diff.std(ddof=1)) / math.sqrt(n) if n > 1 else 0.0
        better = int(np.sum(diff < 0 if lower else diff > 0))
        equal = int(np.sum(diff == 0))
        mean = float(diff.mean())
        out.append({"policy": label, "baseline": best, "sequences": n, "difference_pct": 100.0 * mean / scale,
                    "ci95_pct": None if n < 2 else [100.0 * (mean - half) / scale, 100.0 * (mean + half) / scale],
                    "better": better, "equal": equal, "worse": n - better - equal})
    return out


def lines(found: list[dict], metric: str) -> list[str]:
    """One sentence per comparison, ending in its verdict (better / worse / not distinguishable / the same)."""
    out = []
    for c in found:
        interval = c["ci95_pct"]  # None with one sequence: no interval, the verdict is the sign
        ahead = (c["difference_pct"] < 0) == lower_is_better(metric)
        verdict = ("the same schedule quality on every sequence" if c["equal"] == c["sequences"]
                   else "not distinguishable from it on these sequences" if interval and interval[0] <= 0 <= interval[1]
                   else "better" if ahead else "worse")
        interval = f"; 95% CI of the paired mean difference {interval[0]:+.1f}% to {interval[1]:+.1f}%" if interval else ""
        out.append(f"{c['policy']} vs {c['baseline']} (the best baseline): {c['difference_pct']:+.1f}%{interval}; "
                   f"better on {c['better']}, equal on {c['equal']}, worse on {c['worse']} of {c['sequences']} "
                   f"sequences: {verdict}")
    return out
