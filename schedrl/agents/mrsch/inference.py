"""MRSch's networks without ray (torch and numpy only), for inference: the DFP network and the scalar-reward
baseline's policy.

`DFPNetwork` holds a trained `DFPModule`'s five streams (modules.py) under the same parameter names and its offset
weights (a buffer the state dict does not carry: they are in the architecture), and offers `scores`, which
`DFPPolicy` (policy.py) reads. `ScalarNetwork` holds `ScalarPolicyModule`'s `pi` and offers `_forward`'s masked
logits (`LogitPolicy`); its value network is not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, build, describe, observation_shapes, spaces
from schedrl.agents.masking import mask_logits
from schedrl.agents.mrsch.keys import OBS_ACTION_MASK, OBS_GOAL, OBS_MEASUREMENTS, OBS_STATE

STREAMS = ("state_net", "measurement_net", "goal_net", "expectation", "action_stream")
"""The DFP network's parts (MRSch §III-C: state, measurement and goal modules; DFP's expectation and action streams)."""


class DFPNetwork(nn.Module):
    """Predicted measurement changes (B, A, K, M) and each action's goal-weighted objective, as `DFPModule`."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.observation_space = spaces(architecture["observation"])
        self.n_actions, self.n_offsets = int(architecture["actions"]), int(architecture["offsets"])
        self.n_measurements = self.observation_space.spaces[OBS_MEASUREMENTS].shape[0]
        for name in STREAMS:
            setattr(self, name, build(architecture[name]))
        self.register_buffer("offset_weights", torch.tensor(architecture["offset_weights"], dtype=torch.float32),
                             persistent=False)

    def predictions(self, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        joint = torch.cat([torch.nn.functional.leaky_relu(self.state_net(obs[OBS_STATE]), 0.2),
                           self.measurement_net(obs[OBS_MEASUREMENTS]), self.goal_net(obs[OBS_GOAL])], dim=-1)
        b, k, m = joint.shape[0], self.n_offsets, self.n_measurements
        expectation = self.expectation(joint).view(b, 1, k, m)
        action = self.action_stream(joint).view(b, self.n_actions, k, m)
        mask = obs[OBS_ACTION_MASK].view(b, self.n_actions, 1, 1)
        mean = (action * mask).sum(1, keepdim=True) / mask.sum(1, keepdim=True).clamp(min=1.0)
        return expectation + action - mean

    def scores(self, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """(B, A): goal x offset weights . prediction; -inf on masked slots."""
        score = torch.einsum("bakm,k,bm->ba", self.predictions(obs), self.offset_weights, obs[OBS_GOAL])
        return score.masked_fill(obs[OBS_ACTION_MASK] <= 0, float("-inf"))


class ScalarNetwork(nn.Module):
    """The scalar-reward baseline's masked logits over the window from `pi` on the state and measurements."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.observation_space = spaces(architecture["observation"])
        self.pi = build(architecture["pi"])

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        obs = batch[OBS]
        logits = self.pi(torch.cat([obs[OBS_STATE], obs[OBS_MEASUREMENTS]], dim=-1))
        return {ACTION_DIST_INPUTS: mask_logits(logits, obs[OBS_ACTION_MASK])}


def architecture_of(module) -> dict[str, Any]:
    """What the networks above need of a trained MRSch RLModule, as JSON."""
    shapes = observation_shapes(module.observation_space)
    kind = type(module).__name__
    if kind == "DFPModule":
        return {"network": "dfp", "observation": shapes, "actions": module.n_actions, "offsets": module.n_offsets,
                "offset_weights": module.offset_weights.tolist(),
                **{name: describe(getattr(module, name)) for name in STREAMS}}
    if kind == "ScalarPolicyModule":
        return {"network": "scalar", "observation": shapes, "pi": describe(module.pi)}
    raise ValueError(f"{kind} is not an MRSch module (DFPModule, ScalarPolicyModule)")


def inference_network(source) -> DFPNetwork | ScalarNetwork:
    """The network of an exported `architecture` dict, or with the architecture of a trained RLModule."""
    architecture = source if isinstance(source, Mapping) else architecture_of(source)
    return (DFPNetwork if architecture["network"] == "dfp" else ScalarNetwork)(architecture)
