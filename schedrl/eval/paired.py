"""A method against a reference on the same sequences, paired: is the difference real?

Evaluation sequences differ in difficulty by orders of magnitude, so two means a few % apart may say nothing, and the
metrics (bounded slowdown, wait, slowdown) are positive and heavy-tailed: one window can weigh more than the other
nineteen. A comparison (`against`, `comparisons`) therefore reports

- the ratio of the means (method / reference; `difference_pct` is 100 x (ratio - 1)) with a paired bootstrap 95%
  interval (`ratio_interval`): the windows are resampled with replacement, the same ones for both columns, the
  spread of the resampled log-ratios is the standard error of log R, and the interval is exp(log R +- t x se). A
  ratio is positive, so no bound falls below -100%; its p-value (`p`, below 0.05 exactly where the interval excludes
  1) is what the leaderboard's multiple-comparison correction consumes;
- a paired Wilcoxon signed-rank test (`wilcoxon_p`) beside it, and `rank_test_disagrees` where the two tests come to
  different conclusions at 5% (a few windows carrying the mean while most go the other way, or the reverse);
- on how many sequences the method is better, equal and worse, and the verdict, from the ratio interval alone:
  "the same" (equal on every sequence), "better"/"worse" (the interval excludes 1), "not distinguishable" (it holds 1)
  or, with fewer than `MIN_WINDOWS` independent windows, "too few windows for a verdict" (no rank test over 5 pairs
  reaches 5%, and a bootstrap over so few windows knows nothing of the tails it has not seen);
- its minimum detectable effect (`mde_pct`): the ratio the comparison would detect with 80% power at the 5% level.

Where one column's mean is 0 and the other's is not, over all windows or over a resample (no wait at all under one
of them, as on a lightly loaded trace), the ratio has no interval (and where the reference's is 0, no value:
`difference_pct` None): the rank test gives the verdict and `p` (`verdict_from`: "wilcoxon").

docs/reference/metrics.md says why this interval rather than a t interval (which went below -100% on heavy-tailed
windows) or one on per-window log-ratios (a window of zero wait has none, and their mean is not the ratio of means).

Trace windows that must share jobs (ten 1,024-job windows in Lublin-1's 2,250-job evaluation zone) are not independent
samples: the callers pass `independent` (`Judge.independent`, `scoring.DrawnSequences.independent`), and the bootstrap
then draws only that many windows per resample (an m-out-of-n bootstrap, as if only the disjoint windows that fit had
been drawn) and the rank test's z is shrunk by sqrt(independent / sequences). A comparison says so (`independent` in
its dict, "overlapping: interval from 2 disjoint windows" in its line).

`comparisons` pairs each trained column with the `reference` its caller names (a scenario's, chosen on its validation
sequences) or, where there is none, with the best of the other columns on these sequences, and says which (`chosen`).
Used by `schedrl train`'s final table, `schedrl evaluate`, `compare`, the multi-seed protocol
(`schedrl.training.report`), the leaderboard and `inspector score`. The bootstrap is seeded (`SEED`): the same values
give the same interval on every run.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from schedrl.metrics import lower_is_better

POWER = 0.8
"""The power the minimum detectable effect is stated for (with the two-sided 5% level of every interval)."""
RESAMPLES = 9999
"""Bootstrap resamples per comparison: the standard error they estimate varies by about 1 / sqrt(2 x 9,999), 0.7%,
from one seed to another."""
SEED = 20261128
"""The bootstrap's seed (every comparison draws its resamples from a generator seeded with it)."""
MIN_WINDOWS = 6
"""Independent windows a verdict needs: with 5 pairs the exact signed-rank test's smallest two-sided p is 2/32."""
TOO_FEW = "too few windows for a verdict"

CHOSEN = {"reference": "the scenario's reference, chosen on its validation sequences",
          "best": "the best baseline on these sequences; no validation sequences chose it"}
"""How a comparison's baseline was chosen (`chosen` in its dict), as its line says it."""


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


@functools.lru_cache(maxsize=16)
def _draws(n: int, k: int) -> np.ndarray:
    """The resampled window indices (RESAMPLES x k, from n windows), the same for every comparison of that shape."""
    draws = np.random.default_rng([SEED, n, k]).integers(0, n, size=(RESAMPLES, k), dtype=np.int32)
    draws.setflags(write=False)
    return draws


