"""RLSchert's and DeepRM's networks without ray (torch and numpy only), for inference.

`RLSchertNetwork` holds a trained module's policy `pi` (modules.py: the 64-64 MLP or the CNN, with the paper's flat
kill logits or the shared per-slot kill scorer) under the same parameter names and offers `forward_inference`'s
masked logits, which `greedy_action` (policy.py) reads. The value network is not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, build, describe, observation_shapes, spaces
from schedrl.agents.masking import mask_logits
from schedrl.agents.rlschert.keys import OBS_ACTION_MASK, OBS_EXTRA, OBS_IMAGE, OBS_RUNNING


class FlatEncoder(nn.Module):
    """modules.py `_FlatMLP`: an MLP over the flattened image and the rest."""

    def __init__(self, spec: Mapping[str, Any]):
        super().__init__()
        self.net = build(spec["net"])

    def hidden(self, image: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
        return self.net[:-1](torch.cat([image.flatten(1), rest], dim=-1))

    def out(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.net[-1](hidden)

    def forward(self, image: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
        return self.out(self.hidden(image, rest))


class ConvEncoder(FlatEncoder):
    """modules.py `_ConvNet`: two convolutions over the image, then an MLP over their features and the rest."""

    def __init__(self, spec: Mapping[str, Any]):
        nn.Module.__init__(self)
        self.conv = build(spec["conv"])
        self.head = build(spec["head"])

    def hidden(self, image: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
        return self.head[:-1](torch.cat([self.conv(image.unsqueeze(1)), rest], dim=-1))

    def out(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.head[-1](hidden)


class SlotKills(nn.Module):
    """modules.py `_SlotKills`: the base's allocation and void logits, then one kill logit per running slot from a
    scorer shared by the slots."""

    def __init__(self, spec: Mapping[str, Any]):
        super().__init__()
        self.base = encoder(spec["base"])
        self.slots, self.features = int(spec["slots"]), int(spec["features"])
        self.score = build(spec["score"])

    def forward(self, image: torch.Tensor, rest: torch.Tensor) -> torch.Tensor:
        hidden = self.base.hidden(image, rest)
        running = rest[:, : self.slots * self.features].reshape(-1, self.slots, self.features)
        context = hidden[:, None, :].expand(-1, self.slots, -1)
        kills = self.score(torch.cat([running, context], dim=-1)).squeeze(-1)
        return torch.cat([self.base.out(hidden), kills], dim=-1)


ENCODERS = {"flat": FlatEncoder, "conv": ConvEncoder, "slots": SlotKills}


def encoder(spec: Mapping[str, Any]) -> nn.Module:
    if spec.get("type") not in ENCODERS:
        raise ValueError(f"unknown RLSchert policy network {spec.get('type')!r} (known: {', '.join(ENCODERS)})")
    return ENCODERS[spec["type"]](spec)


def describe_policy(pi) -> dict[str, Any]:
    """A trained module's `pi` (modules.py) as JSON."""
    kind = type(pi).__name__
    if kind == "_FlatMLP":
        return {"type": "flat", "net": describe(pi.net)}
    if kind == "_ConvNet":
        return {"type": "conv", "conv": describe(pi.conv), "head": describe(pi.head)}
    if kind == "_SlotKills":
        return {"type": "slots", "base": describe_policy(pi.base), "slots": pi.slots, "features": pi.features,
                "score": describe(pi.score)}
    raise ValueError(f"{kind} is not an RLSchert policy network (_FlatMLP, _ConvNet, _SlotKills)")


class RLSchertNetwork(nn.Module):
    """Masked logits over the allocation, void and kill actions from the image, running and extra parts."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.observation_space = spaces(architecture["observation"])
        self.pi = encoder(architecture["pi"])

    def forward_inference(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        obs = batch[OBS]
        rest = torch.cat([obs[OBS_RUNNING].flatten(1), obs[OBS_EXTRA]], dim=-1)
        return {ACTION_DIST_INPUTS: mask_logits(self.pi(obs[OBS_IMAGE], rest), obs[OBS_ACTION_MASK])}


def inference_network(source) -> RLSchertNetwork:
    """The network of an exported `architecture` dict, or with the architecture of a trained RLModule."""
    if not isinstance(source, Mapping):
        source = {"observation": observation_shapes(source.observation_space), "pi": describe_policy(source.pi)}
    return RLSchertNetwork(source)
