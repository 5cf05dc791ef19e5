"""Learned backfilling's RLModule: one small MLP (`kernel`) scores every row (a candidate, or "start none") from its
features and the shared context, as RLScheduler's kernel scores every waiting job; masked logits. The value MLP reads
the mean of the valid rows and the context."""

from __future__ import annotations

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from schedrl.agents.baserule.module import mlp
from schedrl.agents.rlbackfill.inference import row_logits

HIDDEN = (32, 16, 8)
"""Default widths of the kernel's hidden layers (RLScheduler's kernel)."""


def kernel(inputs: int, hidden: tuple[int, ...]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(inputs, width), nn.ReLU()]
        inputs = width
    return nn.Sequential(*layers, nn.Linear(inputs, 1))


class RLBackfillModule(TorchRLModule, ValueFunctionAPI):
    """`kernel`: (candidate features, context) -> logit, shared by every row; `vf`: (mean valid row, context) -> the
    episode's expected relative reward. `model_config`: `hidden` (the kernel's widths, default (32, 16, 8))."""

    def setup(self):
        jobs = self.observation_space["jobs"].shape[-1]
        context = self.observation_space["context"].shape[-1]
        hidden = tuple(int(h) for h in (self.model_config or {}).get("hidden", HIDDEN))
        self.kernel = kernel(jobs + context, hidden)
        self.vf = mlp(jobs + context, 32, 1)

    def _forward(self, batch, **kwargs):
        return {Columns.ACTION_DIST_INPUTS: row_logits(self.kernel, batch[Columns.OBS])}

    def compute_values(self, batch, embeddings=None):
        obs = batch[Columns.OBS]
        mask = obs["action_mask"].unsqueeze(-1)
        mean = (obs["jobs"] * mask).sum(-2) / mask.sum(-2).clamp(min=1.0)
        return self.vf(torch.cat([mean, obs["context"]], dim=-1)).squeeze(-1)
