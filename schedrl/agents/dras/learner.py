"""DRAS-PG on RLlib: REINFORCE with DRAS's baseline as a custom Algorithm and TorchLearner; DRAS-DQL on RLlib's DQN.

DRAS-PG (§III-B, Eq. 3): theta <- theta + alpha * sum_k grad log pi(s_k, a_k) (sum_{k'>=k} r_k' - b_k),
"b_k [is] the cumulative reward from step k onwards averaging over all past parameter updates", and
parameters are updated "for every ten scheduling instances" (§III-C). Here:

- each training iteration samples `train_batch_size_per_learner` decisions (whole or partial
  episodes); `ReturnsToGo` gives every decision its (discounted) reward-to-go up to the end of its
  episode chunk and its position k in the chunk;
- the learner takes one Adam step per `decisions_per_update` consecutive decisions (the paper's
  update period, counted in decisions rather than scheduling instances), in sampling order;
- `PositionBaseline` keeps, per position k, the mean reward-to-go over all past updates: b_k. A
  position seen for the first time has b_k = 0.

DRAS-DQL (§III-B, Eq. 4) is RLlib's DQN with its replay buffer and target network over
`DRASQModule`, epsilon decaying from 1.0 by x0.995 (`DQLSettings.epsilon_schedule`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.algorithms.dqn import DQNConfig
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.execution.rollout_ops import synchronous_parallel_sample
from ray.rllib.utils.metrics import (
    ENV_RUNNER_RESULTS, ENV_RUNNER_SAMPLING_TIMER, LEARNER_RESULTS, LEARNER_UPDATE_TIMER, NUM_ENV_STEPS_SAMPLED_LIFETIME,
    SYNCH_WORKER_WEIGHTS_TIMER, TIMERS,
)
from ray.rllib.utils.typing import ModuleID

from schedrl.agents.dras.modules import DRASPGModule, module_spec
from schedrl.agents.returns import returns_to_go
from schedrl.agents.dras.settings import DQLSettings, PGSettings
from schedrl.agents.runners import RunnerSettings, with_runners

POSITION = "position_in_chunk"
"""Batch column: index k of a decision within its sampled episode chunk (the baseline's key)."""
BASELINE_MEAN_KEY = "baseline_mean"
RETURN_MEAN_KEY = "return_to_go_mean"
ENTROPY_KEY = "entropy"


class ReturnsToGo(ConnectorV2):
    """Learner connector: each decision's discounted reward-to-go within its episode chunk, and its position k."""

    def __init__(self, input_observation_space=None, input_action_space=None, *, gamma: float = 1.0):
        super().__init__(input_observation_space, input_action_space)
        self.gamma = gamma

    def __call__(self, *, rl_module, episodes, batch: dict[str, Any], **kwargs):
        for episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            returns = returns_to_go(episode.get_rewards(), self.gamma).astype(np.float32)
            n = len(episode)
            self.add_n_batch_items(batch, Columns.RETURNS_TO_GO, returns, n, episode)
            self.add_n_batch_items(batch, POSITION, np.arange(n, dtype=np.int64), n, episode)
        return batch


class PositionBaseline:
    """b_k: the mean reward-to-go at position k over all past updates (DRAS Eq. 3)."""

    def __init__(self) -> None:
        self.sums = np.zeros(0)
        self.counts = np.zeros(0)

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        out = np.zeros(len(positions))
        known = positions < len(self.sums)
        p = positions[known]
        out[known] = np.divide(self.sums[p], self.counts[p], out=np.zeros(len(p)), where=self.counts[p] > 0)
        return out

    def add(self, positions: np.ndarray, returns: np.ndarray) -> None:
        size = int(positions.max(initial=-1)) + 1
        if size > len(self.sums):
            self.sums = np.pad(self.sums, (0, size - len(self.sums)))
            self.counts = np.pad(self.counts, (0, size - len(self.counts)))
        np.add.at(self.sums, positions, returns)
        np.add.at(self.counts, positions, 1.0)

    def get_state(self) -> dict:
        return {"sums": self.sums.tolist(), "counts": self.counts.tolist()}

    def set_state(self, state: Mapping[str, Any]) -> None:
        self.sums = np.asarray(state["sums"], dtype=np.float64)
        self.counts = np.asarray(state["counts"], dtype=np.float64)


class DRASPGLearner(TorchLearner):
    """REINFORCE with DRAS's per-position baseline (Eq. 3); one Adam step per minibatch of decisions."""

    def build(self) -> None:
        super().build()
        self._baselines: dict[ModuleID, PositionBaseline] = {}
        if self.config.add_default_connectors_to_learner_pipeline:
            self._learner_connector.prepend(ReturnsToGo(gamma=self.config.gamma))

    def baseline(self, module_id: ModuleID) -> PositionBaseline:
        return self._baselines.setdefault(module_id, PositionBaseline())

    def compute_loss_for_module(self, *, module_id: ModuleID, config, batch: dict[str, Any], fwd_out):
        module = self.module[module_id].unwrapped()
        dist = module.get_train_action_dist_cls().from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
        logp = dist.logp(batch[Columns.ACTIONS])
        returns = batch[Columns.RETURNS_TO_GO]
        positions = batch[POSITION].detach().cpu().numpy()
        baseline = self.baseline(module_id)
        b = torch.as_tensor(baseline(positions), dtype=returns.dtype, device=returns.device)
        loss = -torch.mean(logp * (returns - b))
        # this update's returns join the average only after being used against the past ones
        baseline.add(positions, returns.detach().cpu().numpy().astype(np.float64))
        self.metrics.log_value((module_id, RETURN_MEAN_KEY), float(returns.mean()), window=1)
        self.metrics.log_value((module_id, BASELINE_MEAN_KEY), float(b.mean()), window=1)
        self.metrics.log_value((module_id, ENTROPY_KEY), float(dist.entropy().detach().mean()), window=1)
        return loss

    def get_state(self, components=None, *, not_components=None, **kwargs):
        state = super().get_state(components, not_components=not_components, **kwargs)
        state["dras_baselines"] = {mid: b.get_state() for mid, b in self._baselines.items()}
        return state

    def set_state(self, state) -> None:
        super().set_state(state)
        for mid, b in (state.get("dras_baselines") or {}).items():
            self.baseline(mid).set_state(b)


class DRASPGConfig(AlgorithmConfig):
    """Config of `DRASPG`: AlgorithmConfig's fields; `minibatch_size` is the decisions per update."""

    def __init__(self, algo_class=None):
        super().__init__(algo_class=algo_class or DRASPG)
        self.num_epochs = 1
        self.shuffle_batch_per_epoch = False

    def get_default_learner_class(self):
        return DRASPGLearner

    def get_default_rl_module_spec(self) -> RLModuleSpec:
        return RLModuleSpec(module_class=DRASPGModule)


class DRASPG(Algorithm):
    """REINFORCE: sample a batch of decisions, one pass of consecutive minibatch updates, sync weights."""

    @classmethod
    def get_default_config(cls) -> DRASPGConfig:
        return DRASPGConfig()

    def training_step(self) -> None:
        with self.metrics.log_time((TIMERS, ENV_RUNNER_SAMPLING_TIMER)):
            episodes, runner_results = synchronous_parallel_sample(
                worker_set=self.env_runner_group, max_env_steps=self.config.total_train_batch_size,
                sample_timeout_s=self.config.sample_timeout_s, _uses_new_env_runners=True, _return_metrics=True)
        if not episodes:
            return
        self.metrics.aggregate(runner_results, key=ENV_RUNNER_RESULTS)
        steps = sum(len(e) for e in episodes)
        per_update = self.config.minibatch_size or steps
        with self.metrics.log_time((TIMERS, LEARNER_UPDATE_TIMER)):
            learner_results = self.learner_group.update(
                episodes=episodes,
                timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: self.metrics.peek(
                    (ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME))},
                num_epochs=1, minibatch_size=per_update, shuffle_batch_per_epoch=False,
                # whole minibatches only, in sampling order (a last partial one would wrap around)
                num_total_minibatches=max(1, steps // per_update))
        self.metrics.aggregate(learner_results, key=LEARNER_RESULTS)
        with self.metrics.log_time((TIMERS, SYNCH_WORKER_WEIGHTS_TIMER)):
            self.env_runner_group.sync_weights(from_worker_or_learner_group=self.learner_group, inference_only=True)


def _common(config: AlgorithmConfig, settings: RunnerSettings, env, env_config: Mapping[str, Any]) -> AlgorithmConfig:
    config = (config
              .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
              .environment(env=env, env_config=dict(env_config)))
    return (with_runners(config, settings)
            .learners(num_learners=0)
            .debugging(log_level="ERROR", log_sys_usage=False, seed=settings.seed))


def build_pg_config(settings: PGSettings, env, env_config: Mapping[str, Any],
                    model_config: Mapping[str, Any] | None = None) -> DRASPGConfig:
    """The RLlib config of DRAS-PG (or Decima-PG, by `env_config["two_level"]`) on `env` (class or id)."""
    config = _common(DRASPGConfig(), settings, env, env_config)
    return (
        config
        .training(lr=settings.lr, gamma=settings.gamma, train_batch_size_per_learner=settings.train_batch_size_per_learner,
                  minibatch_size=min(settings.decisions_per_update, settings.train_batch_size_per_learner),
                  num_epochs=1, shuffle_batch_per_epoch=False, grad_clip=None)
        .rl_module(rl_module_spec=module_spec("pg", settings.model, model_config))
    )


def build_dql_config(settings: DQLSettings, env, env_config: Mapping[str, Any],
                     model_config: Mapping[str, Any] | None = None) -> DQNConfig:
    """The RLlib DQN config of DRAS-DQL on `env` (class or id)."""
    config = _common(DQNConfig(), settings, env, env_config)
    training: dict[str, Any] = dict(
        lr=settings.lr, gamma=settings.gamma, train_batch_size_per_learner=settings.train_batch_size_per_learner,
        epsilon=settings.epsilon_schedule(), double_q=settings.double_q, dueling=False, num_atoms=1, n_step=1,
        target_network_update_freq=settings.target_network_update_freq,
        num_steps_sampled_before_learning_starts=settings.learning_starts,
        replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": settings.replay_capacity},
    )
    return (
        config
        .training(**training)
        .env_runners(rollout_fragment_length=settings.rollout_fragment_length)
        .reporting(min_sample_timesteps_per_iteration=settings.decisions_per_iteration)
        .rl_module(rl_module_spec=module_spec("dql", settings.model, model_config))
    )
