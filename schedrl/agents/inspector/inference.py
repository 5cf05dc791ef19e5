"""The inspector's policy network without ray (torch and numpy only): `InspectorModule`'s `pi`, for inference.

`InspectorPolicy` (policy.py) calls `pi` on the observation's features, as it does on the trained RLModule; the value
network is not part of it. A distilled tree (`tree.py`, `schedrl distill`) loads in its place with the same `pi`.
"""

from __future__ import annotations

from collections.abc import Mapping

from schedrl.agents.inference import LayerNetwork


class InspectorNetwork(LayerNetwork):
    """The (accept, reject) logits of a feature vector: the trained module's `pi` under the same name."""

    layer = "pi"
    module_class = "InspectorModule"
    module_label = "an inspector policy module"
    network = "inspector"

    @classmethod
    def inference_network(cls, source):
        """The network of an exported `architecture` dict (a distilled tree's too: `tree.tree_network`), or with the
        architecture of a trained `InspectorModule`."""
        if isinstance(source, Mapping) and source.get("network") == "inspector-tree":
            from schedrl.agents.inspector.tree import tree_network

            return tree_network(source)
        return super().inference_network(source)


inference_network = InspectorNetwork.inference_network
"""The network of an exported `architecture` dict, or with the architecture of a trained `InspectorModule`."""
