"""The inspector's RLModule: an MLP over the observation's features, two masked logits (accept, reject), a value MLP."""

from __future__ import annotations

import math

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule

from schedrl.agents.baserule.module import mlp
from schedrl.agents.inspector.env import OBS_ACTION_MASK, OBS_FEATURES
from schedrl.agents.masking import mask_logits


class InspectorModule(TorchRLModule, ValueFunctionAPI):
    """`pi`: features -> (accept, reject) logits; `vf`: features -> the episode's expected relative reward.

    `model_config`: `hidden` (units per layer, default 64) and `initial_reject` (default 0.05): the untrained policy
    rejects with about this probability everywhere (its last layer starts near zero with the reject logit's bias at
    log(p / (1 - p))), so training starts from the base heuristic, slightly perturbed, instead of from a coin flip
    that would reject every other proposal."""

    def setup(self):
        features = self.observation_space[OBS_FEATURES].shape[-1]
        config = self.model_config or {}
        hidden = int(config.get("hidden", 64))
        p = float(config.get("initial_reject", 0.05))
        self.pi = mlp(features, hidden, 2)
        self.vf = mlp(features, hidden, 1)
        with torch.no_grad():
            last = self.pi[-1]
            last.weight.mul_(0.01)
            last.bias.copy_(torch.tensor([0.0, math.log(p / (1.0 - p))]))

    def _forward(self, batch, **kwargs):
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: mask_logits(self.pi(obs[OBS_FEATURES]), obs[OBS_ACTION_MASK])}

    def compute_values(self, batch, embeddings=None):
        return self.vf(batch[Columns.OBS][OBS_FEATURES]).squeeze(-1)
