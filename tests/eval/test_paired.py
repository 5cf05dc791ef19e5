"""`schedrl.eval.paired`: the ratio of means with its paired bootstrap interval, the Wilcoxon test beside it, the
verdict and the minimum detectable effect, on small cases checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm, t, wilcoxon

from schedrl.eval import paired


def test_a_constant_ratio_has_a_point_interval_and_the_smallest_p():
    ref = [10.0, 200.0, 35.0, 4.0, 80.0, 12.0]
    c = paired.against({"p": [2 * v for v in ref], "ref": ref}, "p", "ref", "bsld")
    assert c["ratio"] == pytest.approx(2.0) and c["difference_pct"] == pytest.approx(100.0)
    assert c["ci95_pct"] == pytest.approx([100.0, 100.0])  # every resample's ratio is 2: no spread
    assert c["p"] < 1e-12 and (c["worse"], c["verdict"]) == (6, "worse") and c["mde_pct"] == pytest.approx(0.0, abs=1e-9)
    assert c["wilcoxon_p"] == pytest.approx(0.03125) and c["rank_test_disagrees"] is False  # 2 / 2^6, exact


def test_two_windows_hand_enumerated():
    # resamples of 2 windows from 2: ratio 1 (1 in 4), 1.5 (2 in 4) or 2 (1 in 4); the standard error of log R is
    # their log's spread times sqrt(2 / 1)
    logs = np.log([1.0, 1.5, 1.5, 2.0])
    se = np.sqrt(np.mean((logs - logs.mean()) ** 2)) * np.sqrt(2)
    r = paired.ratio_interval([1.0, 2.0], [1.0, 1.0])
    assert r["ratio"] == 1.5 and r["log_half"] == pytest.approx(t.ppf(0.975, 1) * se, rel=0.03)
    assert r["interval"][0] == pytest.approx(1.5 * np.exp(-r["log_half"])) and r["interval"][0] > 0
    assert r["p"] == pytest.approx(2 * t.sf(np.log(1.5) / se, 1), rel=0.03)
    c = paired.against({"p": [1.0, 2.0], "ref": [1.0, 1.0]}, "p", "ref", "bsld")
    assert c["ci95_pct"][0] > -100 and c["verdict"] == paired.TOO_FEW


def test_the_ratio_is_the_ratio_of_the_means_not_the_mean_of_the_ratios():
    values = {"p": [1.0, 1.0, 1.0, 1.0, 1.0, 100.0], "ref": [2.0, 2.0, 2.0, 2.0, 2.0, 50.0]}
    c = paired.against(values, "p", "ref", "bsld")
    assert c["ratio"] == pytest.approx(105 / 60) and c["difference_pct"] == pytest.approx(75.0)
    assert (c["better"], c["worse"]) == (5, 1)


def test_the_lightly_loaded_trace_shape_no_bound_below_minus_100_and_a_verdict():
    # the shape: 20 windows, 11 equal, 8 worse (some by far), 1 better; a t interval on the raw differences
    # divided by the reference's mean gave [-285.8%, +1,081.9%] here
    ref = [1.0] * 11 + [2.0, 1.5, 1.2, 3.0, 1.1, 2.5, 1.3, 4.0, 1.6]
    pol = [1.0] * 11 + [40.0, 3.0, 30.0, 90.0, 2.0, 5.0, 1.0, 60.0, 8.0]
    c = paired.against({"p": pol, "ref": ref}, "p", "ref", "bsld")
    assert (c["better"], c["equal"], c["worse"]) == (1, 11, 8)
    assert c["ci95_pct"][0] > -100 and c["ci95_pct"][0] < c["difference_pct"] < c["ci95_pct"][1]
    assert c["verdict"] == "worse" and c["wilcoxon_p"] < 0.05 and not c["rank_test_disagrees"]
    d = np.subtract(pol, ref)
    assert c["wilcoxon_p"] == pytest.approx(wilcoxon(d).pvalue)  # ties left out, as Wilcoxon's own rule


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 12.0), st.floats(0.0, 12.0)), min_size=2, max_size=30),
       st.integers(1, 30), st.sampled_from(["bsld", "utilization"]))
def test_no_bound_below_minus_100_and_the_verdict_is_the_intervals(logs, independent, metric):
    a = [math.expm1(x) for x, _ in logs]  # positive, heavy-tailed, zeros included
    b = [math.expm1(y) for _, y in logs]
    c = paired.against({"a": a, "b": b}, "a", "b", metric, independent=independent)
    if c["ci95_pct"] is not None:
        assert c["ci95_pct"][0] >= -100.0 and c["ci95_pct"][0] <= c["ci95_pct"][1]
        excludes = not (c["ci95_pct"][0] <= 0 <= c["ci95_pct"][1])
        assert excludes == (c["p"] < 0.05)  # the p-value the board corrects is the interval's own
        if c["independent"] >= paired.MIN_WINDOWS and c["equal"] < c["sequences"]:
            assert (c["verdict"] in ("better", "worse")) == excludes
    if c["independent"] < paired.MIN_WINDOWS and c["equal"] < c["sequences"]:
        assert c["verdict"] == paired.TOO_FEW


def test_fewer_than_six_windows_is_too_few_for_a_verdict():
    ref = [100.0, 120.0, 90.0, 140.0, 110.0]
    c = paired.against({"p": [v / 2 for v in ref], "ref": ref}, "p", "ref", "bsld")
    assert c["better"] == 5 and c["verdict"] == "too few windows for a verdict"
    assert c["wilcoxon_p"] == pytest.approx(0.0625)  # the signed-rank test's floor at 5 pairs: 2 / 2^5
    six = paired.against({"p": [50.0] + [v / 2 for v in ref], "ref": [100.0] + ref}, "p", "ref", "bsld")
    assert six["verdict"] == "better"
    ten = {"p": [v / 2 for v in ref * 2], "ref": ref * 2}
    assert paired.against(ten, "p", "ref", "bsld", independent=5)["verdict"] == paired.TOO_FEW  # overlapping
    assert paired.against(ten, "p", "ref", "bsld")["verdict"] == "better"
    assert paired.against({"p": [1.0], "ref": [2.0]}, "p", "ref", "bsld")["verdict"] == paired.TOO_FEW
    line = paired.lines(paired.comparisons({"p": [v / 2 for v in ref], "ref": ref}, ["p"], "bsld"), "bsld")[0]
    assert line.endswith(": too few windows for a verdict")


def test_ties_on_every_window_are_the_same_and_most_windows_tied_still_count():
    same = paired.against({"p": [3.0] * 8, "ref": [3.0] * 8}, "p", "ref", "wait")
    assert same["verdict"] == "the same" and same["ci95_pct"] == [0.0, 0.0] and same["wilcoxon_p"] == 1.0
    zeros = paired.against({"p": [0.0] * 8, "ref": [0.0] * 8}, "p", "ref", "wait")  # no wait anywhere: ratio 1
    assert zeros["ratio"] == 1.0 and zeros["verdict"] == "the same"
    tied = {"p": [0.0] * 14 + [5.0, 9.0, 4.0, 7.0, 8.0, 6.0], "ref": [0.0] * 14 + [1.0, 2.0, 1.0, 1.5, 2.0, 1.0]}
    c = paired.against(tied, "p", "ref", "wait")
    assert c["equal"] == 14 and c["verdict"] == "worse" and c["ci95_pct"][0] > 0


def test_a_mean_carried_by_one_window_is_flagged_where_the_rank_test_disagrees():
    ref = [100.0, 110.0, 90.0, 95.0, 105.0, 98.0, 102.0, 99.0, 101.0, 97.0, 103.0, 1000.0]
    pol = [v * 0.95 for v in ref[:11]] + [3000.0]  # better on 11 of 12, far worse on the heavy one
    c = paired.against({"p": pol, "ref": ref}, "p", "ref", "bsld")
    assert c["better"] == 11 and c["wilcoxon_p"] < 0.05 and c["difference_pct"] > 0
    assert c["verdict"] in ("not distinguishable", "worse") and c["rank_test_disagrees"]  # ranks say better
    assert "which disagrees" in paired.lines([c], "bsld")[0] and "(rank test disagrees)" in paired.short(c)


def test_overlapping_windows_widen_the_interval_and_weaken_the_rank_test():
    rng = np.random.default_rng(3)
    ref = rng.lognormal(4, 1, 12)
    pol = ref * rng.lognormal(0.1, 0.2, 12)
    values = {"p": list(pol), "ref": list(ref)}
    naive, honest = paired.against(values, "p", "ref", "bsld"), paired.against(values, "p", "ref", "bsld", independent=6)
    width = lambda c: c["ci95_pct"][1] - c["ci95_pct"][0]  # noqa: E731
    assert honest["difference_pct"] == naive["difference_pct"] and width(honest) > width(naive)
    assert honest["wilcoxon_p"] > naive["wilcoxon_p"] and honest["mde_pct"] > naive["mde_pct"] > 0
    d = pol - ref
    z = wilcoxon(d, method="approx").zstatistic * math.sqrt(6 / 12)
    assert honest["wilcoxon_p"] == pytest.approx(2 * norm.sf(abs(z)))


def test_the_mde_is_the_t_formula_on_the_log_ratio_scale():
    rng = np.random.default_rng(5)
    ref = rng.uniform(100, 200, 12)
    values = {"ref": list(ref), "p": list(ref * rng.lognormal(0.05, 0.1, 12))}
    c = paired.against(values, "p", "ref", "bsld")
    r = paired.ratio_interval(values["p"], values["ref"])
    half = (math.log(r["interval"][1]) - math.log(r["interval"][0])) / 2
    assert r["log_half"] == pytest.approx(half) and math.log(r["ratio"]) == pytest.approx(math.log(r["interval"][0]) + half)
    assert c["mde_pct"] == pytest.approx(100 * math.expm1((t.ppf(0.975, 11) + t.ppf(0.8, 11)) * half / t.ppf(0.975, 11)))
    assert paired.against(values, "p", "ref", "bsld", independent=1)["mde_pct"] is None


def test_higher_is_better_metrics_turn_the_verdict_around():
    util = [0.8, 0.7, 0.75, 0.82, 0.78, 0.74, 0.81]
    c = paired.against({"p": [u * 0.9 for u in util], "ref": util}, "p", "ref", "utilization")
    assert c["worse"] == 7 and c["verdict"] == "worse" and c["ci95_pct"][1] < 0


def test_the_bootstrap_is_seeded_and_the_interval_reproducible():
    rng = np.random.default_rng(11)
    values = {"p": list(rng.lognormal(3, 1.5, 15)), "ref": list(rng.lognormal(3, 1.5, 15))}
    first = paired.against(values, "p", "ref", "bsld")
    paired._draws.cache_clear()
    paired.against({"x": [1.0, 2.0, 3.0], "y": [2.0, 2.0, 2.0]}, "x", "y", "bsld")  # another shape in between
    assert paired.against(values, "p", "ref", "bsld") == first


def test_a_named_reference_is_used_and_said_otherwise_the_best_on_these_sequences():
    values = {"F1": [10.0, 12.0, 9.0, 11.0, 10.0, 13.0], "SJF": [9.0, 11.0, 8.0, 10.0, 9.5, 12.0],
              "p": [9.5, 11.0, 9.0, 10.0, 9.0, 12.0]}
    (fixed,) = paired.comparisons(values, ["p"], "bsld", reference="F1")
    (best,) = paired.comparisons(values, ["p"], "bsld")
    assert (fixed["baseline"], fixed["chosen"]) == ("F1", "reference")
    assert (best["baseline"], best["chosen"]) == ("SJF", "best")
    assert "(the scenario's reference, chosen on its validation sequences)" in paired.lines([fixed], "bsld")[0]
    assert "(the best baseline on these sequences; no validation sequences chose it)" in paired.lines([best], "bsld")[0]
    (missing,) = paired.comparisons(values, ["p"], "bsld", reference="WFP3")  # not a column: the best, said so
    assert (missing["chosen"], missing["baseline"], missing["reference_absent"]) == ("best", "SJF", "WFP3")
    assert "the scenario's reference, WFP3, is not in this table" in paired.lines([missing], "bsld")[0]


def test_a_reference_that_never_waits_has_no_ratio_and_the_rank_test_decides():
    ref = [0.0] * 12
    pol = [0.0] * 4 + [30.0, 12.0, 50.0, 8.0, 41.0, 3.0, 22.0, 17.0]  # waits where the reference never does
    c = paired.against({"p": pol, "ref": ref}, "p", "ref", "wait")
    assert c["ratio"] is None and c["difference_pct"] is None and c["ci95_pct"] is None
    assert c["verdict_from"] == "wilcoxon" and c["p"] == c["wilcoxon_p"] < 0.05 and c["verdict"] == "worse"
    assert "an infinite ratio" in paired.lines([c], "wait")[0] and paired.short(c).startswith("ref an infinite ratio")
    swapped = paired.against({"p": ref, "ref": pol}, "p", "ref", "wait")  # the policy never waits: ratio 0
    assert swapped["difference_pct"] == -100.0 and swapped["ci95_pct"] is None and swapped["verdict"] == "better"
    # a reference that waits on one window, a policy on another: some resamples divide by 0, so no interval
    apart = paired.against({"p": [0.0] * 7 + [5.0], "ref": [3.0] + [0.0] * 7}, "p", "ref", "wait")
    assert apart["ci95_pct"] is None and apart["verdict_from"] == "wilcoxon" and apart["verdict"] == "not distinguishable"
