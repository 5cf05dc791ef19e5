"""`Evaluation.comparisons`: the trained policy against the best baseline, paired over the same sequences."""

from __future__ import annotations

import json

import numpy as np
import pytest

from schedrl.training.report import Evaluation

F1 = [350.0, 180.0, 150.0, 140.0, 330.0, 190.0, 400.0, 200.0, 340.0, 270.0]


def test_the_interval_is_the_ratio_of_means_paired_bootstrap():
    from schedrl.eval import paired

    rl = [v - 10.0 + (3.0 if i % 2 else -3.0) for i, v in enumerate(F1)]  # 10 better on average, +-3 noise
    e = Evaluation("t", "bsld", list(range(10)), 1024, {"FCFS": [9000.0] * 10, "F1": F1, "RL": rl})
    (c,) = e.comparisons()
    diff = np.subtract(rl, F1)
    assert c["baseline"] == "F1" and c["policy"] == "RL" and c["sequences"] == 10 and c["chosen"] == "best"
    assert c["difference_pct"] == pytest.approx(100 * diff.mean() / np.mean(F1))
    low, high = paired.ratio_interval(rl, F1)["interval"]
    assert c["ci95_pct"] == pytest.approx([100 * (low - 1), 100 * (high - 1)])
    assert c["ci95_pct"][0] < c["difference_pct"] < c["ci95_pct"][1] < 0
    assert (c["better"], c["equal"], c["worse"]) == (10, 0, 0)
    assert e.comparison_lines()[0].endswith(": better")  # the interval excludes 0


def test_a_policy_within_the_noise_is_called_not_distinguishable():
    rl = [v * (0.9 if i % 2 else 1.1) for i, v in enumerate(F1)]
    e = Evaluation("t", "bsld", list(range(10)), 1024, {"F1": F1, "SJF": [v * 1.3 for v in F1], "RL": rl})
    (c,) = e.comparisons()
    assert c["ci95_pct"][0] < 0 < c["ci95_pct"][1]
    assert (c["better"], c["worse"]) == (5, 5)
    text = e.to_text()
    assert "RL vs F1 (the best baseline on these sequences; no validation sequences chose it)" in text
    assert "not distinguishable" in text and "Wilcoxon signed-rank p = " in text
    assert "not distinguishable" in e.to_markdown()


def test_higher_is_better_metrics_and_a_worse_policy():
    util = [0.8, 0.7, 0.75, 0.82, 0.77, 0.71]
    e = Evaluation("t", "utilization", list(range(6)), 1024, {"FCFS": util, "RL": [u - 0.05 for u in util]})
    (c,) = e.comparisons()
    assert c["worse"] == 6 and c["difference_pct"] < 0
    assert e.comparison_lines()[0].endswith(": worse")


def test_identical_schedules_and_json():
    e = Evaluation("t", "bsld", [0, 1], 1024, {"F1": [2.0, 3.0], "RL": [2.0, 3.0], "RL online": [1.0, 2.0]})
    first, online = e.comparisons()
    assert first["equal"] == 2 and e.comparison_lines()[0].endswith("the same schedule quality on every sequence")
    assert online["policy"] == "RL online" and online["baseline"] == "F1"  # baselines exclude every trained column
    assert json.loads(json.dumps(e.to_dict()))["comparisons"][1]["better"] == 2


def test_named_trained_columns_and_no_comparison_without_a_policy():
    e = Evaluation("t", "slowdown", [0, 1], 140, {"SAF": [10.0, 11.0], "RLSCHERT": [9.0, 10.0], "DEEPRM": [12.0, 12.0]},
                   trained=("RLSCHERT", "DEEPRM"))
    assert [(c["policy"], c["baseline"]) for c in e.comparisons()] == [("RLSCHERT", "SAF"), ("DEEPRM", "SAF")]
    assert Evaluation("t", "bsld", [0], 1024, {"FCFS": [5.0], "SJF": [4.0]}).comparisons() == []
    assert "best baseline" not in Evaluation("t", "bsld", [0], 1024, {"FCFS": [5.0]}).to_text()


def test_one_sequence_has_no_interval_and_stays_strict_json():
    e = Evaluation("t", "bsld", [0], 1024, {"FCFS": [5.0], "RL": [4.0]})
    (c,) = e.comparisons()
    assert c["ci95_pct"] is None and c["better"] == 1
    assert e.comparison_lines()[0].endswith("of 1 sequences: too few windows for a verdict")
    assert "interval" not in e.comparison_lines()[0]
    json.dumps(e.to_dict(), allow_nan=False)  # no NaN in evaluation.json


