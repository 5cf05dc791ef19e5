"""RLSchert/DeepRM on RLlib: the imitation schedule, the modules, 2-iteration PPO runs, the greedy policy, evaluation hooks."""

from __future__ import annotations

import numpy as np
import pytest
from rlschert_cases import small_config, small_table, write_jobs_csv

from schedrl.agents import get_agent
from schedrl.agents.base import AgentOptions
from schedrl.agents.rlschert.env import RLSchertEnv
from schedrl.agents.rlschert.settings import RLSchertSettings, check_schedule, imitation_weight


def test_imitation_weight_follows_its_schedule():
    schedule = ((0, 0.5), (1000, 0.0))
    assert [imitation_weight(schedule, t) for t in (0, 250, 500, 1000, 5000)] == [0.5, 0.375, 0.25, 0.0, 0.0]
    stepped = ((100, 1.0), (200, 0.4), (400, 0.4), (500, 0.0))
    assert imitation_weight(stepped, 0) == 1.0
    assert imitation_weight(stepped, 150) == pytest.approx(0.7)
    assert imitation_weight(stepped, 300) == pytest.approx(0.4)
    assert imitation_weight(stepped, 450) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="must increase"):
        check_schedule(((0, 0.5), (0, 0.1)))
    with pytest.raises(ValueError, match=">= 0"):
        RLSchertSettings(imitation_schedule=((0, -0.1),))


def _module(model: str, env: RLSchertEnv):
    from schedrl.agents.rlschert.modules import module_spec

    spec = module_spec(model)
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    return spec.build()


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_modules_mask_invalid_actions_and_ignore_the_teacher(model):
    import torch
    from ray.rllib.core.columns import Columns

    env = RLSchertEnv(small_config(), table=small_table())
    module = _module(model, env)
    obs, _ = env.reset(seed=0)
    batch = {k: torch.from_numpy(v[None]) for k, v in obs.items()}
    logits = module.forward_inference({Columns.OBS: batch})[Columns.ACTION_DIST_INPUTS][0]
    invalid = obs["action_mask"] == 0
    assert invalid.any()
    # every invalid action at least 80 below the best valid one: probability < e^-80, finite
    best = logits[torch.from_numpy(~invalid)].max()
    assert (logits[torch.from_numpy(invalid)] <= best - 80).all() and torch.isfinite(logits).all()
    assert torch.softmax(logits, -1)[torch.from_numpy(invalid)].sum() < 1e-30
    other = dict(batch)
    other["teacher"] = torch.roll(batch["teacher"], 1, dims=-1)
    again = module.forward_inference({Columns.OBS: other})[Columns.ACTION_DIST_INPUTS][0]
    assert torch.equal(logits, again)
    assert module.compute_values({Columns.OBS: batch}).shape == (1,)


def _args(**over) -> AgentOptions:
    return AgentOptions({"job_rate": 0.8, "res_slot": 4, "simu_len": 12, "reward": "slowdown", "jobs": "",
                                 "model": "mlp", "lr": None, "batch_size": 256, "imitation_steps": 512, "seed": 0,
                                 "num_env_runners": 0, "envs_per_runner": 1, "num_gpus_per_learner": 0.0,
                                 "runner_resources": None, "kill": True, "estimates": "recorded", **over})


@pytest.mark.parametrize("name", ["rlschert", "deeprm"])
def test_two_ppo_iterations_log_the_scheduled_imitation_weight(name, ray_session, tmp_path):
    from dataclasses import replace

    agent = get_agent(name)
    jobs = write_jobs_csv(tmp_path / "jobs.csv", [(r, p, 10 * u, [max(1, p + e) for e in range(r - 1)])
                                                  for r, p, u in [(3, 2, 1), (5, 5, 2), (12, 3, 2), (1, 1, 1), (7, 6, 1)]])
    env, settings = agent.configure(_args(jobs=str(jobs), model="cnn" if name == "deeprm" else "mlp"))
    env = replace(env, **{k: v for k, v in small_config().to_dict().items()
                          if k in ("job_width", "num_nw", "horizon", "job_len", "backlog", "num_kill", "max_seq")})
    settings = replace(settings, minibatch_size=64)
    prepared = agent.prepare(env, settings, {}, log=lambda _: None)
    assert prepared.env_config.kill is (name == "rlschert")
    algo = agent.algorithm_config(prepared.env_config, settings).build_algo()
    try:
        for _ in range(2):
            result = algo.train()
            learner = result["learners"]["default_policy"]
            steps = result["num_env_steps_sampled_lifetime"]
            assert learner["imitation_weight"] == pytest.approx(imitation_weight(settings.imitation_schedule, steps))
            assert np.isfinite(learner["total_loss"]) and 1 <= learner["policy_update_steps"] <= 5 * 4 + 5
        assert steps >= 512
        expected_last = 0.0 if name == "deeprm" else imitation_weight(((0, 0.5), (512, 0.0)), steps)
        assert learner["imitation_weight"] == pytest.approx(expected_last)
        module = algo.get_module()
    finally:
        algo.stop()
    policy = agent.policy_from_module(module, prepared.env_config.to_dict())
    judge = agent.judge(prepared.env_config)
    seeds = judge.evaluation_ids(None, 2, 0, judge.sequence_length)
    values = judge.score_policy(policy, None, seeds, judge.sequence_length)
    assert len(values) == 2 and all(v >= 1.0 for v in values)
    baselines = judge.score_baselines(None, seeds, judge.sequence_length)
    assert set(baselines) == {b.name for b in judge.baselines}


