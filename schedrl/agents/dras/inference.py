"""DRAS's networks without ray (torch and numpy only), for inference: DRAS-PG's and Decima-PG's policy and DRAS-DQL's
Q network.

Each holds the trained RLModule's `net` (modules.py's `DRASNet`: a 1x2 convolution per row, two fully connected
layers, an output layer) under the same parameter names and computes what `DRASPolicy` (policy.py) reads of the
RLModule: masked logits from `_forward` (PG), or per-job Q values from `compute_q_values` (DQL). The target network
is not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from schedrl.agents.dras.keys import OBS_ACTION_MASK, OBS_STATE
from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, QF_PREDS, build, describe, observation_shapes, spaces
from schedrl.agents.masking import mask_logits

NETWORKS = {"DRASPGModule": "pg", "DRASQModule": "dql"}
"""RLModule class -> network kind (modules.py)."""


class RowNetwork(nn.Module):
    """`DRASNet`'s layers and forward pass: the convolution's value per row, then the fully connected layers."""

    def __init__(self, layers: Mapping[str, Any], slope: float):
        super().__init__()
        self.conv, self.fc1, self.fc2, self.out = (build(layers[k]) for k in ("conv", "fc1", "fc2", "out"))
        self.slope = slope

    def rows(self, state: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(self.conv(state.unsqueeze(1)).squeeze(-1).squeeze(1), self.slope)

    def head(self, hidden1: torch.Tensor) -> torch.Tensor:
        return self.out(F.leaky_relu(self.fc2(F.leaky_relu(hidden1, self.slope)), self.slope))

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        return self.head(self.fc1(self.rows(state)))

    def per_job(self, state: torch.Tensor, window: int) -> torch.Tensor:
        """(B, 2W + N, 2) -> (B, W): each job's two rows with the N node rows; the node part computed once."""
        c = self.rows(state)
        jobs = c[:, : 2 * window].reshape(c.shape[0], window, 2)
        nodes = c[:, 2 * window:]
        weight = self.fc1.weight
        hidden = jobs @ weight[:, :2].T + (nodes @ weight[:, 2:].T).unsqueeze(1)
        if self.fc1.bias is not None:
            hidden = hidden + self.fc1.bias
        return self.head(hidden).squeeze(-1)


class _DRASNetwork(nn.Module):
    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.observation_space = spaces(architecture["observation"])
        self.window = int(architecture["window"])
        self.net = RowNetwork(architecture["net"], float(architecture["slope"]))


class PolicyNetwork(_DRASNetwork):
    """DRAS-PG / Decima-PG: W masked logits from the whole state."""

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        obs = batch[OBS]
        return {ACTION_DIST_INPUTS: mask_logits(self.net(obs[OBS_STATE]), obs[OBS_ACTION_MASK])}


class QNetwork(_DRASNetwork):
    """DRAS-DQL: one Q value per window job; invalid slots -inf."""

    def compute_q_values(self, batch: dict[str, Any]) -> dict[str, Any]:
        obs = batch[OBS]
        q = self.net.per_job(obs[OBS_STATE], self.window)
        return {QF_PREDS: torch.where(obs[OBS_ACTION_MASK] > 0, q, torch.full_like(q, float("-inf")))}


def architecture_of(module) -> dict[str, Any]:
    """What the networks above need of a trained DRAS RLModule, as JSON."""
    kind = NETWORKS.get(type(module).__name__)
    if kind is None:
        raise ValueError(f"{type(module).__name__} is not a DRAS module ({', '.join(NETWORKS)})")
    net = module.net
    return {"network": kind, "observation": observation_shapes(module.observation_space), "window": module.window,
            "slope": net.slope, "net": {k: describe(getattr(net, k)) for k in ("conv", "fc1", "fc2", "out")}}


def inference_network(source) -> PolicyNetwork | QNetwork:
    """The network of an exported `architecture` dict, or with the architecture of a trained RLModule."""
    architecture = source if isinstance(source, Mapping) else architecture_of(source)
    return (QNetwork if architecture["network"] == "dql" else PolicyNetwork)(architecture)
