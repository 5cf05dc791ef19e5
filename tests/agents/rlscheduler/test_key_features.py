"""Key features: a heuristic's priority rank among the visible jobs as an observation column."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.agents.rlscheduler.agent import parse_key_features
from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
from schedrl.agents.rlscheduler.env import RLSchedulerEnv
from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE, OBS_ACTION_MASK, OBS_JOBS
from schedrl.agents.rlscheduler.observation import FEATURES, KEY_FEATURE_HEURISTICS
from schedrl.heuristics import get_heuristic

SMALL = {"trace": "default", "sequence_length": 96}


@pytest.mark.parametrize("name", ["f1", "sjf", "wfp3", "unicep"])
def test_following_the_top_rank_column_is_the_heuristic(name):
    """Picking the job whose key feature is 1 reproduces the heuristic decision for decision, and its schedule."""
    env = RLSchedulerEnv({**SMALL, "key_features": ("fcfs", name)})
    obs, _ = env.reset(seed=5)
    column = len(FEATURES) + 1
    heuristic = get_heuristic(name)
    decisions = 0
    done = False
    while not done:
        jobs, mask = obs[OBS_JOBS], obs[OBS_ACTION_MASK]
        valid = int(mask.sum())
        assert np.all(jobs[valid:, column] == 0.0)
        # ranks are a permutation: 1, 1/2, 1/3, ... over the visible jobs
        assert np.allclose(np.sort(1.0 / jobs[:valid, column]), np.arange(1, valid + 1))
        slot = int(np.argmax(jobs[:valid, column]))
        if len(env.sim.queue) <= MAX_OBSV_SIZE:  # the heuristic also sees only these jobs
            assert env._visible[slot] == heuristic.pick(env.sim)
            decisions += 1
        obs, reward, done, _, info = env.step(slot)
    assert decisions > 50
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator

    expected = summarize(heuristic.run(Simulator(env.sim.workload, env.sim_config))).value("bsld")
    assert info["metric_value"] == pytest.approx(expected)


def test_fcfs_rank_follows_queue_order():
    env = RLSchedulerEnv({**SMALL, "key_features": ("fcfs",)})
    obs, _ = env.reset(seed=1)
    for _ in range(40):  # until a queue has formed
        valid = int(obs[OBS_ACTION_MASK].sum())
        if valid > 3:
            break
        obs, *_ = env.step(valid - 1)
    valid = int(obs[OBS_ACTION_MASK].sum())
    assert valid > 3
    assert np.allclose(obs[OBS_JOBS][:valid, -1], 1.0 / np.arange(1, valid + 1))


def test_key_features_widen_the_observation_and_name_their_columns():
    plain = RLSchedulerEnv(SMALL)
    keyed = RLSchedulerEnv({**SMALL, "key_features": ["f1", "sjf"]})
    assert keyed.observation_space[OBS_JOBS].shape[-1] == plain.observation_space[OBS_JOBS].shape[-1] + 2
    assert keyed.feature_names[-2:] == ("f1_rank", "sjf_rank")
    a, _ = plain.reset(seed=2)
    b, _ = keyed.reset(seed=2)
    assert np.array_equal(a[OBS_JOBS], b[OBS_JOBS][:, :-2])  # the paper's columns are unchanged
    assert keyed.observation_space.contains(b)


def test_bad_key_features_are_rejected_with_the_valid_names():
    with pytest.raises(ValueError, match="unknown key feature.*'tetris'.*f1"):
        RLSchedulerEnvConfig(key_features=("tetris",))
    with pytest.raises(ValueError, match="repeat"):
        RLSchedulerEnvConfig(key_features=("f1", "F1"))
    assert RLSchedulerEnvConfig(key_features=["F1 ", "sjf"]).key_features == ("f1", "sjf")
    assert set(KEY_FEATURE_HEURISTICS) >= {"fcfs", "sjf", "wfp3", "unicep", "f1"}


def test_key_features_round_trip_and_parse():
    config = RLSchedulerEnvConfig(key_features=("f1", "wfp3"))
    assert RLSchedulerEnvConfig.from_dict(config.to_dict()) == config
    assert RLSchedulerEnvConfig.from_dict({}).key_features == ()  # run records from before key features
    assert parse_key_features("f1, sjf") == ("f1", "sjf")
    assert parse_key_features("none") == parse_key_features(None) == ()
