"""DRAS's network, defined once and without ray (torch and numpy only), and its inference wrappers.

`DRASNet` (a 1x2 convolution per row, two fully connected layers, an output layer), `policy_logits` and `q_values`
are the network and its two readings: modules.py's RLModules hold a `DRASNet` as `net` and compute their outputs with
these functions, and so do the wrappers here, which hold the trained RLModule's `net` under the same parameter names
and offer what `DRASPolicy` (policy.py) reads of the RLModule: masked logits from `_forward` (PG), or per-job Q values
from `compute_q_values` (DQL). The target network is not part of them. The exported policy therefore cannot compute
anything the trained one does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from schedrl.agents.dras.keys import OBS_ACTION_MASK, OBS_STATE
from schedrl.agents.inference import (ACTION_DIST_INPUTS, OBS, QF_PREDS, ExportedNetwork, build, describe,
                                      observation_shapes)
from schedrl.agents.masking import mask_logits

NETWORKS = {"DRASPGModule": "pg", "DRASQModule": "dql"}
"""RLModule class -> network kind (modules.py)."""


LEAKY_SLOPE = 0.01
"""DRAS §III-B: leaky rectifier; its slope is not given, 0.01 is TensorFlow's (and torch's) default."""


class DRASNet(nn.Module):
    """DRAS's network, the one definition (modules.py's RLModules hold it as `net`): a 1x2 convolution per row, two
    fully connected layers (leaky ReLU; bias-free in Table III), a linear output layer.

    `create` makes it for training from its widths; `from_layers` rebuilds it from an exported architecture.
    """

    def __init__(self, conv: nn.Module, fc1: nn.Module, fc2: nn.Module, out: nn.Module, slope: float):
        super().__init__()
        self.conv, self.fc1, self.fc2, self.out = conv, fc1, fc2, out
        self.slope = slope

    @classmethod
    def create(cls, rows: int, hiddens: tuple[int, int], outputs: int, fc_bias: bool = False,
               leaky_slope: float = LEAKY_SLOPE) -> DRASNet:
        """Freshly initialised layers: R input rows, the two hidden widths, the outputs."""
        return cls(nn.Conv2d(1, 1, kernel_size=(1, 2)), nn.Linear(rows, hiddens[0], bias=fc_bias),
                   nn.Linear(hiddens[0], hiddens[1], bias=fc_bias), nn.Linear(hiddens[1], outputs), leaky_slope)

    @classmethod
    def from_layers(cls, layers: Mapping[str, Any], slope: float) -> DRASNet:
        """The layers `describe` wrote (`architecture_of`), freshly initialised (weights are loaded afterwards)."""
        return cls(*(build(layers[k]) for k in ("conv", "fc1", "fc2", "out")), slope)

    def rows(self, state: torch.Tensor) -> torch.Tensor:
        """(B, R, 2) -> (B, R): the convolution's one value per row, activated."""
        return F.leaky_relu(self.conv(state.unsqueeze(1)).squeeze(-1).squeeze(1), self.slope)

    def head(self, hidden1: torch.Tensor) -> torch.Tensor:
        """From the first layer's pre-activation to the outputs."""
        h = F.leaky_relu(hidden1, self.slope)
        return self.out(F.leaky_relu(self.fc2(h), self.slope))

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        return self.head(self.fc1(self.rows(state)))

    def per_job(self, state: torch.Tensor, window: int) -> torch.Tensor:
        """(B, 2W + N, 2) -> (B, W): the network applied to each job's [2 + N, 2] input (DRAS-DQL); the first fully
        connected layer is linear in its input, so the node part is computed once and added to each job's part."""
        c = self.rows(state)
        jobs = c[:, : 2 * window].reshape(c.shape[0], window, 2)
        nodes = c[:, 2 * window:]
        weight = self.fc1.weight
        hidden = jobs @ weight[:, :2].T + (nodes @ weight[:, 2:].T).unsqueeze(1)
        if self.fc1.bias is not None:
            hidden = hidden + self.fc1.bias
        return self.head(hidden).squeeze(-1)


def policy_logits(net: DRASNet, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """DRAS-PG / Decima-PG: W logits from the whole state, masked (`mask_logits`: finite, not -inf, or
    policy-gradient losses turn NaN)."""
    return mask_logits(net(obs[OBS_STATE]), obs[OBS_ACTION_MASK])


def q_values(net: DRASNet, obs: Mapping[str, torch.Tensor], window: int) -> torch.Tensor:
    """DRAS-DQL: one Q value per window job; invalid slots -inf (RLlib's DQN treats -inf as an invalid action)."""
    q = net.per_job(obs[OBS_STATE], window)
    return torch.where(obs[OBS_ACTION_MASK] > 0, q, torch.full_like(q, float("-inf")))


class _DRASNetwork(ExportedNetwork):
    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__(architecture)
        self.window = int(architecture["window"])
        self.net = DRASNet.from_layers(architecture["net"], float(architecture["slope"]))


class PolicyNetwork(_DRASNetwork):
    """DRAS-PG / Decima-PG: W masked logits from the whole state."""

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {ACTION_DIST_INPUTS: policy_logits(self.net, batch[OBS])}


class QNetwork(_DRASNetwork):
    """DRAS-DQL: one Q value per window job; invalid slots -inf."""

    def compute_q_values(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {QF_PREDS: q_values(self.net, batch[OBS], self.window)}


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
