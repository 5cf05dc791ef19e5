"""Direct Future Prediction (Dosovitskiy & Koltun 2017) as a custom RLlib Algorithm (new API stack).

DFP is neither a policy-gradient nor a Q-learning method: the network regresses the future changes
of a measurement vector, m_{t+τ} - m_t, for the action taken, and acts greedily on goal · prediction.
One `training_step`:

1. env runners play whole episodes ε-greedily (`DFPModule._forward_exploration`);
2. each episode's measurement sequence gives every decision its targets at the offsets τ
   (`targets.future_targets`); the decisions go into a replay buffer (`replay.ReplayBuffer`);
3. `updates_per_iteration` minibatches drawn uniformly from the buffer train the network with the
   MSE on the taken action's predicted vector (`DFPTorchLearner`);
4. the new weights go to the env runners.

The replay buffer lives in the algorithm (the driver) and is not checkpointed: a resumed run refills
it from new episodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig, NotProvided
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch
from ray.rllib.utils.metrics import (
    ENV_RUNNER_RESULTS, ENV_RUNNER_SAMPLING_TIMER, LEARNER_RESULTS, LEARNER_UPDATE_TIMER,
    NUM_ENV_STEPS_SAMPLED_LIFETIME, SYNCH_WORKER_WEIGHTS_TIMER, TIMERS,
)

from schedrl.agents.mrsch.config import OFFSET_WEIGHTS, OFFSETS
from schedrl.agents.mrsch.keys import DFP_MSE, DFP_PREDICTIONS, DFP_TARGET_MASK, DFP_TARGETS, EPSILON, OBS_MEASUREMENTS
from schedrl.agents.mrsch.modules import DFP_DEFAULTS, dfp_module_spec
from schedrl.agents.mrsch.replay import ReplayBuffer
from schedrl.agents.mrsch.settings import DFPSettings
from schedrl.agents.mrsch.targets import future_targets
from schedrl.agents.runners import with_runners


class DFPConfig(AlgorithmConfig):
    """RLlib config of `DFP`: the usual AlgorithmConfig plus DFP's replay and update settings."""

    def __init__(self, algo_class=None):
        super().__init__(algo_class=algo_class or DFP)
        self.lr = 1e-4
        self.dfp_minibatch_size = 64
        self.replay_capacity = 20_000
        self.updates_per_iteration = 32
        self.episodes_per_iteration = 1
        self.learning_starts = 256
        self.offsets = OFFSETS
        # targets need the measurements after each decision: sample whole episodes
        self.batch_mode = "complete_episodes"

    def training(self, *, dfp_minibatch_size=NotProvided, replay_capacity=NotProvided,
                 updates_per_iteration=NotProvided, episodes_per_iteration=NotProvided,
                 learning_starts=NotProvided, offsets=NotProvided, **kwargs) -> "DFPConfig":
        """DFP's settings (see `DFPSettings`), then AlgorithmConfig's (`lr`, ...)."""
        super().training(**kwargs)
        for name, value in (("dfp_minibatch_size", dfp_minibatch_size), ("replay_capacity", replay_capacity),
                            ("updates_per_iteration", updates_per_iteration),
                            ("episodes_per_iteration", episodes_per_iteration),
                            ("learning_starts", learning_starts), ("offsets", offsets)):
            if value is not NotProvided:
                setattr(self, name, tuple(value) if name == "offsets" else value)
        return self

    def get_default_rl_module_spec(self):
        return dfp_module_spec("small", {"offsets": len(self.offsets)})

    def get_default_learner_class(self):
        return DFPTorchLearner


class DFPTorchLearner(TorchLearner):
    """DFP's loss: mean squared error between the taken action's predicted measurement changes and
    the observed ones, over the offsets still inside the episode (DFP Eq. 5)."""

    def compute_loss_for_module(self, *, module_id, config, batch: dict[str, Any], fwd_out: dict[str, Any]):
        predictions = fwd_out[DFP_PREDICTIONS]
        actions = batch[Columns.ACTIONS].long()
        taken = predictions[torch.arange(actions.shape[0], device=actions.device), actions]
        valid = batch[DFP_TARGET_MASK]
        error = ((taken - batch[DFP_TARGETS]) ** 2).mean(-1) * valid
        loss = error.sum() / valid.sum().clamp(min=1.0)
        self.metrics.log_value((module_id, DFP_MSE), loss.detach(), window=1)
        return loss


def episode_rows(episode, offsets) -> dict[str, Any]:
    """One sampled episode (chunk) as replay rows: observations, actions and DFP targets."""
    n = len(episode)
    obs = episode.get_observations(slice(0, n))
    actions = np.asarray(episode.get_actions(slice(0, n)))
    targets, valid = future_targets(obs[OBS_MEASUREMENTS], offsets)
    rows = {f"{Columns.OBS}/{k}": np.asarray(v) for k, v in obs.items()}
    rows.update({Columns.ACTIONS: actions.astype(np.int64), DFP_TARGETS: targets, DFP_TARGET_MASK: valid})
    return rows


def train_batch(rows: Mapping[str, np.ndarray]) -> SampleBatch:
    """Replay rows as a SampleBatch with the observation dict nested under `obs`."""
    prefix = f"{Columns.OBS}/"
    obs = {k[len(prefix):]: v for k, v in rows.items() if k.startswith(prefix)}
    data = {k: v for k, v in rows.items() if not k.startswith(prefix)}
    return SampleBatch({Columns.OBS: obs, **data})


