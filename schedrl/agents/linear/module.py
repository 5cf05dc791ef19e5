"""The `linear` agent's RLModule: one weight per feature scores every job; a tiny value head."""

from __future__ import annotations

from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from schedrl.agents.masking import mask_logits


class LinearScorer(TorchRLModule, ValueFunctionAPI):
    """logit(job) = w . features(job) + b, masked; value = MLP over the mean of the visible jobs' features."""

    def setup(self):
        features = self.observation_space["jobs"].shape[-1]
        self.score = nn.Linear(features, 1)
        self.value = nn.Sequential(nn.Linear(features, 16), nn.Tanh(), nn.Linear(16, 1))

    def _forward(self, batch, **kwargs):
        obs = batch[Columns.OBS]
        logits = self.score(obs["jobs"]).squeeze(-1)
        return {Columns.ACTION_DIST_INPUTS: mask_logits(logits, obs["action_mask"])}

    def compute_values(self, batch, embeddings=None):
        obs = batch[Columns.OBS]
        mask = obs["action_mask"].unsqueeze(-1)
        mean = (obs["jobs"] * mask).sum(-2) / mask.sum(-2).clamp(min=1.0)
        return self.value(mean).squeeze(-1)
