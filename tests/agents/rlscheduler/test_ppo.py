"""PPO settings, the RLlib config builder, the RLScheduler learner, and a tiny learning run."""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from schedrl.agents.rlscheduler.ppo import (
    POLICY_EARLY_STOPPED_KEY,
    POLICY_UPDATE_STEPS_KEY,
    PPOSettings,
    RLSchedulerPPOLearner,
    build_ppo_config,
)
from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE, OBS_ACTION_MASK, OBS_JOBS


class PickSmallestEnv(gym.Env):
    """Toy queue: reward 1 for the valid job with the smallest feature 0, down to 0 for the largest.

    Each step shows a fresh queue of 2-16 valid jobs in random slots (the rest masked and zero);
    the reward is ``1 - rank / (valid - 1)`` of the picked job's feature 0 among the valid jobs,
    so a uniform-random valid pick earns 0.5 on average and the best policy 1.0.
    Config: ``episode_len`` (steps per episode, default 4).
    """

    NUM_FEATURES = 8

    def __init__(self, config=None):
        config = dict(config or {})
        self.episode_len = config.pop("episode_len", 4)
        if config:
            raise ValueError(f"unknown env_config keys: {sorted(config)}")
        self.observation_space = gym.spaces.Dict(
            {
                OBS_JOBS: gym.spaces.Box(0.0, 1.0, (MAX_OBSV_SIZE, self.NUM_FEATURES), np.float32),
                OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, (MAX_OBSV_SIZE,), np.float32),
            }
        )
        self.action_space = gym.spaces.Discrete(MAX_OBSV_SIZE)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return self.new_queue(), {}

    def step(self, action):
        if not self._obs[OBS_ACTION_MASK][action]:
            raise ValueError(f"action {action} picks a masked slot")
        reward = self.reward(self._obs, int(action))
        self._t += 1
        return self.new_queue(), reward, False, self._t >= self.episode_len, {}

    @staticmethod
    def reward(obs, action: int) -> float:
        valid = np.flatnonzero(obs[OBS_ACTION_MASK])
        rank = np.sum(obs[OBS_JOBS][valid, 0] < obs[OBS_JOBS][action, 0])
        return float(1.0 - rank / (len(valid) - 1))

    def new_queue(self):
        """A fresh random queue (also the next observation)."""
        n = int(self.np_random.integers(2, 17))
        mask = np.zeros(MAX_OBSV_SIZE, np.float32)
        mask[self.np_random.choice(MAX_OBSV_SIZE, n, replace=False)] = 1.0
        jobs = self.np_random.random((MAX_OBSV_SIZE, self.NUM_FEATURES), dtype=np.float32) * mask[:, None]
        self._obs = {OBS_JOBS: jobs, OBS_ACTION_MASK: mask}
        return self._obs


class VectorPickSmallestEnv(gym.vector.SyncVectorEnv):
    """Stands in for a natively vectorized env: RLlib calls it once, with ``num_envs`` in its config."""

    def __init__(self, config):
        config = dict(config)
        super().__init__([PickSmallestEnv] * config.pop("num_envs"), autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP)


# ~0.5 s per iteration on 2 idle cores; lr raised from the paper's 3e-4 to learn in 10 iterations
TOY_SETTINGS = PPOSettings(
    lr=3e-3,
    num_epochs=4,
    train_batch_size_per_learner=256,
    minibatch_size=64,
    num_env_runners=0,
    num_envs_per_env_runner=4,
    seed=0,
)
TOY_ITERATIONS = 10


def greedy_and_random_reward(module: RLModule, queues: int = 2000, seed: int = 123) -> tuple[float, float]:
    """Mean reward of the module's greedy pick and of a uniform-random valid pick, same queues."""
    env, rng = PickSmallestEnv(), np.random.default_rng(seed)
    env.reset(seed=seed)
    obs = [env.new_queue() for _ in range(queues)]
    batch = {Columns.OBS: {k: torch.as_tensor(np.stack([o[k] for o in obs])) for k in obs[0]}}
    greedy = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].argmax(-1).tolist()
    random = [int(rng.choice(np.flatnonzero(o[OBS_ACTION_MASK]))) for o in obs]
    return (
        float(np.mean([env.reward(o, a) for o, a in zip(obs, greedy)])),
        float(np.mean([env.reward(o, a) for o, a in zip(obs, random)])),
    )


@pytest.fixture(scope="module")
def trained(ray_session):
    algo = build_ppo_config(TOY_SETTINGS, PickSmallestEnv, {"episode_len": 4}).build_algo()
    results = [algo.train() for _ in range(TOY_ITERATIONS)]
    yield algo, results
    algo.stop()


