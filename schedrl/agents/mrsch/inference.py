"""MRSch's networks, defined once and without ray (torch and numpy only): the DFP network and the scalar-reward
baseline's policy, with their inference wrappers.

`DFP` (its `predictions` and `scores`), `mlp` and `scalar_logits` are the networks' one definition: modules.py's
RLModules build their layers with `mlp` and compute with `DFP` and `scalar_logits`, so an exported policy computes
what the trained one does. `DFPNetwork` holds a trained `DFPModule`'s five streams under the same parameter names and
its offset weights (a buffer the state dict does not carry: they are in the architecture), and offers `scores`, which
`DFPPolicy` (policy.py) reads. `ScalarNetwork` holds `ScalarPolicyModule`'s `pi` and offers `_forward`'s masked
logits (`LogitPolicy`); its value network is not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, ExportedNetwork, build, describe, observation_shapes
from schedrl.agents.masking import mask_logits
from schedrl.agents.mrsch.keys import OBS_ACTION_MASK, OBS_GOAL, OBS_MEASUREMENTS, OBS_STATE

STREAMS = ("state_net", "measurement_net", "goal_net", "expectation", "action_stream")
"""The DFP network's parts (MRSch §III-C: state, measurement and goal modules; DFP's expectation and action streams)."""


def mlp(n_in: int, hiddens: Sequence[int], n_out: int | None = None) -> nn.Sequential:
    """Fully connected layers with leaky ReLUs (MRSch §III-A; DFP uses leaky ReLU throughout)."""
    layers: list[nn.Module] = []
    for h in hiddens:
        layers += [nn.Linear(n_in, h), nn.LeakyReLU(0.2)]
        n_in = h
    if n_out is not None:
        layers.append(nn.Linear(n_in, n_out))
    return nn.Sequential(*layers)


class DFP:
    """The DFP network's computation, the one definition: modules.py's `DFPModule` (training) and `DFPNetwork`
    (inference) both inherit it. Reads the streams `STREAMS`, `n_actions`, `n_offsets`, `n_measurements` and the
    `offset_weights` buffer of the class it is mixed into (`set_streams` sets the streams and the buffer).

    State, measurement and goal modules feed a joint representation; an expectation stream (one prediction for the
    state) and an action stream (one per action, its mean over the valid actions subtracted) add up to the
    prediction (DFP §3.2, dueling-style).
    """

    def set_streams(self, streams: Mapping[str, nn.Module], offset_weights: Sequence[float]) -> None:
        for name in STREAMS:
            setattr(self, name, streams[name])
        self.register_buffer("offset_weights", torch.tensor(offset_weights, dtype=torch.float32), persistent=False)

    def predictions(self, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """(B, A, K, M) predicted measurement changes."""
        joint = torch.cat([torch.nn.functional.leaky_relu(self.state_net(obs[OBS_STATE]), 0.2),
                           self.measurement_net(obs[OBS_MEASUREMENTS]), self.goal_net(obs[OBS_GOAL])], dim=-1)
        b, k, m = joint.shape[0], self.n_offsets, self.n_measurements
        expectation = self.expectation(joint).view(b, 1, k, m)
        action = self.action_stream(joint).view(b, self.n_actions, k, m)
        mask = obs[OBS_ACTION_MASK].view(b, self.n_actions, 1, 1)
        mean = (action * mask).sum(1, keepdim=True) / mask.sum(1, keepdim=True).clamp(min=1.0)
        return expectation + action - mean

    def scores(self, obs: Mapping[str, torch.Tensor], predictions: torch.Tensor | None = None) -> torch.Tensor:
        """(B, A) objective of each action: goal (over measurements) x offset weights . prediction; -inf on masked
        slots."""
        if predictions is None:
            predictions = self.predictions(obs)
        score = torch.einsum("bakm,k,bm->ba", predictions, self.offset_weights, obs[OBS_GOAL])
        return score.masked_fill(obs[OBS_ACTION_MASK] <= 0, float("-inf"))


def scalar_inputs(obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """The scalar-reward baseline's input: the state and the measurements, side by side."""
    return torch.cat([obs[OBS_STATE], obs[OBS_MEASUREMENTS]], dim=-1)


def scalar_logits(pi: nn.Module, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """The scalar-reward baseline's masked logits over the window (`ScalarPolicyModule` and `ScalarNetwork`)."""
    return mask_logits(pi(scalar_inputs(obs)), obs[OBS_ACTION_MASK])


class DFPNetwork(DFP, ExportedNetwork):
    """A trained `DFPModule`'s five streams (under the same parameter names) and its offset weights, rebuilt from an
    exported architecture."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__(architecture)
        self.n_actions, self.n_offsets = int(architecture["actions"]), int(architecture["offsets"])
        self.n_measurements = self.observation_space.spaces[OBS_MEASUREMENTS].shape[0]
        self.set_streams({name: build(architecture[name]) for name in STREAMS}, architecture["offset_weights"])


class ScalarNetwork(ExportedNetwork):
    """The scalar-reward baseline's masked logits over the window from `pi` on the state and measurements."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__(architecture)
        self.pi = build(architecture["pi"])

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {ACTION_DIST_INPUTS: scalar_logits(self.pi, batch[OBS])}


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
