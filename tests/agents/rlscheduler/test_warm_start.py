"""Warm start (`schedrl/agents/rlscheduler/warm_start.py`): the teacher's demonstrations are its real
decisions through the env, cloning makes the greedy policy schedule like the teacher, and the option
is validated everywhere it is given."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
from schedrl.agents.rlscheduler.env import RLSchedulerEnv, load_env_workload
from schedrl.agents.rlscheduler.observation import JobFeatures
from schedrl.agents.rlscheduler.settings import PPOSettings
from schedrl.agents.rlscheduler.warm_start import AUTO_CANDIDATES, check_teacher, clone, demonstrations
from schedrl.heuristics import get_heuristic
from schedrl.metrics import summarize
from schedrl.sim import Simulator


def _env_config(length: int) -> dict:
    config = RLSchedulerEnvConfig(trace="default", sequence_length=length)
    return replace(config, norm=JobFeatures.from_trace(load_env_workload(config)).to_dict()).to_dict()


@pytest.fixture(scope="module")
def env_config() -> dict:
    return _env_config(64)


def test_teacher_names_are_checked():
    assert check_teacher(None) is None and check_teacher("none") is None and check_teacher("NONE") is None
    assert check_teacher("SJF") == "sjf" and check_teacher("auto") == "auto"
    with pytest.raises(ValueError, match="unknown warm-start teacher 'tetris'"):
        check_teacher("tetris")  # not a priority-key heuristic
    with pytest.raises(ValueError, match="unknown warm-start teacher 'bogus'.*warm_start_episodes=0"):
        PPOSettings(warm_start="bogus", warm_start_episodes=0)
    assert PPOSettings().warm_start is None  # the paper's configuration starts from random weights


@pytest.mark.integration  # a training (behaviour cloning)
def test_demonstrations_are_the_teachers_own_schedules(env_config):
    demos = demonstrations(env_config, "f1", 4, seed=3)
    env = RLSchedulerEnv(config=env_config)
    h = get_heuristic("f1")
    assert demos.teacher == "f1" and len(demos) == 4 * 64 and not demos.candidates
    # every episode's value is what the compiled heuristic gets on the same sequence
    for e, value in enumerate(demos.episode_values):
        env.reset(seed=3 + e)
        assert value == pytest.approx(summarize(h.run(Simulator(env.sim.workload, env.sim_config))).value("bsld"))
    # the labels are valid slots, and replaying them reproduces the first episode
    assert np.all(demos.mask[np.arange(len(demos)), demos.slots] == 1.0)
    env.reset(seed=3)
    for t in range(64):
        _, reward, terminated, _, info = env.step(int(demos.slots[t]))
    assert terminated and info["metric_value"] == pytest.approx(demos.episode_values[0])
    # undiscounted: every decision's return is the episode's reward, -bsld
    assert np.allclose(demos.returns[:64], -demos.episode_values[0])


def test_auto_picks_the_best_heuristic_on_the_training_sequences(env_config):
    demos = demonstrations(env_config, "auto", 3, seed=0)
    assert set(demos.candidates) == set(AUTO_CANDIDATES)
    assert demos.teacher == min(demos.candidates, key=demos.candidates.get)  # bsld: lower is better
    assert demos.episode_values.mean() == pytest.approx(demos.candidates[demos.teacher])


@pytest.mark.integration  # a training (behaviour cloning)
def test_cloning_makes_the_greedy_policy_schedule_like_the_teacher():
    import torch

    from schedrl.agents.rlscheduler.modules import module_spec
    from schedrl.agents.rlscheduler.policy import CheckpointPolicy

    torch.manual_seed(0)
    env_config = _env_config(256)  # the training length: queues long enough for choices to matter
    env = RLSchedulerEnv(config=env_config)
    spec = module_spec("kernel")
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    module = spec.build()
    demos = demonstrations(env_config, "sjf", 32, seed=0)
    stats = clone(module, demos, epochs=16, seed=0)
    assert stats["agreement"] > max(0.75, stats["agreement_before"] + 0.4)
    assert stats["value_mse"] < stats["value_mse_before"]
    # on sequences it never saw, the cloned policy's schedules are SJF's (within a few percent)
    module.eval()
    policy = CheckpointPolicy(module, env_config)
    sjf, rl = [], []
    for seed in (100, 101, 102, 103):
        env.reset(seed=seed)
        seq = env.sim.workload
        sjf.append(summarize(get_heuristic("sjf").run(Simulator(seq, env.sim_config))).value("bsld"))
        rl.append(summarize(Simulator(seq, env.sim_config).run(policy)).value("bsld"))
    assert np.mean(rl) <= 1.15 * np.mean(sjf)


@pytest.mark.integration  # a training (behaviour cloning)
def test_with_key_features_the_clone_is_exact_and_smoothing_keeps_it_exploring():
    """F1's key reads the submit time since the sequence began, which the paper's features lack; with its rank as
    a feature the clone schedules exactly like F1, and label smoothing keeps the clone's sampling spread while its
    greedy choice stays the teacher's."""
    import torch

    from schedrl.agents.rlscheduler.keys import OBS_ACTION_MASK, OBS_JOBS
    from schedrl.agents.rlscheduler.modules import module_spec
    from schedrl.agents.rlscheduler.policy import CheckpointPolicy
    from ray.rllib.core.columns import Columns

    env_config = {**_env_config(256), "key_features": ["f1"]}
    env = RLSchedulerEnv(config=env_config)
    spec = module_spec("kernel")
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    demos = demonstrations(env_config, "f1", 16, seed=0)
    entropies = {}
    for smoothing in (0.0, 0.2):
        torch.manual_seed(0)
        module = spec.build()
        stats = clone(module, demos, epochs=16, seed=0, smoothing=smoothing)
        assert stats["agreement"] > 0.995, smoothing
        module.eval()
        with torch.no_grad():
            batch = {Columns.OBS: {OBS_JOBS: torch.from_numpy(demos.jobs[:2048]).float(),
                                   OBS_ACTION_MASK: torch.from_numpy(demos.mask[:2048]).float()}}
            logp = torch.log_softmax(module._forward(batch)[Columns.ACTION_DIST_INPUTS], -1)
        choice = demos.mask[:2048].sum(-1) > 1
        entropies[smoothing] = float(-(logp.exp() * logp).sum(-1)[torch.from_numpy(choice)].mean())
        env.reset(seed=100)
        seq = env.sim.workload
        f1 = summarize(get_heuristic("f1").run(Simulator(seq, env.sim_config))).value("bsld")
        rl = summarize(Simulator(seq, env.sim_config).run(CheckpointPolicy(module, env_config))).value("bsld")
        assert rl == pytest.approx(f1, rel=1e-3), smoothing  # an unseen sequence, scheduled as F1 does
    assert entropies[0.2] > entropies[0.0] + 0.1, entropies
    with pytest.raises(ValueError, match="smoothing"):
        clone(spec.build(), demos, smoothing=1.0)
    with pytest.raises(ValueError, match="warm_start_smoothing"):
        PPOSettings(warm_start_smoothing=-0.1)
    with pytest.raises(ValueError, match="warm_start_clones=0"):
        PPOSettings(warm_start_clones=0)