def test_defaults_are_rlscheduler_settings():
    s = PPOSettings()
    assert (s.gamma, s.lambda_, s.clip_param, s.lr, s.vf_lr, s.target_kl) == (1.0, 0.97, 0.2, 3e-4, 1e-3, 0.01)
    assert (s.num_epochs, s.train_batch_size_per_learner, s.entropy_coeff) == (80, 100 * 256, 0.0)
    assert s.minibatch_size is None and s.vf_clip_param == math.inf


def test_invalid_settings_name_every_problem():
    with pytest.raises(ValueError, match=r"gamma=1.5 must be in \[0, 1\].*minibatch_size=10 must be"):
        PPOSettings(gamma=1.5, train_batch_size_per_learner=8, minibatch_size=10)


def test_builder_sets_hyperparameters_explicitly():
    config = build_ppo_config(PPOSettings(), PickSmallestEnv, {})
    # RLlib's PPO, whose training step overlaps sampling with learning only when asked (off by default)
    from ray.rllib.algorithms.ppo import PPO

    from schedrl.agents.overlapped_ppo import OVERLAP_KEY, OverlappedPPO

    assert config.algo_class is OverlappedPPO and issubclass(OverlappedPPO, PPO)
    assert config.learner_config_dict.pop(OVERLAP_KEY) is False and config.max_requests_in_flight_per_env_runner == 1
    assert (config.gamma, config.lambda_, config.clip_param, config.lr) == (1.0, 0.97, 0.2, 3e-4)
    assert (config.num_epochs, config.train_batch_size_per_learner, config.minibatch_size) == (80, 25600, None)
    assert not config.use_kl_loss and config.entropy_coeff == 0.0 and config.vf_loss_coeff == 1.0
    assert config.learner_config_dict == {"vf_lr": 1e-3, "target_kl": 0.01, "warm_start": {
        "teacher": None, "episodes": 64, "epochs": 16, "smoothing": 0.0, "clones": 3, "seed": 0,
        "gamma": 1.0}}  # the paper: no warm start
    assert config.learner_class is RLSchedulerPPOLearner
    assert config.gym_env_vectorize_mode == gym.VectorizeMode.SYNC


def test_builder_qualifies_schedrl_ids_and_selects_vector_entry_point():
    config = build_ppo_config(PPOSettings(), "schedrl/RLScheduler-v0", {}, vector_entry_point=True)
    assert config.env == "schedrl.envs:schedrl/RLScheduler-v0"
    assert config.gym_env_vectorize_mode == gym.VectorizeMode.VECTOR_ENTRY_POINT


def test_builder_rejects_unknown_model():
    with pytest.raises(ValueError, match="unknown model 'resnet'"):
        build_ppo_config(PPOSettings(), PickSmallestEnv, {}, model="resnet")


@pytest.fixture
def learner():
    return build_ppo_config(TOY_SETTINGS, PickSmallestEnv, {}).build_learner(env=PickSmallestEnv())


def test_learner_has_separate_policy_and_value_optimizers(learner):
    module = learner.module[DEFAULT_MODULE_ID]
    policy = learner.get_optimizer(DEFAULT_MODULE_ID, "policy")
    value = learner.get_optimizer(DEFAULT_MODULE_ID, "value")
    assert policy.param_groups[0]["lr"] == pytest.approx(TOY_SETTINGS.lr)
    assert value.param_groups[0]["lr"] == pytest.approx(TOY_SETTINGS.vf_lr)
    assert {id(p) for p in policy.param_groups[0]["params"]} == {id(p) for p in module.pi.parameters()}
    assert {id(p) for p in value.param_groups[0]["params"]} == {id(p) for p in module.vf.parameters()}


def test_kl_early_stop_freezes_policy_but_not_value(learner):
    module = learner.module[DEFAULT_MODULE_ID]
    before = {name: p.detach().clone() for name, p in module.named_parameters()}

    def step(approx_kl: float) -> None:
        learner._approx_kl[DEFAULT_MODULE_ID] = approx_kl
        grads = {}
        for p in module.parameters():
            p.grad = torch.ones_like(p)
            grads[learner.get_param_ref(p)] = p.grad
        learner.apply_gradients(grads)

    learner.before_gradient_based_update(timesteps={})
    step(approx_kl=0.015)  # below 1.5 x 0.01: policy steps, keeps going
    assert not learner._policy_stopped.get(DEFAULT_MODULE_ID, False)
    step(approx_kl=0.02)  # above: this step is still taken (as in Spinning Up), later ones are not
    assert learner._policy_stopped[DEFAULT_MODULE_ID]
    after_two = {name: p.detach().clone() for name, p in module.named_parameters()}
    step(approx_kl=0.0)
    for name, p in module.named_parameters():
        assert not torch.equal(after_two[name], before[name])
        if name.startswith("pi."):
            assert torch.equal(p, after_two[name]), name
        else:
            assert not torch.equal(p, after_two[name]), name
    assert learner._policy_steps[DEFAULT_MODULE_ID] == 2