def _log_ratios(method: np.ndarray, reference: np.ndarray, k: int) -> np.ndarray:
    """The log of the ratio of the means of every bootstrap resample (k windows each, with replacement, the same ones
    for both columns); 0/0 counts as ratio 1 (both columns zero on every window drawn), x/0 and 0/x as +-infinity."""
    idx = _draws(len(method), k)
    top, bottom = method[idx].mean(axis=1), reference[idx].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where((top == 0) & (bottom == 0), 0.0, np.log(top) - np.log(bottom))


def ratio_interval(method: Sequence[float], reference: Sequence[float], independent: int | None = None) -> dict:
    """The ratio of the means R of two paired columns of positive values, its 95% interval and two-sided p-value for
    "R = 1", and the interval's half-width on the log scale (`log_half`, what the MDE is read from).

    The interval is exp(log R +- t_{0.975,k-1} x se), se the paired bootstrap's standard error of log R: the standard
    deviation of log R over `RESAMPLES` resamples of k windows (the same windows for both columns; k = `independent`
    where fewer than the windows, an m-out-of-n bootstrap), times sqrt(k / (k - 1)) (a resample's spread divides by k,
    not k - 1). p = 2 P(T_{k-1} > |log R| / se): the interval excludes 1 exactly where p < 0.05, and p has no floor,
    as a count of resamples past 1 would (Benjamini-Hochberg over a hundred comparisons needs p below 0.0005). A
    resample whose mean is 0 in one column only makes the standard error infinite: no interval. With under 2 windows
    there is none either."""
    a, b = np.asarray(method, dtype=float), np.asarray(reference, dtype=float)
    n = len(a)
    k = n if independent is None else max(1, min(n, int(independent)))
    mean_a, mean_b = float(a.mean()), float(b.mean())
    ratio = mean_a / mean_b if mean_b > 0 else (math.inf if mean_a > 0 else 1.0)
    none = {"ratio": ratio, "interval": None, "p": None, "log_half": None}
    if k < 2 or n < 2 or not 0 < ratio < math.inf:
        return none
    logs = _log_ratios(a, b, k)
    if not np.all(np.isfinite(logs)):
        return none
    se = float(logs.std(ddof=1)) * math.sqrt(k / (k - 1))
    half = t975(k - 1) * se
    centre = math.log(ratio)
    if se == 0:
        p = 1.0 if centre == 0 else 0.0
    else:
        from scipy.stats import t

        p = float(min(1.0, 2 * t.sf(abs(centre) / se, k - 1)))
    high = math.exp(centre + half) if centre + half < 709 else math.inf  # past exp(709): beyond a float
    return {"ratio": ratio, "interval": [math.exp(centre - half), high], "p": p, "log_half": half}


def rank_direction(method: Sequence[float], reference: Sequence[float]) -> int:
    """The sign of the signed-rank sum of method - reference (+1: the method's values are the larger ones, ties left
    out, average ranks for equal magnitudes; 0 where it balances)."""
    from scipy.stats import rankdata

    d = np.asarray(method, dtype=float) - np.asarray(reference, dtype=float)
    d = d[d != 0]
    return int(np.sign(np.sum(np.sign(d) * rankdata(np.abs(d))))) if len(d) else 0


def wilcoxon(method: Sequence[float], reference: Sequence[float], independent: int | None = None) -> float | None:
    """The two-sided p-value of the paired Wilcoxon signed-rank test of the per-window differences (scipy's, windows
    that tie left out as Wilcoxon's own rule does); 1 where every window ties, None with under 2 windows.
    `independent` (fewer than the windows): the normal approximation with its z shrunk by sqrt(independent / windows),
    the share of the windows that are independent samples."""
    from scipy.stats import norm
    from scipy.stats import wilcoxon as signed_rank

    d = np.asarray(method, dtype=float) - np.asarray(reference, dtype=float)
    n = len(d)
    if n < 2:
        return None
    if not np.any(d):
        return 1.0
    k = n if independent is None else max(1, min(n, int(independent)))
    if k >= n:
        return float(signed_rank(d).pvalue)
    z = float(signed_rank(d, method="approx").zstatistic) * math.sqrt(k / n)
    return float(2 * norm.sf(abs(z)))


def mde_pct(log_half: float | None, k: int, power: float = POWER) -> float | None:
    """The minimum detectable effect of a comparison over `k` independent windows whose 95% ratio interval spans
    +-`log_half` on the log scale: the true ratio exp(x), x = (t_{0.975,k-1} + t_{power,k-1}) x log_half /
    t_{0.975,k-1}, that a 5% test of this precision detects with probability `power` (the t formula of a paired test,
    on the log of the ratio), as a % increase, 100 (exp(x) - 1) (the decrease it detects, 100 (1 - exp(-x)), is
    smaller). None without an interval."""
    if log_half is None or not math.isfinite(log_half) or k < 2:
        return None
    x = (t975(k - 1) + t_quantile(power, k - 1)) * log_half / t975(k - 1)
    return 100.0 * math.expm1(x) if x < 700 else None  # past exp(700): no effect a reader could use


