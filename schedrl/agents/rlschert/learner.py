"""PPO with RLSchert's imitation term (§3.5, Eq. 11) on RLlib's new API stack, and the config builder.

Eq. 11: L = PPO's clipped surrogate + alpha_v MSE(v, R) + alpha_e entropy + alpha_t (-log pi(a_teacher | s)).
`RLSchertPPOLearner` adds the last term to RLlib's PPO loss. The teacher's action is part of every
observation (`keys.OBS_TEACHER`, a one-hot the networks never read), so it reaches the learner in the
train batch with no extra connector. alpha_t follows `settings.imitation_schedule` over the env steps
sampled so far (RLSchert: 0.5 at the start, 0 at the end).

KL early stop (Table 4's KL target 0.01): during one update, once the approximate KL
mean(logp_old - logp) of a minibatch, measured before its gradient step, exceeds
`kl_stop_factor x target_kl` (1.5 x 0.01, Spinning Up's rule), the policy takes no more steps in
that update. With `value_after_kl_stop` (the default, as Spinning Up's PPO, whose value function
always takes all its steps) the rest of the update's minibatches still train the value network on
the value loss alone (policy and value networks are separate, so the policy does not move); without
it the whole step is skipped, value included (the behaviour before 2026-11-23: the value network then
got about 20 of 160 steps per update and its loss stayed near 8,000). RLlib's adaptive KL penalty
(`use_kl_loss`) is a different algorithm and is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.evaluation.postprocessing import Postprocessing
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME
from ray.rllib.utils.typing import ModuleID

from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.keys import OBS_TEACHER
from schedrl.agents.rlschert.modules import module_spec
from schedrl.agents.runners import with_runners
from schedrl.agents.rlschert.settings import (
    IMITATION_LOSS_KEY, IMITATION_WEIGHT_KEY, KL_STOP_FACTOR_KEY, POLICY_STEPS_KEY, SCHEDULE_KEY,
    TARGET_KL_KEY, TEACHER_AGREEMENT_KEY, VALUE_AFTER_STOP_KEY, VALUE_STEPS_KEY, WARM_START_KEY, DISCOUNT_KEY,
    RLSchertSettings, imitation_weight,
)


def imitation_loss(logits: torch.Tensor, teacher: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean of -log pi(teacher action | s) over the (loss-masked) samples; `teacher` is one-hot (B, A)."""
    nll = -(torch.log_softmax(logits, dim=-1) * teacher).sum(-1)
    return nll[mask].mean() if mask is not None else nll.mean()