def sample_fresh_episodes(runner, n: int) -> tuple[list, Any]:
    """`n` whole episodes from an env runner, and its metrics.

    RLlib 2.60's `SingleAgentEnvRunner.sample(num_episodes=n)` resets its envs with the runner's seed on
    every call (it sets `_needs_initial_reset` after each episode-count sample), so each iteration would
    replay the very same episodes: DFP then learned from one training sequence over and over (found
    2026-11-23: the training wait stayed at the same value to two decimals for hundreds of iterations).
    The first call seeds the envs; later calls reset them without a seed, so each env's own seeded RNG
    draws the next episode from its episode source (the curriculum, random starts): still reproducible.
    """
    episodes = runner.sample(num_episodes=n, explore=True)
    if hasattr(runner, "_needs_initial_reset"):
        runner._needs_initial_reset = False
    return episodes, runner.get_metrics()


class DFP(Algorithm):
    """Direct Future Prediction: sample whole episodes, replay, regress future measurement changes."""

    @classmethod
    def get_default_config(cls) -> DFPConfig:
        return DFPConfig()

    def setup(self, config) -> None:
        super().setup(config)
        self.replay = ReplayBuffer(self.config.replay_capacity)
        self._replay_rng = np.random.default_rng(self.config.seed)

    def _sample_episodes(self) -> tuple[list, list]:
        n = self.config.episodes_per_iteration
        results = self.env_runner_group.foreach_env_runner(
            lambda runner: sample_fresh_episodes(runner, n),
            local_env_runner=self.env_runner_group.num_remote_workers() <= 0,
        )
        episodes = [e for episodes, _ in results for e in episodes]
        return episodes, [m for _, m in results]

    def _epsilon(self) -> float:
        cfg = {**DFP_DEFAULTS, **dict(self.config.get_rl_module_spec().model_config or {})}
        t = self.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0)
        return max(float(cfg["epsilon_floor"]), float(cfg["epsilon_start"]) * float(cfg["epsilon_decay"]) ** t)

    def training_step(self) -> None:
        with self.metrics.log_time((TIMERS, ENV_RUNNER_SAMPLING_TIMER)):
            episodes, runner_metrics = self._sample_episodes()
        self.metrics.aggregate(runner_metrics, key=ENV_RUNNER_RESULTS)
        for episode in episodes:
            if len(episode):
                self.replay.add(episode_rows(episode, self.config.offsets))
        self.metrics.log_value(EPSILON, self._epsilon(), window=1)
        self.metrics.log_value("replay_size", len(self.replay), window=1)
        if len(self.replay) < max(self.config.learning_starts, 1):
            return
        mb = self.config.dfp_minibatch_size
        rows = self.replay.sample(mb * self.config.updates_per_iteration, self._replay_rng)
        batch = MultiAgentBatch({DEFAULT_MODULE_ID: train_batch(rows)}, env_steps=len(rows[Columns.ACTIONS]))
        lifetime = self.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0)
        with self.metrics.log_time((TIMERS, LEARNER_UPDATE_TIMER)):
            results = self.learner_group.update(batch=batch, minibatch_size=mb, num_epochs=1,
                                                timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: lifetime})
        self.metrics.aggregate(results, key=LEARNER_RESULTS)
        with self.metrics.log_time((TIMERS, SYNCH_WORKER_WEIGHTS_TIMER)):
            self.env_runner_group.sync_weights(from_worker_or_learner_group=self.learner_group, inference_only=True)


def build_dfp_config(settings: DFPSettings, env: str | type, env_config: Mapping[str, Any], model: str = "small",
                     model_config: Mapping[str, Any] | None = None) -> DFPConfig:
    """The RLlib `DFPConfig` training DFP network `model` on `env` (an env class or a gymnasium id;
    `schedrl/` ids are qualified as `schedrl.envs:<id>` so env runners register the envs first).
    Offsets and their weights come from `env_config` (MRSch's by default)."""
    if isinstance(env, str) and ":" not in env and env.startswith("schedrl/"):
        env = f"schedrl.envs:{env}"
    offsets = tuple(int(t) for t in env_config.get("offsets", OFFSETS))
    weights = tuple(float(w) for w in env_config.get("offset_weights", OFFSET_WEIGHTS))
    module = dfp_module_spec(model, {"offsets": len(offsets), "offset_weights": weights,
                                     "epsilon_decay": settings.epsilon_decay, "epsilon_floor": settings.epsilon_floor,
                                     **dict(model_config or {})})
    config = (DFPConfig()
              .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
              .environment(env=env, env_config=dict(env_config)))
    return (
        with_runners(config, settings, batch_mode="complete_episodes")
        .training(lr=settings.lr, dfp_minibatch_size=settings.minibatch_size,
                  replay_capacity=settings.replay_capacity, updates_per_iteration=settings.updates_per_iteration,
                  episodes_per_iteration=settings.episodes_per_iteration, learning_starts=settings.learning_starts,
                  offsets=offsets)
        .rl_module(rl_module_spec=module)
        .debugging(seed=settings.seed, log_level="ERROR")
    )