@pytest.mark.parametrize("value_after_stop", [True, False])
def test_after_the_kl_stop_only_the_value_network_keeps_training(value_after_stop, ray_session, tmp_path):
    """A KL target so small that the policy stops at once: with `value_after_kl_stop` the value network still takes
    the update's remaining steps and the policy network does not move; without it nothing moves after the stop."""
    from dataclasses import replace

    import torch

    agent = get_agent("rlschert")
    jobs = write_jobs_csv(tmp_path / "jobs.csv", [(r, p, 10 * u, [max(1, p + e) for e in range(r - 1)])
                                                  for r, p, u in [(3, 2, 1), (5, 5, 2), (12, 3, 2), (1, 1, 1), (7, 6, 1)]])
    env, settings = agent.configure(_args(jobs=str(jobs)))
    env = replace(env, **{k: v for k, v in small_config().to_dict().items()
                          if k in ("job_width", "num_nw", "horizon", "job_len", "backlog", "num_kill", "max_seq")})
    settings = replace(settings, minibatch_size=64, target_kl=1e-12, value_after_kl_stop=value_after_stop)
    prepared = agent.prepare(env, settings, {}, log=lambda _: None)
    algo = agent.algorithm_config(prepared.env_config, settings).build_algo()
    try:
        module = algo.learner_group._learner.module["default_policy"]  # the learner's copy holds value_net
        before = {k: v.clone() for k, v in module.state_dict().items()}
        learner = algo.train()["learners"]["default_policy"]
        after = module.state_dict()
    finally:
        algo.stop()
    assert any(k.startswith("pi.") for k in before) and any(k.startswith("value_net.") for k in before)
    moved = {part: any(not torch.equal(before[k], after[k]) for k in before if k.startswith(part))
             for part in ("pi.", "value_net.")}
    assert learner["policy_update_steps"] <= 1
    if value_after_stop:
        assert learner["value_only_steps"] >= 10 and moved["value_net."]
        assert moved["pi."] is bool(learner["policy_update_steps"] == 1)
    else:
        assert learner["value_only_steps"] == 0
        assert moved["pi."] is moved["value_net."] is bool(learner["policy_update_steps"] == 1)


def test_greedy_policy_sees_what_the_env_shows():
    """The policy acting on a bare sim builds the env's observation and mask at every decision."""
    import copy

    import torch
    from ray.rllib.core.columns import Columns

    from schedrl.agents.rlschert.policy import RLSchertPolicy

    config = small_config()
    env = RLSchertEnv(config, table=small_table())
    module = _module("mlp", env)
    policy = RLSchertPolicy(module, config.to_dict())
    obs, _ = env.reset(seed=3)
    while True:
        # the policy decides on its own copy of the env's sim (keeping its view's per-step record);
        # it must pick the greedy action of the env's observation
        copy_sim = copy.deepcopy(env.sim)
        if policy._view is not None:
            policy._view.sim = copy_sim
        action = policy.act(copy_sim)
        batch = {k: torch.from_numpy(v[None]) for k, v in obs.items()}
        logits = module.forward_inference({Columns.OBS: batch})[Columns.ACTION_DIST_INPUTS][0].numpy()
        assert action == int(np.argmax(logits))
        obs, _, term, trunc, _ = env.step(action)
        if term or trunc:
            break
