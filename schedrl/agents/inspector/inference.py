"""The inspector's policy network without ray (torch and numpy only): `InspectorModule`'s `pi`, for inference.

`InspectorPolicy` (policy.py) calls `pi` on the observation's features, as it does on the trained RLModule; the value
network is not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch import nn

from schedrl.agents.inference import build, describe, observation_shapes


class InspectorNetwork(nn.Module):
    """The (accept, reject) logits of a feature vector: the trained module's `pi` under the same name."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.pi = build(architecture["pi"])


def inference_network(source) -> InspectorNetwork:
    """The network of an exported `architecture` dict, or with the architecture of a trained `InspectorModule`."""
    if isinstance(source, Mapping):
        return InspectorNetwork(source)
    if type(source).__name__ != "InspectorModule":
        raise ValueError(f"{type(source).__name__} is not an inspector policy module (InspectorModule)")
    return InspectorNetwork({"network": "inspector", "observation": observation_shapes(source.observation_space),
                             "pi": describe(source.pi)})
