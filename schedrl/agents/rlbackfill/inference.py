"""Learned backfilling's policy network without ray (torch and numpy only): `RLBackfillModule`'s `kernel`, for
inference.

`RLBackfillPolicy` (policy.py) scores the rows of an observation with `kernel`, on the trained RLModule or on this
network alike; the value network is not part of it.
"""

from __future__ import annotations

from typing import Any

import torch

from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, LayerNetwork
from schedrl.agents.masking import mask_logits


def rows_with_context(jobs: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
    """(..., rows, job features + context features): the context appended to every row."""
    return torch.cat([jobs, context.unsqueeze(-2).expand(*jobs.shape[:-1], context.shape[-1])], dim=-1)


def row_logits(kernel_net: torch.nn.Module, obs) -> torch.Tensor:
    """The masked logit of every row of an observation batch."""
    scores = kernel_net(rows_with_context(obs["jobs"], obs["context"])).squeeze(-1)
    return mask_logits(scores, obs["action_mask"])


class RLBackfillNetwork(LayerNetwork):
    """The score of every row: the trained module's `kernel` under the same name."""

    layer = "kernel"
    module_class = "RLBackfillModule"
    module_label = "a learned-backfilling policy module"
    network = "rl-backfill"

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        """The masked row logits of an observation batch, as the RLModule's forward."""
        return {ACTION_DIST_INPUTS: row_logits(self.kernel, batch[OBS])}


inference_network = RLBackfillNetwork.inference_network
"""The network of an exported `architecture` dict, or with the architecture of a trained `RLBackfillModule`."""
