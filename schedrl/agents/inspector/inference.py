"""The inspector's policy network without ray (torch and numpy only): `InspectorModule`'s `pi`, for inference.

`InspectorPolicy` (policy.py) calls `pi` on the observation's features, as it does on the trained RLModule; the value
network is not part of it.
"""

from __future__ import annotations

from schedrl.agents.inference import LayerNetwork


class InspectorNetwork(LayerNetwork):
    """The (accept, reject) logits of a feature vector: the trained module's `pi` under the same name."""

    layer = "pi"
    module_class = "InspectorModule"
    module_label = "an inspector policy module"
    network = "inspector"


inference_network = InspectorNetwork.inference_network
"""The network of an exported `architecture` dict, or with the architecture of a trained `InspectorModule`."""