def test_the_compare_table_pairs_each_checkpoint_per_backfill():
    from schedrl.eval.compare import Comparison
    from schedrl.sim import SimConfig

    c = Comparison("t", "bsld", [0, 1, 2], 1024, ["sjf", "f1", "checkpoint:/x"], ["none", "easy"], SimConfig(),
                   trained=["checkpoint:/x"])
    c.values = {("none", "sjf"): [5.0, 6.0, 7.0], ("none", "f1"): [4.0, 5.0, 6.0], ("none", "checkpoint:/x"): [4.0, 5.0, 6.0],
                ("easy", "sjf"): [2.0, 2.0, 2.0], ("easy", "f1"): [3.0, 3.0, 3.0], ("easy", "checkpoint:/x"): [2.5, 2.6, 2.4]}
    none, easy = c.comparisons()
    assert (none["backfill"], none["baseline"], none["equal"]) == ("none", "F1", 3)
    assert (easy["backfill"], easy["baseline"], easy["worse"]) == ("easy", "SJF", 3)
    text = c.to_text()
    assert "backfill none: RL vs F1" in text and "backfill easy: RL vs SJF" in text
    assert text.rstrip().endswith("worse on 3 of 3 sequences: too few windows for a verdict")
    assert c.to_dict()["comparisons"][1]["baseline"] == "SJF"
    # heuristics only (schedrl compare): no comparison
    c.trained = []
    assert c.comparisons() == [] and "best baseline" not in c.to_markdown() and "comparisons" not in c.to_dict()


def test_against_the_second_best_baseline():
    from schedrl.eval import paired

    sjf = [v * 1.3 for v in F1]
    rl = [v * 1.2 for v in F1]  # worse than F1, better than SJF on every sequence
    values = {"FCFS": [9000.0] * 10, "SJF": sjf, "F1": F1, "RL": rl}
    (best,) = paired.comparisons(values, ("RL",), "bsld")
    (second,) = paired.comparisons(values, ("RL",), "bsld", place=2)
    assert (best["baseline"], paired.verdict(best, "bsld")) == ("F1", "worse") and "place" not in best
    assert (second["baseline"], second["place"], second["better"]) == ("SJF", 2, 10)
    assert paired.verdict(second, "bsld") == "better"
    assert second["difference_pct"] == pytest.approx(100 * (np.mean(rl) - np.mean(sjf)) / np.mean(sjf))
    assert "(the second-best baseline on these sequences)" in paired.lines([second], "bsld")[0]
    # higher-is-better: the second best is the second highest
    util = {"A": [0.5, 0.6], "B": [0.8, 0.7], "C": [0.7, 0.65], "RL": [0.75, 0.7]}
    (c,) = paired.comparisons(util, ("RL",), "utilization", place=2)
    assert c["baseline"] == "C"
    # fewer baselines than the place: the last one
    assert paired.comparisons({"F1": F1, "RL": rl}, ("RL",), "bsld", place=2)[0]["baseline"] == "F1"
    with pytest.raises(ValueError, match="place must be >= 1"):
        paired.comparisons(values, ("RL",), "bsld", place=0)


def test_the_generalisation_matrix_pairs_each_policy_with_the_second_best():
    from schedrl.eval import paired
    from schedrl.training.report import generalisation_markdown

    def row(group, trace, per_sequence, rl):
        (second,) = paired.comparisons({**per_sequence, "RL": rl}, ("RL",), "bsld", place=2)
        means = {k: float(np.mean(v)) for k, v in per_sequence.items()}
        return {"group": group, "evaluated_on": trace, "rl": float(np.mean(rl)), **means,
                "best_heuristic": min(means, key=means.get), "baselines": list(means),
                "paired_vs_second_best": {**second, "verdict": paired.verdict(second, "bsld")}}

    a = {"F1": F1, "SJF": [v * 1.3 for v in F1], "FCFS": [9000.0] * 10}
    b = {"F1": [v * 2 for v in F1], "UNICEP": F1, "SJF": [v * 1.5 for v in F1]}
    evaluation = [row("lublin", "lublin_256", a, [v * 1.2 for v in F1]), row("lublin", "HPC2N", b, [v * 1.6 for v in F1]),
                  row("sdsc", "lublin_256", a, [v * 1.5 for v in F1]), row("sdsc", "HPC2N", b, F1)]
    text = "\n".join(generalisation_markdown(evaluation, ["lublin", "sdsc"]))
    assert "| lublin | " in text and "(vs SJF -7.7%, better)" in text  # 1.2 x F1 against 1.3 x F1
    assert "(vs SJF +6.7%, worse)" in text  # 1.6 against 1.5 on HPC2N
    assert "| second-best heuristic | " + f"{np.mean(a['SJF']):.2f} (SJF) | {np.mean(b['SJF']):.2f} (SJF) |" in text
    assert "| best heuristic | " + f"{np.mean(F1):.2f} (F1) | {np.mean(F1):.2f} (UNICEP) |" in text
    assert generalisation_markdown(evaluation[:1], ["lublin"]) == []  # one trace: no matrix