class RLSchertPPOLearner(PPOTorchLearner):
    """RLlib's PPO loss + alpha_t x imitation loss toward the env's teacher; KL early stop within an update."""

    def build(self) -> None:
        super().build()
        if self.config.learner_config_dict.get(DISCOUNT_KEY) == "time" and self._learner_connector is not None:
            # γ per time step instead of per decision (advantages.py): our GAE replaces RLlib's at the pipeline's end
            from ray.rllib.connectors.learner import GeneralAdvantageEstimation

            from schedrl.agents.rlschert.advantages import TimeStepGAE

            self._learner_connector.remove(GeneralAdvantageEstimation)
            void = RLSchertEnvConfig.from_dict(self.config.env_config).dtsim_config().void_action
            self._learner_connector.append(TimeStepGAE(gamma=self.config.gamma, lambda_=self.config.lambda_,
                                                       void_action=void))
        self._alpha: dict[ModuleID, float] = {}
        self._stopped: dict[ModuleID, bool] = {}
        self._steps: dict[ModuleID, int] = {}
        self._value_steps: dict[ModuleID, int] = {}

    def before_gradient_based_update(self, *, timesteps: dict[str, Any]) -> None:
        super().before_gradient_based_update(timesteps=timesteps)
        t = timesteps.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
        for module_id in self.module.keys():
            schedule = self.config.get_config_for_module(module_id).learner_config_dict[SCHEDULE_KEY]
            self._alpha[module_id] = imitation_weight(schedule, t)
        self._stopped.clear()
        self._steps.clear()
        self._value_steps.clear()

    def _value_after_stop(self, module_id: ModuleID) -> bool:
        return self.config.get_config_for_module(module_id).learner_config_dict.get(VALUE_AFTER_STOP_KEY, True)

    def compute_loss_for_module(self, *, module_id: ModuleID, config, batch: dict[str, Any], fwd_out):
        logits = fwd_out[Columns.ACTION_DIST_INPUTS]
        # PPO appends an artificial bootstrap step to each episode chunk; it is masked out of every term
        mask = batch.get(Columns.LOSS_MASK)
        module = self.module[module_id].unwrapped()
        with torch.no_grad():
            dist = module.get_train_action_dist_cls().from_logits(logits)
            kl = batch[Columns.ACTION_LOGP] - dist.logp(batch[Columns.ACTIONS])
            kl = kl[mask] if mask is not None else kl
            limit = config.learner_config_dict[KL_STOP_FACTOR_KEY] * config.learner_config_dict[TARGET_KL_KEY]
            if float(kl.mean()) > limit:
                self._stopped[module_id] = True
        if self._stopped.get(module_id, False):
            if not self._value_after_stop(module_id):
                return (logits * 0.0).sum()  # no step at all (apply_gradients skips it)
            # the policy has stopped for this update; the value network keeps fitting the value targets
            error = torch.pow(module.compute_values(batch) - batch[Postprocessing.VALUE_TARGETS], 2.0)
            self._value_steps[module_id] = self._value_steps.get(module_id, 0) + 1
            return config.vf_loss_coeff * (error[mask].mean() if mask is not None else error.mean())
        loss = super().compute_loss_for_module(module_id=module_id, config=config, batch=batch, fwd_out=fwd_out)
        teacher = batch[Columns.OBS][OBS_TEACHER]
        imitation = imitation_loss(logits, teacher, mask)
        alpha = self._alpha.get(module_id, 0.0)
        with torch.no_grad():
            agree = (logits.argmax(-1) == teacher.argmax(-1)).float()
            agree = agree[mask] if mask is not None else agree
        self.metrics.log_value((module_id, IMITATION_WEIGHT_KEY), alpha, window=1)
        self.metrics.log_value((module_id, IMITATION_LOSS_KEY), float(imitation.detach()))
        self.metrics.log_value((module_id, TEACHER_AGREEMENT_KEY), float(agree.mean()))
        self._steps[module_id] = self._steps.get(module_id, 0) + 1
        return loss + alpha * imitation

    def apply_gradients(self, gradients_dict) -> None:
        if all(self._stopped.get(m, False) and not self._value_after_stop(m) for m in self.module.keys()):
            return  # every module has stopped outright: no step
        # value-only steps leave the policy network's gradients None: Adam then leaves those parameters alone
        super().apply_gradients({pid: g for pid, g in gradients_dict.items() if g is not None})

    def after_gradient_based_update(self, *, timesteps: dict[str, Any]) -> None:
        super().after_gradient_based_update(timesteps=timesteps)
        for module_id in self.module.keys():
            self.metrics.log_value((module_id, POLICY_STEPS_KEY), self._steps.get(module_id, 0), window=1)
            self.metrics.log_value((module_id, VALUE_STEPS_KEY), self._value_steps.get(module_id, 0), window=1)


def build_ppo_config(settings: RLSchertSettings, env: str | type, env_config: Mapping[str, Any],
                     model_config: Mapping[str, Any] | None = None) -> PPOConfig:
    """The RLlib `PPOConfig` (new API stack) training `settings.model` on `env` with the imitation term.

    `env` is an env class or a gymnasium id; ids in the `schedrl/` namespace are qualified as
    `schedrl.envs:<id>` so env-runner processes register the envs first. Every PPO hyperparameter is
    set explicitly (RLSchert Table 4; RLlib's defaults are not the paper's).
    """
    if isinstance(env, str) and ":" not in env and env.startswith("schedrl/"):
        env = f"schedrl.envs:{env}"
    s = settings
    if s.kill_head != "flat":  # the paper's network keeps its old spec, so earlier checkpoints load unchanged
        model_config = {"kill_head": s.kill_head, **dict(model_config or {})}
    config = (PPOConfig()
              .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
              .environment(env=env, env_config=dict(env_config)))
    return (
        with_runners(config, s, gym_env_vectorize_mode=gym.VectorizeMode.SYNC)
        .learners(num_learners=0, learner_class=RLSchertPPOLearner,
                  learner_config_dict={SCHEDULE_KEY: [list(p) for p in s.imitation_schedule],
                                       TARGET_KL_KEY: s.target_kl, KL_STOP_FACTOR_KEY: s.kl_stop_factor,
                                       VALUE_AFTER_STOP_KEY: s.value_after_kl_stop,
                                       WARM_START_KEY: s.warm_start_spec(), DISCOUNT_KEY: s.discount})
        .training(gamma=s.gamma, lambda_=s.lambda_, use_gae=True, use_critic=True, clip_param=s.clip_param, lr=s.lr,
                  num_epochs=s.num_epochs, train_batch_size_per_learner=s.train_batch_size_per_learner,
                  minibatch_size=s.minibatch_size, shuffle_batch_per_epoch=True, entropy_coeff=s.entropy_coeff,
                  vf_loss_coeff=s.vf_loss_coeff,
                  # Eq. 9 returns reach hundreds: RLlib's default value clip (10) would cut every target
                  vf_clip_param=float("inf"), use_kl_loss=False, kl_coeff=0.0, grad_clip=None)
        .rl_module(rl_module_spec=module_spec(s.model, model_config))
        .debugging(log_level="ERROR", log_sys_usage=False, seed=s.seed)
    )
