"""The `linear` agent's scorer without ray (torch and numpy only): `LinearScorer`'s `score` layer, for inference.

`GreedyLinear` (agent.py) calls `score` on the visible jobs' features; the value head is not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch import nn

from schedrl.agents.inference import build, describe


class LinearNetwork(nn.Module):
    """logit(job) = w . features(job) + b: the trained module's `score` layer under the same name."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.score = build(architecture["score"])


def inference_network(source) -> LinearNetwork:
    """The network of an exported `architecture` dict, or with the architecture of a trained `LinearScorer`."""
    return LinearNetwork(source if isinstance(source, Mapping) else {"score": describe(source.score)})
