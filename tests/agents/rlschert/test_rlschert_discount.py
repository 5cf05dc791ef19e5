"""GAE with the discount per time step (`schedrl/agents/rlschert/advantages.py`)."""

from __future__ import annotations

import numpy as np
import pytest
from rlschert_cases import small_config, write_jobs_csv

from schedrl.agents import get_agent


def test_per_decision_discounts_give_rlllibs_targets():
    from ray.rllib.utils.postprocessing.value_predictions import compute_value_targets

    from schedrl.agents.rlschert.advantages import value_targets

    rng = np.random.default_rng(0)
    n = 40
    values, rewards = rng.normal(size=n).astype(np.float32), rng.normal(size=n).astype(np.float32)
    terminateds, truncateds = np.zeros(n), np.zeros(n)
    terminateds[14], truncateds[15] = 1, 1  # a terminated episode (its artificial step at 15) ...
    truncateds[39] = 1  # ... and a chunk cut mid-episode
    expected = compute_value_targets(values, rewards, terminateds, truncateds, gamma=0.9, lambda_=0.8)
    ours = value_targets(values, rewards, terminateds, truncateds, np.full(n, 0.9, np.float32), 0.8)
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)


def test_decisions_within_a_time_step_do_not_put_its_penalty_off():
    """Two episodes that pay the same penalties per time step, one with three extra allocations/kills inside the
    first step: per time step their first decisions are worth the same; per decision the longer one is worth more."""
    from schedrl.agents.rlschert.advantages import time_step_discounts, value_targets

    void, gamma = 5, 0.9
    short = [void, void, void]  # three time steps, -1 each
    long = [0, 6, 1, void, void, void]  # allocate, kill, allocate, then the same three steps
    worth = {}
    for name, actions in (("short", short), ("long", long)):
        n = len(actions) + 1  # plus RLlib's artificial last step
        rewards = np.array([-1.0 if a == void else 0.0 for a in actions] + [0.0], np.float32)
        terminateds = np.zeros(n)
        terminateds[n - 2] = 1
        truncateds = np.zeros(n)
        truncateds[n - 1] = 1
        zeros = np.zeros(n, np.float32)  # lambda 1 and V = 0: the targets are the discounted returns
        per_time = value_targets(zeros, rewards, terminateds, truncateds,
                                 time_step_discounts(np.array(actions + [actions[-1]]), void, gamma), 1.0)
        per_decision = value_targets(zeros, rewards, terminateds, truncateds, np.full(n, gamma, np.float32), 1.0)
        worth[name] = (per_time[0], per_decision[0])
    assert worth["short"][0] == pytest.approx(-(1 + gamma + gamma ** 2))
    assert worth["long"][0] == pytest.approx(worth["short"][0])
    assert worth["long"][1] == pytest.approx(gamma ** 3 * worth["short"][1])
    assert worth["long"][1] > worth["short"][1]  # the gain per-decision discounting pays for idle decisions


def test_a_ppo_iteration_uses_the_time_step_gae(ray_session, tmp_path):
    from dataclasses import replace

    from ray.rllib.connectors.learner import GeneralAdvantageEstimation

    from schedrl.agents.rlschert.advantages import TimeStepGAE

    agent = get_agent("rlschert")
    jobs = write_jobs_csv(tmp_path / "jobs.csv", [(r, p, 10 * u, [max(1, p + e) for e in range(r - 1)])
                                                  for r, p, u in [(3, 2, 1), (5, 5, 2), (12, 3, 2), (1, 1, 1)]])
    env = replace(small_config(), jobs=str(jobs))
    settings = agent.settings_from_dict({"discount": "time", "gamma": 0.9, "train_batch_size_per_learner": 256,
                                         "minibatch_size": 64, "num_envs_per_env_runner": 1, "warm_start": False})
    algo = agent.algorithm_config(env, settings).build_algo()
    try:
        pieces = [type(c) for c in algo.learner_group._learner._learner_connector.connectors]
        assert TimeStepGAE in pieces and GeneralAdvantageEstimation not in pieces
        assert pieces[-1] is TimeStepGAE
        learner = algo.train()["learners"]["default_policy"]
        assert np.isfinite(learner["total_loss"]) and np.isfinite(learner["vf_loss"])
    finally:
        algo.stop()
    with pytest.raises(ValueError, match="discount must be one of decision, time"):
        agent.settings_from_dict({"discount": "hourly"})
