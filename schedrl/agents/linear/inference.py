"""The `linear` agent's scorer without ray (torch and numpy only): `LinearScorer`'s `score` layer, for inference.

`GreedyLinear` (agent.py) calls `score` on the visible jobs' features, `_forward` scores an env observation as the
module does (`schedrl.agents.acting`); the value head is not part of it.
"""

from __future__ import annotations

from typing import Any

from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, LayerNetwork
from schedrl.agents.masking import mask_logits


class LinearNetwork(LayerNetwork):
    """logit(job) = w . features(job) + b: the trained module's `score` layer under the same name."""

    layer = "score"

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        """The masked job logits of an observation batch, as `LinearScorer`'s forward."""
        obs = batch[OBS]
        return {ACTION_DIST_INPUTS: mask_logits(self.score(obs["jobs"]).squeeze(-1), obs["action_mask"])}


inference_network = LinearNetwork.inference_network
"""The network of an exported `architecture` dict, or with the architecture of a trained `LinearScorer`."""