def test_ppo_kernel_beats_random_policy(trained):
    algo, results = trained
    greedy, random = greedy_and_random_reward(algo.get_module())
    assert random == pytest.approx(0.5, abs=0.03)
    assert greedy > random + 0.25, (greedy, random)
    # the stochastic training policy improves too: per-step return of the last iteration
    last = results[-1]["env_runners"]["episode_return_mean"] / 4
    assert last > 0.6, last


def test_kl_early_stopping_happens_during_training(trained):
    _, results = trained
    learner_results = [r["learners"][DEFAULT_MODULE_ID] for r in results]
    assert any(r[POLICY_EARLY_STOPPED_KEY] == 1.0 for r in learner_results)
    steps = [r[POLICY_UPDATE_STEPS_KEY] for r in learner_results]
    # without stopping an update takes >= num_epochs * (256 / 64) steps (PPO's artificial
    # bootstrap step per episode makes batches a little longer, never shorter)
    assert all(s >= 1 for s in steps)
    assert min(steps) < TOY_SETTINGS.num_epochs * 4


@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-single-agent-env-v0")  # RLlib re-registers its id
def test_natively_vectorized_env_trains(ray_session):
    settings = dataclasses.replace(TOY_SETTINGS, num_envs_per_env_runner=3, num_epochs=1)
    algo = build_ppo_config(settings, VectorPickSmallestEnv, {}, vector_entry_point=True).build_algo()
    try:
        assert algo.env_runner.num_envs == 3
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled"] >= settings.train_batch_size_per_learner
    finally:
        algo.stop()


def test_checkpoint_restores_identical_module(trained, tmp_path):
    algo, _ = trained
    algo.save_to_path(str(tmp_path))
    restored = RLModule.from_checkpoint(tmp_path / "learner_group" / "learner" / "rl_module" / DEFAULT_MODULE_ID)
    env = PickSmallestEnv()
    obs = [env.reset(seed=s)[0] for s in range(5)]
    batch = {Columns.OBS: {k: torch.as_tensor(np.stack([o[k] for o in obs])) for k in obs[0]}}
    expected = algo.get_module().forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    assert torch.equal(restored.forward_inference(batch)[Columns.ACTION_DIST_INPUTS], expected)
    learner_state = algo.learner_group.get_state()["learner"]["rl_module"][DEFAULT_MODULE_ID]
    restored_state = restored.get_state()
    assert restored_state.keys() == learner_state.keys()
    assert all(np.array_equal(restored_state[k], learner_state[k]) for k in learner_state)


def test_overlap_sampling_needs_an_env_runner():
    with pytest.raises(ValueError, match="overlap_sampling needs num_env_runners >= 1"):
        dataclasses.replace(TOY_SETTINGS, overlap_sampling=True)


def test_overlapped_sampling_learns_and_keeps_runner_weights_in_step(ray_session):
    # one env-runner process samples the next batch while the learner trains on the last one
    import sys

    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the runner process cannot import this test file
    settings = dataclasses.replace(TOY_SETTINGS, num_env_runners=1, overlap_sampling=True)
    algo = build_ppo_config(settings, PickSmallestEnv, {"episode_len": 4}).build_algo()
    try:
        results = [algo.train() for _ in range(TOY_ITERATIONS)]
        assert algo._sampling_in_flight  # the next batch is being sampled after every iteration
        assert all(r["env_runners"]["num_env_steps_sampled"] >= settings.train_batch_size_per_learner for r in results)
        greedy, random = greedy_and_random_reward(algo.get_module())
        assert greedy > random + 0.2, (greedy, random)
        # every weight update reached the runner: once the batch in flight is done, the runner holds the
        # learner's latest weights (an update dropped for too many requests in flight would leave older ones)
        runner_state = algo.env_runner_group.foreach_env_runner(
            lambda runner: runner.module.get_state(inference_only=True), local_env_runner=False)[0]
        learner_state = algo.learner_group.get_state()["learner"]["rl_module"][DEFAULT_MODULE_ID]
        assert runner_state.keys() and all(np.array_equal(runner_state[k], learner_state[k]) for k in runner_state)
    finally:
        algo.stop()
