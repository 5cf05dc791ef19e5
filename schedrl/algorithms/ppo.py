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

import math
import time
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import ray
import torch
from ray.exceptions import ActorDiedError
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI
from ray.rllib.utils.typing import ModuleID

from schedrl.models.registry import module_spec

VF_LR_KEY = "vf_lr"
"""``learner_config_dict`` key: learning rate of the value-network optimizer."""
TARGET_KL_KEY = "target_kl"
"""``learner_config_dict`` key: KL early-stopping target (None disables early stopping)."""
POLICY_UPDATE_STEPS_KEY = "policy_update_steps"
"""Learner metric: policy optimizer steps taken in the last update (at most num_epochs x minibatches)."""
POLICY_EARLY_STOPPED_KEY = "policy_early_stopped"
"""Learner metric: 1.0 if the last update stopped its policy steps on KL, else 0.0."""

KL_STOP_FACTOR = 1.5
"""Spinning Up PPO (used by RLScheduler): policy steps stop once KL > 1.5 * target_kl."""


@dataclass(frozen=True)
class PPOSettings:
    """PPO hyperparameters; defaults are RLScheduler's (paper §V-A and the authors' code).

    "Authors' code" is DIR-LAB/deep-batch-scheduler, ``ppo-pick-jobs.py`` (the ``ppo()``
    signature and its command-line defaults), the implementation the paper cites for "more
    hyperparameters". See the module docstring for how the policy/value learning rates and the
    KL target map onto RLlib.
    """

    gamma: float = 1.0  # authors' code: --gamma default 1 (undiscounted episode reward)
    """Discount factor."""
    lambda_: float = 0.97  # authors' code: ppo(lam=0.97)
    """GAE lambda."""
    clip_param: float = 0.2  # authors' code: ppo(clip_ratio=0.2)
    """PPO ratio clipping."""
    lr: float = 3e-4  # authors' code: ppo(pi_lr=3e-4)
    """Learning rate of the policy optimizer."""
    vf_lr: float = 1e-3  # authors' code: ppo(vf_lr=1e-3); paper §V-A: "learning rate is 10^-3"
    """Learning rate of the value-network optimizer (a second Adam, see module docstring)."""
    target_kl: float | None = 0.01  # authors' code: ppo(target_kl=0.01)
    """Policy steps of an update stop once approx. KL > 1.5 * target_kl; None never stops."""
    num_epochs: int = 80  # paper §V-A: "80 iterations"; authors' code: train_pi_iters = train_v_iters = 80
    """Passes over the train batch per update."""
    train_batch_size_per_learner: int = 100 * 256  # paper §V-A: 100 trajectories x 256 jobs per epoch
    """Env steps sampled per training iteration."""
    minibatch_size: int | None = None  # Spinning Up takes full-batch gradient steps
    """Minibatch size; None means the whole train batch (one gradient step per epoch)."""
    entropy_coeff: float = 0.0  # Spinning Up PPO has no entropy bonus
    """Entropy bonus coefficient."""
    vf_clip_param: float = math.inf  # Spinning Up's value loss is plain, unclipped MSE
    """Clip on the per-sample value loss (RLlib's default 10 would cap large bounded slowdowns)."""
    num_env_runners: int = 1  # ours: 2-core machines fit one runner beside the learner
    """Sampling processes; 0 samples in the driver (tests, debugging)."""
    num_envs_per_env_runner: int = 4  # ours: vectorising pays more than runners on few cores
    """Environments stepped together by each env runner."""
    num_gpus_per_learner: float = 0.0  # ours: the kernel network is too small to gain from a GPU
    """GPUs for the (single, local) learner."""
    seed: int | None = 0  # authors' code: ppo(seed=0)
    """Seed for RLlib (modules, env runners, env resets); None leaves runs unseeded."""
    env_runner_resources: Mapping[str, float] | None = None
    """Custom Ray resources each env runner requires (``{"sampler": 1}``): runners go only to nodes declaring them."""
    restart_failed_env_runners: bool = True
    """Restart an env runner whose process or node died (a Ray actor restart) and keep training."""
    max_env_runner_restarts: int = 10  # ours: rides out a few node losses; a crash loop still ends the run
    """Restarts allowed per env runner; training fails once every runner is dead for good."""

    def __post_init__(self) -> None:
        problems = []
        if not 0.0 <= self.gamma <= 1.0:
            problems.append(f"gamma={self.gamma} must be in [0, 1]")
        if not 0.0 <= self.lambda_ <= 1.0:
            problems.append(f"lambda_={self.lambda_} must be in [0, 1]")
        for name in ("clip_param", "lr", "vf_lr", "vf_clip_param"):
            if not getattr(self, name) > 0:
                problems.append(f"{name}={getattr(self, name)} must be > 0")
        if self.target_kl is not None and not self.target_kl > 0:
            problems.append(f"target_kl={self.target_kl} must be > 0 or None")
        for name in ("num_epochs", "train_batch_size_per_learner", "num_envs_per_env_runner"):
            if getattr(self, name) < 1:
                problems.append(f"{name}={getattr(self, name)} must be >= 1")
        if self.minibatch_size is not None and not 1 <= self.minibatch_size <= self.train_batch_size_per_learner:
            problems.append(
                f"minibatch_size={self.minibatch_size} must be in [1, train_batch_size_per_learner="
                f"{self.train_batch_size_per_learner}] or None"
            )
        if self.entropy_coeff < 0:
            problems.append(f"entropy_coeff={self.entropy_coeff} must be >= 0")
        if self.num_env_runners < 0 or self.num_gpus_per_learner < 0:
            problems.append("num_env_runners and num_gpus_per_learner must be >= 0")
        for name, amount in (self.env_runner_resources or {}).items():
            if not isinstance(name, str) or not name or name in ("CPU", "GPU", "memory"):
                problems.append(f"env_runner_resources name {name!r} must be a custom resource name (not CPU/GPU/memory)")
            elif not (isinstance(amount, (int, float)) and amount > 0):
                problems.append(f"env_runner_resources[{name!r}]={amount!r} must be a number > 0")
        if self.max_env_runner_restarts < 0:
            problems.append(f"max_env_runner_restarts={self.max_env_runner_restarts} must be >= 0")
        if problems:
            raise ValueError("invalid PPOSettings: " + "; ".join(problems))


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
    iterations that end while no runner is up sample and train nothing (RLlib), and training
    fails once every runner is dead for good (:func:`fail_without_env_runners`).
    """
    if isinstance(env, str) and ":" not in env and env.startswith("schedrl/"):
        env = f"schedrl.envs:{env}"
    vectorize_mode = gym.VectorizeMode.VECTOR_ENTRY_POINT if vector_entry_point else gym.VectorizeMode.SYNC
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(env=env, env_config=dict(env_config))
        .env_runners(
            num_env_runners=settings.num_env_runners,
            num_envs_per_env_runner=settings.num_envs_per_env_runner,
            gym_env_vectorize_mode=vectorize_mode,
            custom_resources_per_env_runner=dict(settings.env_runner_resources or {}),
        )
        .fault_tolerance(
            restart_failed_env_runners=settings.restart_failed_env_runners,
            max_num_env_runner_restarts=settings.max_env_runner_restarts,
        )
        .learners(
            num_learners=0,
            num_gpus_per_learner=settings.num_gpus_per_learner,
            learner_class=RLSchedulerPPOLearner,
            learner_config_dict={VF_LR_KEY: settings.vf_lr, TARGET_KL_KEY: settings.target_kl},
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
        .callbacks(on_train_result=fail_without_env_runners)
        .rl_module(rl_module_spec=module_spec(model, model_config))
        .debugging(log_level="ERROR", log_sys_usage=False, seed=settings.seed)
    )


def fail_without_env_runners(algorithm, result: dict, **kwargs) -> None:
    """``on_train_result``: raise once every remote env runner is dead for good.

    RLlib 2.60 keeps iterating when none of its env runners can come back (restarts used up or
    switched off): the remaining iterations sample and train nothing and the run "finishes".
    Ray answers a ping to a restarting actor with ``ActorUnavailableError`` and to a dead one
    with ``ActorDiedError``; only if two rounds of pings, a second apart, all say dead is this an
    error (a runner dying again mid-ping is then seen restarting the second time).
    """
    group = algorithm.env_runner_group
    if group is None or group.num_remote_env_runners() == 0 or group.num_healthy_remote_env_runners() > 0:
        return
    actors = list(group._worker_manager.actors().values())
    timeout = algorithm.config.env_runner_health_probe_timeout_s
    for attempt in range(2):
        if attempt:
            time.sleep(1.0)
        for actor in actors:
            try:
                ray.get(actor.ping.remote(), timeout=timeout)
                return
            except ActorDiedError:
                continue
            except Exception:  # restarting, slow or unreachable for now: not known to be dead
                return
    config = algorithm.config
    raise RuntimeError(
        f"all {len(actors)} env runners died and cannot be restarted (restart_failed_env_runners="
        f"{config.restart_failed_env_runners}, max_env_runner_restarts={config.max_num_env_runner_restarts} "
        "each); training would go on without samples"
    )


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
