"""Base RLModule for policies that pick one job out of a masked queue of job rows.

Every RLScheduler policy network (the kernel network and the Table IV ablations) sees the same
Dict observation: a ``(MAX_OBSV_SIZE, F)`` job matrix and a ``(MAX_OBSV_SIZE,)`` 0/1 mask. This
module owns everything they share, so it is written once:

* reading the observation by the keys in :mod:`schedrl.agents.rlscheduler.keys`;
* masking: ``mask_logits`` (`schedrl/agents/masking.py`: finite, so PPO's ratios and
  gradients stay finite where ``-inf`` would give NaN);
* the value network (RLScheduler Fig. 6: a 3-layer MLP over the flattened job matrix), which is
  built only on learners (``InferenceOnlyAPI``), never on env runners;
* resolving ``model_config`` against per-class defaults and rejecting unknown keys.

A subclass defines ``POLICY_DEFAULTS``, ``KIND`` (how its ``pi`` reads the job matrix) and
``build_policy(config)``, which creates the policy layers. The forward pass (``job_scores``,
``queue_logits``) is written once, without ray, in :mod:`schedrl.agents.rlscheduler.inference`, which the
exported policy runs too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI, ValueFunctionAPI
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from schedrl.agents.rlscheduler.inference import job_scores, queue_logits
from schedrl.agents.rlscheduler.keys import OBS_ACTION_MASK, OBS_JOBS

VALUE_DEFAULTS: dict[str, Any] = {
    # RLScheduler Fig. 6 shows a 3-layer MLP over the flattened jobs but gives no sizes; 64-32-8
    # are the critic's MLP layers in the authors' code (DIR-LAB/deep-batch-scheduler,
    # ppo-pick-jobs.py, critic_mlp), which there read per-job kernel scores, not raw features.
    "value_hiddens": (64, 32, 8),
}

# Keys RLlib merges into every module's model_config (DefaultModelConfig fields, and PPO's
# auto-included "vf_share_layers"); they are accepted and ignored.
_RLLIB_INJECTED_KEYS = frozenset(f.name for f in dataclasses.fields(DefaultModelConfig)) | {
    "vf_share_layers"
}


def mlp(in_features: int, hiddens: Sequence[int], out_features: int) -> nn.Sequential:
    """Dense layers ``in -> hiddens... -> out`` with ReLU after every hidden layer, none after the last."""
    layers: list[nn.Module] = []
    width = in_features
    for h in hiddens:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, out_features))
    return nn.Sequential(*layers)


def _as_sizes(key: str, value: Any) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"model_config[{key!r}] must be a sequence of positive ints, got {value!r}")
    sizes = tuple(value)
    if not sizes or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes):
        raise ValueError(f"model_config[{key!r}] must be a non-empty sequence of positive ints, got {value!r}")
    return sizes


class JobQueueModule(TorchRLModule, ValueFunctionAPI, InferenceOnlyAPI):
    """Masked job-picking policy + flattened-matrix value network (abstract; see module docstring).

    Observation: ``Dict({OBS_JOBS: Box(slots, F), OBS_ACTION_MASK: Box(slots)})``; action:
    ``Discrete(slots)``. ``F`` is read from the space, never assumed.
    """

    POLICY_DEFAULTS: ClassVar[dict[str, Any]] = {}
    """This class's policy settings and their defaults (each citing its source)."""

    @classmethod
    def resolve_config(cls, model_config: Mapping[str, Any] | None) -> dict[str, Any]:
        """``model_config`` merged over the defaults; unknown keys raise ``ValueError`` naming them.

        Sequence-valued settings (layer sizes) are normalised to tuples of ints.
        """
        defaults = {**VALUE_DEFAULTS, **cls.POLICY_DEFAULTS}
        given = dict(model_config or {})
        unknown = sorted(set(given) - set(defaults) - _RLLIB_INJECTED_KEYS)
        if unknown:
            raise ValueError(
                f"{cls.__name__}: unknown model_config key(s) {unknown}; valid keys: {sorted(defaults)}"
            )
        resolved = {**defaults, **{k: v for k, v in given.items() if k in defaults}}
        for key, default in defaults.items():
            if isinstance(default, tuple):
                resolved[key] = _as_sizes(key, resolved[key])
        return resolved

    def setup(self) -> None:
        jobs_space, mask_space = self._check_spaces()
        self.num_slots, self.num_features = jobs_space.shape
        config = self.resolve_config(self.model_config)
        self.pi = self.build_policy(config)
        if not self.inference_only:
            self.vf = mlp(self.num_slots * self.num_features, config["value_hiddens"], 1)

    def build_policy(self, config: dict[str, Any]) -> nn.Module:
        """Create the policy layers from the resolved ``config``."""
        raise NotImplementedError

    KIND: ClassVar[str] = ""
    """How `pi` reads the job matrix (`schedrl.agents.rlscheduler.inference.KINDS`)."""

    @property
    def ROW_WISE(self) -> bool:
        """True when `job_scores` scores each row on its own: then only valid (unmasked) rows are evaluated."""
        return self.KIND == "kernel"

    def job_scores(self, jobs: torch.Tensor) -> torch.Tensor:
        """Unmasked logits ``(B, slots)`` for a job matrix ``(B, slots, F)`` (inference.py's `job_scores`)."""
        return job_scores(self.KIND, self.pi, jobs)

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        # RLLIB_NOTES: finite, not -inf, or PPO's gradients turn NaN (`queue_logits` masks with mask_logits)
        return {Columns.ACTION_DIST_INPUTS: queue_logits(self.KIND, self.pi, batch[Columns.OBS])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """State values ``(B,)`` from the flattened job matrix (RLScheduler Fig. 6)."""
        jobs = batch[Columns.OBS][OBS_JOBS]
        return self.vf(jobs.flatten(start_dim=-2)).squeeze(-1)

    def get_non_inference_attributes(self) -> list[str]:
        return ["vf"]

    def _check_spaces(self) -> tuple[gym.spaces.Box, gym.spaces.Box]:
        obs_space, act_space = self.observation_space, self.action_space
        name = type(self).__name__
        if not isinstance(obs_space, gym.spaces.Dict) or {OBS_JOBS, OBS_ACTION_MASK} - set(obs_space.spaces):
            raise ValueError(
                f"{name} needs a Dict observation space with keys {OBS_JOBS!r} and {OBS_ACTION_MASK!r} "
                f"(see schedrl.agents.rlscheduler.keys), got {obs_space}"
            )
        jobs, mask = obs_space[OBS_JOBS], obs_space[OBS_ACTION_MASK]
        if len(jobs.shape) != 2 or mask.shape != (jobs.shape[0],):
            raise ValueError(
                f"{name}: {OBS_JOBS!r} must have shape (slots, F) and {OBS_ACTION_MASK!r} shape (slots,), "
                f"got {jobs.shape} and {mask.shape}"
            )
        if not isinstance(act_space, gym.spaces.Discrete) or act_space.n != jobs.shape[0]:
            raise ValueError(f"{name}: action space must be Discrete({jobs.shape[0]}) (one action per slot), got {act_space}")
        return jobs, mask
