"""RLSchert's and DeepRM's networks, defined once and without ray (torch and numpy only), and their inference wrapper.

`FlatEncoder` (the 64-64 MLP), `ConvEncoder` (the CNN) and `SlotKills` (the shared per-slot kill scorer), each with
`create` (fresh layers for training, from the resolved `model_config`), and `policy_logits` are the networks' one
definition: modules.py's RLModules hold them as `pi` and `value_net`. `RLSchertNetwork` holds a trained module's
policy `pi` under the same parameter names, rebuilt from its architecture (`describe_policy`, `encoder`), and offers
`forward_inference`'s masked logits, which `greedy_action` (policy.py) reads. The value network is not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, ExportedNetwork, build, describe, observation_shapes
from schedrl.agents.masking import mask_logits
from schedrl.agents.rlschert.keys import OBS_ACTION_MASK, OBS_EXTRA, OBS_IMAGE, OBS_RUNNING


SLOT_HIDDENS = (32, 32)
"""The per-slot kill scorer's widths (`kill_head="slots"`)."""
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


def mlp(inputs: int, hiddens: tuple[int, ...], outputs: int, bias: bool, activation: str) -> nn.Sequential:
    """Fully connected layers with `activation` after each hidden one, none after the last."""
    layers: list[nn.Module] = []
    for width in hiddens:
        layers += [nn.Linear(inputs, width, bias=bias), ACTIVATIONS[activation]()]
        inputs = width
    layers.append(nn.Linear(inputs, outputs, bias=bias))
    return nn.Sequential(*layers)


class _Encoder(nn.Module):
    """A policy or value network over (image, rest): `hidden` (the last hidden layer's activations), then `out`."""

    def forward(self, image: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
        return self.out(self.hidden(image, rest))


class FlatEncoder(_Encoder):
    """An MLP over the flattened image and the rest (RLSchert Table 3's MLP 64-64)."""

    def __init__(self, net: nn.Sequential):
        super().__init__()
        self.net = net

    @classmethod
    def create(cls, inputs: int, config: Mapping[str, Any], outputs: int) -> FlatEncoder:
        return cls(mlp(inputs, config["hiddens"], outputs, config["bias"], config["activation"]))

    def hidden(self, image: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
        return self.net[:-1](torch.cat([image.flatten(1), rest], dim=-1))

    def out(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.net[-1](hidden)


class ConvEncoder(_Encoder):
    """Two convolutions over the image, then an MLP over their features and the rest (Table 3's CNN)."""

    def __init__(self, conv: nn.Module, head: nn.Sequential):
        super().__init__()
        self.conv, self.head = conv, head

    @classmethod
    def create(cls, image_shape: tuple[int, int], rest: int, config: Mapping[str, Any], outputs: int) -> ConvEncoder:
        # ours: Table 3 names a CNN without its shape; two strided convolutions over the (time, unit) image
        conv = nn.Sequential(nn.Conv2d(1, 8, kernel_size=4, stride=2), nn.ReLU(),
                             nn.Conv2d(8, 16, kernel_size=3, stride=2), nn.ReLU(), nn.Flatten())
        with torch.no_grad():
            width = conv(torch.zeros(1, 1, *image_shape)).shape[-1]
        return cls(conv, mlp(width + rest, config["hiddens"], outputs, config["bias"], config["activation"]))

    def hidden(self, image: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
        return self.head[:-1](torch.cat([self.conv(image.unsqueeze(1)), rest], dim=-1))

    def out(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.head[-1](hidden)


class SlotKills(nn.Module):
    """`kill_head="slots"`: `base`'s logits (allocations, void), then one kill logit per running slot from a shared
    MLP over [the slot's features, `base`'s last hidden layer]. `rest` starts with the flattened running block."""

    def __init__(self, base: _Encoder, slots: int, features: int, score: nn.Module):
        super().__init__()
        self.base, self.slots, self.features = base, slots, features
        self.score = score

    @classmethod
    def create(cls, base: _Encoder, slots: int, features: int, config: Mapping[str, Any]) -> SlotKills:
        width = config["hiddens"][-1]
        return cls(base, slots, features, mlp(features + width, SLOT_HIDDENS, 1, True, config["activation"]))

    def forward(self, image: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
        hidden = self.base.hidden(image, rest)
        running = rest[:, : self.slots * self.features].reshape(-1, self.slots, self.features)
        context = hidden[:, None, :].expand(-1, self.slots, -1)
        kills = self.score(torch.cat([running, context], dim=-1)).squeeze(-1)
        return torch.cat([self.base.out(hidden), kills], dim=-1)


def encoder(spec: Mapping[str, Any]) -> nn.Module:
    """A policy network from `describe_policy`'s JSON, freshly initialised (weights are loaded afterwards)."""
    kind = spec.get("type")
    if kind == "flat":
        return FlatEncoder(build(spec["net"]))
    if kind == "conv":
        return ConvEncoder(build(spec["conv"]), build(spec["head"]))
    if kind == "slots":
        return SlotKills(encoder(spec["base"]), int(spec["slots"]), int(spec["features"]), build(spec["score"]))
    raise ValueError(f"unknown RLSchert policy network {kind!r} (known: flat, conv, slots)")


def describe_policy(pi) -> dict[str, Any]:
    """A trained module's `pi` as JSON."""
    if isinstance(pi, FlatEncoder):
        return {"type": "flat", "net": describe(pi.net)}
    if isinstance(pi, ConvEncoder):
        return {"type": "conv", "conv": describe(pi.conv), "head": describe(pi.head)}
    if isinstance(pi, SlotKills):
        return {"type": "slots", "base": describe_policy(pi.base), "slots": pi.slots, "features": pi.features,
                "score": describe(pi.score)}
    raise ValueError(f"{type(pi).__name__} is not an RLSchert policy network (FlatEncoder, ConvEncoder, SlotKills)")


def features(obs: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """The networks' two inputs: the image, and the rest (the flattened running block, then the extra column)."""
    return obs[OBS_IMAGE], torch.cat([obs[OBS_RUNNING].flatten(1), obs[OBS_EXTRA]], dim=-1)


def policy_logits(pi: nn.Module, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """Masked logits over the allocation, void and kill actions (`mask_logits`: finite, so PPO's loss stays
    finite)."""
    return mask_logits(pi(*features(obs)), obs[OBS_ACTION_MASK])


class RLSchertNetwork(ExportedNetwork):
    """Masked logits over the allocation, void and kill actions from the image, running and extra parts."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__(architecture)
        self.pi = encoder(architecture["pi"])

    def forward_inference(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {ACTION_DIST_INPUTS: policy_logits(self.pi, batch[OBS])}


def inference_network(source) -> RLSchertNetwork:
    """The network of an exported `architecture` dict, or with the architecture of a trained RLModule."""
    if not isinstance(source, Mapping):
        source = {"observation": observation_shapes(source.observation_space), "pi": describe_policy(source.pi)}
    return RLSchertNetwork(source)