def _compare(label: str, baseline: str, method: np.ndarray, base: np.ndarray, metric: str,
             independent: int | None) -> dict:
    """`label`'s column against `baseline`'s (see the module's docstring), with its verdict."""
    n = len(method)
    k = n if independent is None else max(1, min(n, int(independent)))
    diff = method - base
    lower = lower_is_better(metric)
    better = int(np.sum(diff < 0 if lower else diff > 0))
    equal = int(np.sum(diff == 0))
    r = ratio_interval(method, base, k)
    w = wilcoxon(method, base, k)
    finite = math.isfinite(r["ratio"])
    c = {"policy": label, "baseline": baseline, "sequences": n, "independent": k,
         "ratio": r["ratio"] if finite else None, "difference_pct": 100.0 * (r["ratio"] - 1) if finite else None,
         "ci95_pct": None if r["interval"] is None or not math.isfinite(r["interval"][1])
         else [100.0 * (r["interval"][0] - 1), 100.0 * (r["interval"][1] - 1)],
         "p": r["p"], "wilcoxon_p": w, "mde_pct": mde_pct(r["log_half"], k),
         "better": better, "equal": equal, "worse": n - better - equal}
    ranks_say = None if w is None else "not distinguishable" if w >= 0.05 else \
        "worse" if (rank_direction(method, base) > 0) == lower else "better"
    no_ratio = r["p"] is None and min(n, k) >= 2  # a mean of 0 in one column only, over all windows or a resample
    if no_ratio:  # so the rank test decides
        c["p"], c["verdict_from"] = w, "wilcoxon"
    said = verdict(c, metric)
    if said == "not distinguishable" and no_ratio and ranks_say is not None:
        said = ranks_say
    c["verdict"] = said
    if said in ("better", "worse", "not distinguishable") and ranks_say is not None and not no_ratio:
        c["rank_test_disagrees"] = ranks_say != said
    return c


def verdict(c: dict, metric: str) -> str:
    """"the same" (equal on every sequence); "too few windows for a verdict" (fewer than `MIN_WINDOWS` independent
    windows); "better" or "worse" where the 95% ratio interval excludes 1 (the difference's interval excludes 0);
    "not distinguishable" where it holds it."""
    if c["equal"] == c["sequences"]:
        return "the same"
    if c.get("independent", c["sequences"]) < MIN_WINDOWS:
        return TOO_FEW
    interval = c["ci95_pct"]
    if not interval or interval[0] <= 0 <= interval[1]:
        return "not distinguishable"
    return "better" if (interval[1] < 0) == lower_is_better(metric) else "worse"


def comparisons(values: Mapping[str, Sequence[float]], trained: Sequence[str], metric: str, place: int = 1,
                independent: int | None = None, reference: str | None = None) -> list[dict]:
    """Each of the `trained` columns of `values` (label -> per-sequence values) against `reference` (a scenario's,
    chosen on its validation sequences: `chosen` "reference") or, without one, the best of the others on these
    sequences (`place` 2: the second best, e.g. RLScheduler Table VII's bar; the last one where there are fewer;
    `chosen` "best", and `reference_absent` naming a `reference` that is not among the columns). Each carries its
    `verdict`.

    `independent`: how many of the sequences count as independent samples where they overlap (from `Judge.independent`
    or `schedrl.scenarios.scoring.DrawnSequences.independent`); the interval and the rank test then count only that
    many."""
    trained = [k for k in trained if k in values]
    baselines = [k for k in values if k not in trained]
    if not trained or not baselines:
        return []
    if place < 1:
        raise ValueError(f"place must be >= 1 (1: the best baseline), got {place}")
    if reference is not None and place == 1 and reference in baselines:
        best, chosen = reference, "reference"
    else:
        lower = lower_is_better(metric)
        ranked = sorted(baselines, key=lambda k: float(np.mean(values[k])), reverse=not lower)  # stable on ties
        best, chosen = ranked[min(place, len(ranked)) - 1], "best"
    base = np.asarray(values[best], dtype=float)
    out = []
    for label in trained:
        c = _compare(label, best, np.asarray(values[label], dtype=float), base, metric, independent)
        if c["independent"] == c["sequences"]:  # said only where the windows overlap (`against` always says it)
            del c["independent"]
        absent = {"reference_absent": reference} if reference is not None and chosen == "best" and place == 1 else {}
        out.append({**c, "chosen": chosen, **absent, **({"place": place} if place > 1 else {})})
    return out