def test_warm_start_options_reach_the_settings_and_the_callback_spec():
    import argparse

    from schedrl.agents.rlscheduler.agent import RLSchedulerAgent
    from schedrl.agents.rlscheduler.ppo import warm_start_spec

    agent = RLSchedulerAgent()
    parser = argparse.ArgumentParser()
    for flag, kwargs in (("--trace", {"default": "default"}), ("--cleaning", {"default": None}),
                         ("--seed", {"type": int, "default": 0}), ("--num-env-runners", {"type": int, "default": 0}),
                         ("--envs-per-runner", {"type": int, "default": 4}),
                         ("--num-gpus-per-learner", {"type": float, "default": 0.0}),
                         ("--runner-resources", {"default": None})):
        parser.add_argument(flag, **kwargs)
    agent.add_arguments(parser)
    args = parser.parse_args(["--paper-defaults", "--warm-start", "auto", "--warm-start-clones", "1",
                              "--warm-start-smoothing", "0.1", "--key-features", "f1,sjf", "--reward-baseline", "f1"])
    env, settings = agent.configure(args)
    assert env.key_features == ("f1", "sjf") and env.reward_baseline == "f1"
    spec = warm_start_spec(settings)
    assert spec["clones"] == 1 and spec["smoothing"] == 0.1 and spec["teacher"] == "auto"
    env, settings = agent.configure(parser.parse_args(["--paper-defaults"]))
    assert env.key_features == () and settings.warm_start_smoothing == 0.0 and settings.warm_start_clones == 3


def test_with_the_dense_reward_the_value_targets_are_returns_to_go(env_config):
    final = demonstrations(env_config, "sjf", 2, seed=4)
    dense = demonstrations({**env_config, "dense_reward": True}, "sjf", 2, seed=4)
    assert np.array_equal(final.slots, dense.slots) and np.allclose(final.episode_values, dense.episode_values)
    # undiscounted, the first decision's return is the episode's return either way; later ones lose the costs paid
    assert dense.returns[0] == pytest.approx(final.returns[0], rel=1e-5)
    assert dense.returns[64] == pytest.approx(final.returns[64], rel=1e-5)
    assert np.all(np.diff(dense.returns[:64]) >= -1e-6) and dense.returns[63] > dense.returns[0]
