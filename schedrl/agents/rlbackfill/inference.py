"""Learned backfilling's policy network without ray (torch and numpy only): `RLBackfillModule`'s `kernel`, for
inference.

`RLBackfillPolicy` (policy.py) scores the rows of an observation with `kernel`, on the trained RLModule or on this
network alike; the value network is not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from schedrl.agents.inference import build, describe, observation_shapes


def rows_with_context(jobs: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
    """(..., rows, job features + context features): the context appended to every row."""
    return torch.cat([jobs, context.unsqueeze(-2).expand(*jobs.shape[:-1], context.shape[-1])], dim=-1)


class RLBackfillNetwork(nn.Module):
    """The score of every row: the trained module's `kernel` under the same name."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.kernel = build(architecture["kernel"])


def inference_network(source) -> RLBackfillNetwork:
    """The network of an exported `architecture` dict, or with the architecture of a trained `RLBackfillModule`."""
    if isinstance(source, Mapping):
        return RLBackfillNetwork(source)
    if type(source).__name__ != "RLBackfillModule":
        raise ValueError(f"{type(source).__name__} is not a learned-backfilling policy module (RLBackfillModule)")
    return RLBackfillNetwork({"network": "rl-backfill", "observation": observation_shapes(source.observation_space),
                              "kernel": describe(source.kernel)})