def against(values: Mapping[str, Sequence[float]], label: str, baseline: str, metric: str,
            independent: int | None = None) -> dict:
    """`label`'s column against the given `baseline` column (a scenario's fixed reference), with its `verdict`.

    `independent`: how many of the sequences are independent samples when they overlap (windows of a zone shorter than
    their total length share jobs, so their differences are correlated): each bootstrap resample draws that many, as
    if only the disjoint windows that fit in the zone had been drawn. Conservative (it ignores what the extra windows
    do add), never optimistic as an interval counting all of them would be."""
    return _compare(label, baseline, np.asarray(values[label], dtype=float),
                    np.asarray(values[baseline], dtype=float), metric, independent)


def against_second_best(values: Mapping[str, Sequence[float]], label: str, metric: str,
                        independent: int | None = None) -> dict:
    """`label`'s column against the second best of the others (RLScheduler Table VII's bar), with its `verdict`."""
    (c,) = comparisons(values, (label,), metric, place=2, independent=independent)
    return c


def _said(c: dict, metric: str) -> str:
    return c.get("verdict") or verdict(c, metric)


def percent(value: float | None) -> str:
    """"+9.3%", or "an infinite ratio" for None (a reference whose mean is 0)."""
    return "an infinite ratio" if value is None else f"{value:+.1f}%"


def short(c: dict, interval: bool = True) -> str:
    """"SJF +9.3% [+2.1, +16.5], worse" for a comparison carrying its `verdict` (without the interval: "SJF +9.3%,
    worse"); "(rank test disagrees)" after it where the Wilcoxon test comes to the other conclusion."""
    bounds = f" [{c['ci95_pct'][0]:+.1f}, {c['ci95_pct'][1]:+.1f}]" if interval and c["ci95_pct"] else ""
    flag = " (rank test disagrees)" if c.get("rank_test_disagrees") else ""
    return f"{c['baseline']} {percent(c['difference_pct'])}{bounds}, {c['verdict']}{flag}"


def overlap_note(c: dict) -> str:
    """" (overlapping: interval from 2 disjoint windows)" for a comparison whose sequences overlap, else ""."""
    k = c.get("independent", c["sequences"])
    if k >= c["sequences"]:
        return ""
    return f" (overlapping: interval from {k} disjoint windows)" if k > 1 else " (overlapping: 1 disjoint window, no interval)"


def rank_note(c: dict) -> str:
    """"; Wilcoxon signed-rank p = 0.031" (", which disagrees" where it does), or "" without the test."""
    p = c.get("wilcoxon_p")
    if p is None:
        return ""
    return f"; Wilcoxon signed-rank p = {p:.3g}" + (", which disagrees" if c.get("rank_test_disagrees") else "")


_LONG = {"the same": "the same schedule quality on every sequence",
         "not distinguishable": "not distinguishable from it on these sequences"}


def lines(found: list[dict], metric: str) -> list[str]:
    """One sentence per comparison: how its baseline was chosen, the ratio's interval, the rank test, the counts and
    the verdict (better / worse / not distinguishable / the same / too few windows for a verdict)."""
    out = []
    for c in found:
        said = _LONG.get(_said(c, metric), _said(c, metric))
        interval = c["ci95_pct"]
        interval = (f"; 95% bootstrap interval of the ratio of means {interval[0]:+.1f}% to {interval[1]:+.1f}%"
                    if interval else "")
        if c.get("place", 1) == 2:
            which = "the second-best baseline on these sequences"
        elif c.get("place", 1) > 2:
            which = f"baseline number {c['place']} by mean"
        elif c.get("reference_absent"):
            which = f"the best baseline on these sequences; the scenario's reference, {c['reference_absent']}, is not in this table"
        else:
            which = CHOSEN[c.get("chosen", "best")]
        out.append(f"{c['policy']} vs {c['baseline']} ({which}): {percent(c['difference_pct'])}{interval}"
                   f"{rank_note(c)}; better on {c['better']}, equal on {c['equal']}, worse on {c['worse']} of "
                   f"{c['sequences']} sequences{overlap_note(c)}: {said}")
    return out