def test_overlapping_sequences_count_only_the_independent_ones_in_every_table():
    """`comparisons(independent=k)`: each bootstrap resample draws k windows, so the interval is wider than over all
    n; the comparison and its line say so. `Evaluation.independent` passes it on."""
    from schedrl.eval import paired

    rl = [v * (0.8 if i % 3 else 1.05) for i, v in enumerate(F1)]
    values = {"F1": F1, "SJF": [v * 1.3 for v in F1], "RL": rl}
    (naive,) = paired.comparisons(values, ["RL"], "bsld")
    (honest,) = paired.comparisons(values, ["RL"], "bsld", independent=2)
    assert "independent" not in naive and honest["independent"] == 2 and honest["sequences"] == 10
    assert honest["difference_pct"] == naive["difference_pct"]  # the estimate stays; only the interval widens
    low, high = paired.ratio_interval(rl, F1, independent=2)["interval"]
    assert honest["ci95_pct"] == pytest.approx([100 * (low - 1), 100 * (high - 1)])
    assert honest["verdict"] == "too few windows for a verdict"
    width = lambda c: c["ci95_pct"][1] - c["ci95_pct"][0]  # noqa: E731
    assert width(honest) > width(naive)
    assert paired.comparisons(values, ["RL"], "bsld", independent=10) == [naive]  # all of them: as before
    e = Evaluation("t", "bsld", list(range(10)), 1024, values, independent=2)
    assert e.comparisons() == [honest]
    assert "of 10 sequences (overlapping: interval from 2 disjoint windows):" in e.to_text()
    (one,) = paired.comparisons(values, ["RL"], "bsld", independent=1)
    assert one["ci95_pct"] is None
    line = paired.lines([one], "bsld")[0]
    assert "1 disjoint window, no interval" in line and line.endswith("too few windows for a verdict")


def test_the_judges_and_scenarios_count_the_disjoint_windows_that_fit_where_the_sequences_were_drawn():
    from schedrl.scenarios.judge import TraceJudge
    from schedrl.scenarios.scoring import independent_windows

    assert independent_windows(10, 1024, 2250) == 2 and independent_windows(2, 1024, 2250) == 2
    assert independent_windows(3, 1024, 100) == 1 and independent_windows(10, 100, 1000) == 10
    judge = TraceJudge(load=lambda: None, metric="bsld", baselines=(), sequence_length=64,
                       held_out=lambda n: (700, n))  # 1000 jobs: validation 700..774, evaluation 775..999
    data = range(1000)
    assert judge.independent(data, [775, 800, 850, 900], 100) == 2  # drawn in the 225-job evaluation zone
    assert judge.independent(data, [775, 900], 100) == 2
    assert judge.independent(data, [0, 10, 20, 30, 64], 64) == 2  # no zone holds them: the 128 jobs they span
    assert judge.independent(data, [0, 200, 400], 64) == 3


def test_a_scenario_table_pairs_with_its_reference_and_names_a_zoo_policy():
    from schedrl.eval.compare import Comparison
    from schedrl.eval.policies import policy_label, trained_labels
    from schedrl.sim import SimConfig

    c = Comparison("t", "bsld", list(range(6)), 1024, ["SJF", "F1", "RL"], ["none"], SimConfig(), trained=["RL"],
                   labels={"SJF": "SJF", "F1": "F1", "RL": "RL"})
    c.values = {("none", "SJF"): [5.0, 6.0, 7.0, 5.0, 6.0, 7.0], ("none", "F1"): [6.0, 7.0, 8.0, 6.0, 7.0, 8.0],
                ("none", "RL"): [4.0, 5.0, 6.0, 4.0, 5.0, 6.0]}
    assert c.comparisons()[0]["baseline"] == "SJF"  # no reference: the best on these sequences, and said so
    assert "no validation sequences chose it" in c.to_text()
    c.judged("F1", trained_labels(["zoo:inspector-lublin1-s0"], ["RL"]))
    (found,) = c.comparisons()
    assert (found["baseline"], found["chosen"], found["policy"]) == ("F1", "reference", "inspector-lublin1-s0")
    assert "inspector-lublin1-s0 vs F1 (the scenario's reference, chosen on its validation sequences)" in c.to_text()
    assert c.to_text().splitlines()[1].split()[-1] == "inspector-lublin1-s0"  # the column, not RL
    assert trained_labels(["runs/x/checkpoint_000003"], ["RL"]) == {}  # a checkpoint directory keeps its label
    assert policy_label("checkpoint:zoo:rlscheduler-default-s0") == "rlscheduler-default-s0"
    assert policy_label("checkpoint:/runs/x") == "RL"
