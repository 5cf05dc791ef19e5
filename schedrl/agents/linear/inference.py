"""The `linear` agent's scorer without ray (torch and numpy only): `LinearScorer`'s `score` layer, for inference.

`GreedyLinear` (agent.py) calls `score` on the visible jobs' features; the value head is not part of it.
"""

from __future__ import annotations

from schedrl.agents.inference import LayerNetwork


class LinearNetwork(LayerNetwork):
    """logit(job) = w . features(job) + b: the trained module's `score` layer under the same name."""

    layer = "score"


inference_network = LinearNetwork.inference_network
"""The network of an exported `architecture` dict, or with the architecture of a trained `LinearScorer`."""
