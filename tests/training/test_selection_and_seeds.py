"""Checkpoint selection on validation, time to beat the best heuristic, and the multi-seed summary
(`evaluate.each_trial`), on hand-made results whose answers are known."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from schedrl.training.driver import first_result_entries, selected_checkpoint
from schedrl.training.report import seed_summary, t975, time_to_beat
from schedrl.training.sweep import EvaluateSpec, TrainingOptions


def _result(validations, path="ckpt"):
    checkpoints = [(SimpleNamespace(path=f"{path}_{i}"), {"training_iteration": i + 1, "schedrl": {"validation": v}})
                   for i, v in enumerate(validations)]
    return SimpleNamespace(best_checkpoints=checkpoints, checkpoint=SimpleNamespace(path=f"{path}_last"))


def test_selected_checkpoint_is_the_best_validation_and_ties_go_to_the_later_one():
    spec = SimpleNamespace(metric="schedrl/validation", mode="min")
    path, phrase = selected_checkpoint(spec, _result([300.0, 250.0, 260.0, 250.0, float("nan")]))
    assert path == "ckpt_3" and phrase == "checkpoint of iteration 4 (best validation 250.00)"
    spec_max = SimpleNamespace(metric="schedrl/validation", mode="max")
    assert selected_checkpoint(spec_max, _result([0.5, 0.7, 0.6]))[0] == "ckpt_1"
    # no validation scores: the last checkpoint
    assert selected_checkpoint(spec, _result([])) == ("ckpt_last", "last checkpoint")


def test_time_to_beat_is_the_first_strictly_better_iteration():
    df = pd.DataFrame({"training_iteration": [1, 2, 3, 4], "time_total_s": [10.0, 20.0, 30.0, 40.0],
                       "schedrl/validation": [400.0, 300.0, 250.0, 200.0]})
    assert time_to_beat(df, "schedrl/validation", "min", 300.0) == (3, 30.0)  # 300 only ties
    assert time_to_beat(df, "schedrl/validation", "min", 100.0) is None
    assert time_to_beat(df, "schedrl/validation", "max", 350.0) == (1, 10.0)
    assert time_to_beat(df, "schedrl/validation", "min", None) is None
    assert time_to_beat(None, "schedrl/validation", "min", 1.0) is None


def test_first_result_entries_reads_the_flattened_warm_start_report():
    df = pd.DataFrame({"schedrl/warm_start/teacher": ["sjf", np.nan], "schedrl/warm_start/agreement": [0.97, np.nan],
                       "training_iteration": [1, 2]})
    assert first_result_entries(df, "schedrl/warm_start/") == {"teacher": "sjf", "agreement": 0.97}
    assert first_result_entries(df, "schedrl/nothing/") == {}
    nested = pd.DataFrame({"schedrl/warm_start/teacher": ["f1"], "schedrl/warm_start/clone_values/f1": [207.5],
                           "schedrl/warm_start/clone_values/sjf": [np.float64(250.5)]})
    assert first_result_entries(nested, "schedrl/warm_start/") == {"teacher": "f1",
                                                                   "clone_values": {"f1": 207.5, "sjf": 250.5}}


def _evaluation(rl_values, best=258.37, times=(None,)):
    rows = []
    for i, v in enumerate(rl_values):
        rows.append({"group": "backfill=none", "trial": f"t{i}", "evaluated_on": "lublin_256", "metric": "bsld",
                     "rl": v, "best_heuristic": "F1", "F1": best, "SJF": 277.35,
                     "time_to_beat_s": times[i % len(times)]})
    return rows


def test_seed_summary_counts_seeds_beating_the_best_heuristic_with_a_t_interval():
    rl = [255.54, 248.21, 268.72]
    (s,) = seed_summary(_evaluation(rl, times=(120.0, None, 300.0)))
    assert s["trials"] == 3 and s["beat_best_heuristic"] == 2
    assert s["mean"] == pytest.approx(np.mean(rl)) and s["worst"] == 268.72 and s["best"] == 248.21
    assert s["std"] == pytest.approx(np.std(rl, ddof=1))
    assert s["ci95"] == pytest.approx(4.303 * np.std(rl, ddof=1) / math.sqrt(3), rel=1e-4)
    assert s["median_time_to_beat_validation_s"] == 210.0 and s["validation_beat_in"] == 2
    (one,) = seed_summary(_evaluation([250.0]))
    assert math.isnan(one["ci95"]) and one["median_time_to_beat_validation_s"] is None


def test_t_quantiles():
    # scipy's exact quantiles: the printed tables' 3 decimals, and past 30 degrees of freedom t's, not the normal 1.96
    for df, table in ((1, 12.706), (2, 4.303), (9, 2.262), (30, 2.042), (50, 2.009), (100, 1.984)):
        assert t975(df) == pytest.approx(table, abs=5e-4)


def test_options_are_validated():
    assert EvaluateSpec(each_trial=True).each_trial and not EvaluateSpec().each_trial
    assert TrainingOptions().checkpoint_every == 1 and TrainingOptions().keep_checkpoints == 5
    assert TrainingOptions(keep_checkpoints=None).keep_checkpoints is None
    with pytest.raises(ValueError, match="keep_checkpoints must be >= 1 or null"):
        TrainingOptions(keep_checkpoints=0)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="validate_every must be an integer >= 1"):
            TrainingOptions(validate_every=bad)


def test_validation_is_due_at_the_first_and_every_kth_iteration():
    from schedrl.training.callbacks import validation_due

    assert [i for i in range(1, 13) if validation_due(i, 4)] == [1, 4, 8, 12]
    assert all(validation_due(i, 1) for i in range(1, 6))


def test_validation_and_evaluation_zones_are_disjoint_and_held_out():
    from schedrl.agents import get_agent
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig

    agent = get_agent("rlscheduler")
    split = RLSchedulerEnvConfig(train_fraction=0.7)
    assert agent.judge(split).held_out_range(10_000) == (7000, 10_000)
    assert agent.judge(split).split_range(10_000, validation=True) == (7000, 7750)
    assert agent.judge(split).split_range(10_000) == (7750, 10_000)
    workload = list(range(10_000))
    val = agent.judge(split).evaluation_ids(workload, 5, 1, 256, validation=True)
    ev = agent.judge(split).evaluation_ids(workload, 10, 2, 1024)
    assert all(7000 <= s and s + 256 <= 7750 for s in val) and all(7750 <= s and s + 1024 <= 10_000 for s in ev)
    assert agent.judge(split).evaluation_note(workload, ev, 1024).startswith("held out: jobs ")
    assert agent.judge(split).evaluation_note(workload, [100, 8000], 1024).startswith("NOT held out: 1 of 2 sequences")
    # the paper's protocol: one zone, the whole trace, said to be not held out
    paper = RLSchedulerEnvConfig()
    assert agent.judge(paper).split_range(10_000) == agent.judge(paper).split_range(10_000, validation=True) == (0, 10_000)
    assert "not held out" in agent.judge(paper).evaluation_note(workload, [0], 1024)
    with pytest.raises(ValueError, match="train_fraction must be in"):
        RLSchedulerEnvConfig(train_fraction=0.0)
    # --validation-share: a 60/20/20 split, recorded in the env config so `evaluate` finds the same zones
    wide = RLSchedulerEnvConfig(train_fraction=0.6, validation_share=0.5)
    assert agent.judge(wide).split_range(10_000, validation=True) == (6000, 8000)
    assert agent.judge(wide).split_range(10_000) == (8000, 10_000)
    assert RLSchedulerEnvConfig.from_dict(wide.to_dict()).validation_share == 0.5
    for bad in (0.0, 1.0):
        with pytest.raises(ValueError, match="validation_share must be in"):
            RLSchedulerEnvConfig(train_fraction=0.7, validation_share=bad)


def test_training_episodes_stay_inside_the_training_part():
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
    from schedrl.agents.rlscheduler.env import RLSchedulerEnv

    env = RLSchedulerEnv(config=RLSchedulerEnvConfig(trace="default", train_fraction=0.7, sequence_length=64).to_dict())
    end = int(0.7 * len(env.workload))
    starts = []
    for seed in range(200):
        env.reset(seed=seed)
        starts.append(env.start)
    assert max(starts) + 64 <= end and min(starts) >= 0 and len(set(starts)) > 150


def test_a_trial_that_never_started_is_left_out_of_the_report():
    """Ctrl-C (or a sweep's time budget) between trials leaves a trial Tune created but never ran: no config,
    no results. The report lists the trials that ran instead of failing on it."""
    from schedrl.training.report import trial_rows

    never_ran = SimpleNamespace(config=None, metrics={}, error=None, path="trial_00001", checkpoint=None,
                                metrics_dataframe=None, best_checkpoints=[])
    assert trial_rows(SimpleNamespace(metric="schedrl_validation_score", mode="min"), [never_ran]) == []
