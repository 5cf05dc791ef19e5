"""`scenario:` in a sweep file: the env and evaluation it sets, explicit keys over it, one-line errors."""

from __future__ import annotations

import pytest

from schedrl.scenarios import scoring, standard
from schedrl.training.sweep_file import sweep_from_dict
from schedrl.training.yaml_reader import SweepError

STOP = {"stop": {"iterations": 1}}


def test_a_scenario_sets_the_env_and_the_final_evaluation_sequences():
    spec = sweep_from_dict({"agent": "rlscheduler", "scenario": "default", **STOP})
    s = standard()["default"]
    assert (spec.env.trace, spec.env.metric, spec.env.backfill, spec.env.train_fraction) == ("default", "bsld", "none", 0.6)
    assert spec.evaluate.from_scenario and not spec.evaluate.starts and spec.scenario.record() == s.record()
    from schedrl.agents import get_agent
    from schedrl.scenarios.protocol import RunProtocol

    agent = get_agent("rlscheduler")
    judge = agent.judge(spec.env)
    length, starts = RunProtocol(judge, spec.scenario).evaluation_sequences(judge.load(), spec.evaluate, 0)
    assert (length, starts) == (1024, scoring.sequences(s, scoring.load(s), "evaluation").ids)


def test_a_scenario_fixes_the_validation_sequences_unless_the_file_sets_its_own():
    from schedrl.agents import get_agent
    from schedrl.training.driver import validation_spec

    s = standard()["default"]
    fixed = scoring.sequences(s, scoring.load(s), "validation")
    agent = get_agent("rlscheduler")
    for seed in (0, 3):
        spec = sweep_from_dict({"agent": "rlscheduler", "scenario": "default", "ppo": {"seed": seed}, **STOP})
        assert spec.training.validation_from_scenario
        v = validation_spec(agent, spec.env, agent.judge(spec.env).load(), spec.training.validation_sequences, seed,
                            scenario=spec.scenario)
        assert (v["starts"], v["length"]) == (list(fixed.ids), fixed.length)
    own = sweep_from_dict({"agent": "rlscheduler", "scenario": "default", "training": {"validation_sequences": 2},
                           **STOP})
    searched = sweep_from_dict({"agent": "rlscheduler", "scenario": "default",
                                "env": {"trace": {"grid": ["default", "lublin_256"]}}, **STOP})
    assert not own.training.validation_from_scenario and not searched.training.validation_from_scenario


def test_explicit_keys_win_and_the_recorded_scenario_says_so():
    spec = sweep_from_dict({"agent": "rlscheduler", "scenario": "default", "env": {"metric": "wait"},
                            "evaluate": {"sequences": 3, "jobs": 256}, **STOP})
    assert spec.env.metric == "wait" and spec.evaluate.sequences == 3 and spec.evaluate.jobs == 256
    assert spec.scenario.record() == standard()["default"].overridden(metric="wait", sequences=3, jobs=256).record()


def test_a_searched_env_field_is_left_to_the_sweep():
    spec = sweep_from_dict({"agent": "rlscheduler", "scenario": "default",
                            "env": {"sequence_length": {"grid": [64, 128]}}, **STOP})
    assert spec.grid_size() == 2 and spec.scenario.name == "default"


@pytest.mark.parametrize("raw, message", [
    ({"agent": "dras-pg", "scenario": "default"}, r"scenario: scenario 'default' is defined for rlscheduler, linear"),
    ({"agent": "rlscheduler", "scenario": "nope"}, r"scenario: unknown scenario 'nope'"),
    ({"agent": "rlscheduler", "scenario": 3}, r"scenario"),
    ({"agent": "rlscheduler", "scenario": "default", "env": {"preset": "rlscheduler"}},
     r"does not train on scenario 'default': .*event_order"),
    # the scenario owns its split: an env value beside `scenario:` may not contradict it
    ({"agent": "rlscheduler", "scenario": "default", "env": {"train_fraction": 0.7}},
     r"does not train on scenario 'default': train_fraction 0\.7 \(the scenario's: 0\.6\)$"),
    ({"agent": "linear", "scenario": "default", "env": {"validation_share": 0.5}},
     r"does not train on scenario 'default': validation_share 0\.5 \(the scenario's: 0\.25\)$"),
])
def test_bad_scenarios_are_one_sweep_error_naming_the_key(raw, message):
    with pytest.raises(SweepError, match=message) as e:
        sweep_from_dict({**raw, **STOP}, "f.yaml")
    assert "\n" not in str(e.value) and str(e.value).startswith("f.yaml")
