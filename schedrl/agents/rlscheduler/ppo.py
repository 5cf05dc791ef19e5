"""PPO as RLScheduler trains it, on RLlib's new API stack.

RLScheduler (Zhang et al., SC'20, §V-A) trains with the PPO-clip of OpenAI Spinning Up, whose
update differs from RLlib's in two ways that matter here, both reproduced by
:class:`RLSchedulerPPOLearner`:

* **Two optimizers.** The policy and the value network have separate Adam optimizers with their
  own learning rates (3e-4 and 1e-3). RLlib's PPO has one ``lr`` and a ``vf_loss_coeff``, but
  scaling the value loss is *not* an equivalent: Adam divides each gradient by its running RMS,
  so a constant factor on a loss barely changes the step of parameters that only that loss
  touches. Our modules share no layers between policy and value net, so two optimizers over the
  two disjoint parameter sets reproduce Spinning Up exactly (``vf_loss_coeff`` stays 1).
* **Early stopping on KL.** Each update runs up to ``num_epochs`` (80) full-batch gradient steps;
  the *policy* steps stop once the approximate KL ``mean(logp_old - logp)`` exceeds
  ``1.5 * target_kl``, while the value steps continue. RLlib's ``use_kl_loss``/``kl_target`` is a
  different algorithm (an adaptive KL penalty in the loss), so it is switched off.

Remaining differences, kept on purpose: RLlib samples a fixed number of env steps per iteration
(100 x 256 = 25,600), cutting the last episode and bootstrapping it with the value net, where
Spinning Up collects 100 whole trajectories; and RLlib's value targets are GAE(λ) returns where
Spinning Up regresses on discounted rewards-to-go (identical for λ = 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI
from ray.rllib.utils.typing import ModuleID

from schedrl.agents.overlapped_ppo import OVERLAP_KEY, OverlappedPPO
from schedrl.agents.rlscheduler.modules import module_spec
from schedrl.agents.runners import with_runners
from schedrl.agents.rlscheduler.settings import (  # noqa: F401  (re-exported)
    KL_STOP_FACTOR, POLICY_EARLY_STOPPED_KEY, POLICY_UPDATE_STEPS_KEY, TARGET_KL_KEY, VF_LR_KEY, WARM_START_KEY,
    PPOSettings,
)


def build_ppo_config(
    settings: PPOSettings,
    env: str | type,
    env_config: Mapping[str, Any],
    model: str = "kernel",
    model_config: Mapping[str, Any] | None = None,
    *,
    vector_entry_point: bool = False,
) -> PPOConfig:
    """An RLlib ``PPOConfig`` (new API stack) training policy network ``model`` on ``env``.

    ``env`` is an env class (called with the ``env_config`` dict) or a gymnasium id; ids in the
    ``schedrl/`` namespace are qualified as ``schedrl.envs:<id>`` so that env-runner processes
    import (and thereby register) the envs first. With ``vector_entry_point`` the env is natively
    vectorized: RLlib calls it once per runner with ``num_envs`` added to the config
    (``gym.VectorizeMode.VECTOR_ENTRY_POINT``) instead of wrapping single envs.
    Every PPO hyperparameter is set explicitly; RLlib's defaults are not RLScheduler's.
    Env runners that die (killed process, lost node) are restarted by Ray, up to
    ``settings.max_env_runner_restarts`` times each, on a node with ``settings.env_runner_resources``;
    iterations that end while no runner is up sample and train nothing (RLlib); the training driver
    fails the run once every runner is dead for good (`schedrl.training.callbacks`).
    """
    if isinstance(env, str) and ":" not in env and env.startswith("schedrl/"):
        env = f"schedrl.envs:{env}"
    vectorize_mode = gym.VectorizeMode.VECTOR_ENTRY_POINT if vector_entry_point else gym.VectorizeMode.SYNC
    config = (PPOConfig(algo_class=OverlappedPPO)
              .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
              .environment(env=env, env_config=dict(env_config)))
    return (
        with_runners(
            config, settings,
            gym_env_vectorize_mode=vectorize_mode,
            # overlapping: a runner holds a sampling call and a weight update queued behind it
            max_requests_in_flight_per_env_runner=2 if settings.overlap_sampling else 1,
            # RLlib merges the runners' connector states after every iteration with a blocking call, which would wait
            # for the sampling in flight; these connectors hold no state (no observation filters), so overlapping skips it
            merge_env_runner_states=False if settings.overlap_sampling else "training_only",
            broadcast_env_runner_states=not settings.overlap_sampling,
        )
        .learners(
            num_learners=0,
            learner_class=RLSchedulerPPOLearner,
            learner_config_dict={VF_LR_KEY: settings.vf_lr, TARGET_KL_KEY: settings.target_kl,
                                 WARM_START_KEY: warm_start_spec(settings), OVERLAP_KEY: settings.overlap_sampling},
        )
        .training(
            gamma=settings.gamma,
            lambda_=settings.lambda_,
            use_gae=True,
            use_critic=True,
            clip_param=settings.clip_param,
            lr=settings.lr,
            num_epochs=settings.num_epochs,
            train_batch_size_per_learner=settings.train_batch_size_per_learner,
            # None: RLlib then takes the whole batch per step (a fixed size would wrap around,
            # because PPO appends one bootstrap step per episode to the sampled batch)
            minibatch_size=settings.minibatch_size,
            shuffle_batch_per_epoch=True,
            entropy_coeff=settings.entropy_coeff,
            vf_loss_coeff=1.0,
            vf_clip_param=settings.vf_clip_param,
            use_kl_loss=False,
            kl_coeff=0.0,
            grad_clip=None,
        )
        .rl_module(rl_module_spec=module_spec(model, model_config))
        .debugging(log_level="ERROR", log_sys_usage=False, seed=settings.seed)
    )


def warm_start_spec(settings: PPOSettings) -> dict[str, Any]:
    """What the training callback's warm start (`warm_start.py`) needs; teacher None: off. The agent's
    `warm_start` takes seed and gamma from the built algorithm's config, where a sweep's searched values are."""
    return {"teacher": settings.warm_start, "episodes": settings.warm_start_episodes,
            "epochs": settings.warm_start_epochs, "smoothing": settings.warm_start_smoothing,
            "clones": settings.warm_start_clones, "seed": settings.seed or 0,
            "gamma": settings.gamma}


class RLSchedulerPPOLearner(PPOTorchLearner):
    """RLlib's PPO learner with Spinning Up's two optimizers and KL early stopping.

    Value parameters are those under the module's ``get_non_inference_attributes()`` (modules
    must implement ``InferenceOnlyAPI``); every other parameter belongs to the policy. The
    policy optimizer uses ``config.lr``, the value optimizer ``learner_config_dict["vf_lr"]``.
    During one ``update()`` the policy optimizer steps until the approximate KL, measured before
    a step, exceeds ``1.5 * learner_config_dict["target_kl"]``: that step is still taken and the
    later ones are skipped (as in Spinning Up); the value optimizer always steps.
    """

    def __init__(self, *args, **kwargs) -> None:
        self._policy_params: dict[ModuleID, list[torch.nn.Parameter]] = {}
        self._policy_stopped: dict[ModuleID, bool] = {}
        self._policy_steps: dict[ModuleID, int] = {}
        self._approx_kl: dict[ModuleID, float] = {}
        super().__init__(*args, **kwargs)

    def configure_optimizers_for_module(self, module_id: ModuleID, config=None) -> None:
        module = self.module[module_id].unwrapped()
        if not isinstance(module, InferenceOnlyAPI) or not module.get_non_inference_attributes():
            raise ValueError(
                f"{type(self).__name__} needs module {module_id!r} ({type(module).__name__}) to implement "
                "InferenceOnlyAPI.get_non_inference_attributes(), naming its value-network attributes"
            )
        value_params = [
            p for attr in module.get_non_inference_attributes() for p in _nested_attr(module, attr).parameters()
        ]
        value_ids = {id(p) for p in value_params}
        policy_params = [p for p in self.get_parameters(module) if id(p) not in value_ids]
        self.register_optimizer(
            module_id=module_id,
            optimizer_name="policy",
            optimizer=torch.optim.Adam(policy_params),
            params=policy_params,
            lr_or_lr_schedule=config.lr,
        )
        self.register_optimizer(
            module_id=module_id,
            optimizer_name="value",
            optimizer=torch.optim.Adam(value_params),
            params=value_params,
            lr_or_lr_schedule=config.learner_config_dict[VF_LR_KEY],
        )
        self._policy_params[module_id] = policy_params

    def before_gradient_based_update(self, *, timesteps: dict[str, Any]) -> None:
        super().before_gradient_based_update(timesteps=timesteps)
        self._policy_stopped.clear()
        self._policy_steps.clear()
        self._approx_kl.clear()

    def compute_loss_for_module(self, *, module_id: ModuleID, config, batch: dict[str, Any], fwd_out):
        loss = super().compute_loss_for_module(module_id=module_id, config=config, batch=batch, fwd_out=fwd_out)
        if config.learner_config_dict.get(TARGET_KL_KEY) is not None:
            module = self.module[module_id].unwrapped()
            with torch.no_grad():
                dist = module.get_train_action_dist_cls().from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
                kl = batch[Columns.ACTION_LOGP] - dist.logp(batch[Columns.ACTIONS])
                # the artificial bootstrap timestep PPO appends to each episode is masked out
                mask = batch.get(Columns.LOSS_MASK)
                self._approx_kl[module_id] = float(kl[mask].mean() if mask is not None else kl.mean())
        return loss

    def apply_gradients(self, gradients_dict) -> None:
        for module_id, params in self._policy_params.items():
            if self._policy_stopped.get(module_id, False):
                for p in params:
                    gradients_dict.pop(self.get_param_ref(p), None)
                    p.grad = None  # Adam skips parameters without a gradient (no momentum drift)
        super().apply_gradients(gradients_dict)
        for module_id in self._policy_params:
            if not self._policy_stopped.get(module_id, False):
                self._policy_steps[module_id] = self._policy_steps.get(module_id, 0) + 1
            target = self.config.get_config_for_module(module_id).learner_config_dict.get(TARGET_KL_KEY)
            kl = self._approx_kl.get(module_id)
            if target is not None and kl is not None and kl > KL_STOP_FACTOR * target:
                self._policy_stopped[module_id] = True

    def after_gradient_based_update(self, *, timesteps: dict[str, Any]) -> None:
        super().after_gradient_based_update(timesteps=timesteps)
        for module_id in self._policy_params:
            self.metrics.log_value((module_id, POLICY_UPDATE_STEPS_KEY), self._policy_steps.get(module_id, 0), window=1)
            self.metrics.log_value(
                (module_id, POLICY_EARLY_STOPPED_KEY), float(self._policy_stopped.get(module_id, False)), window=1
            )


def _nested_attr(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj
