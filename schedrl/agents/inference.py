"""What the agents' ray-free inference networks share (torch and numpy only, never ray).

An agent's `inference.py` rebuilds the policy part of its trained RLModule as a plain `torch.nn.Module` with the
same parameter names, so the RLModule's weights load into it as they are and the agent's greedy policy
(`Agent.policy_from_module`) runs it as it runs the RLModule. Exported policies (`schedrl.zoo`) are such a network
plus its `architecture`, a JSON dict read from the trained module: layer shapes come from the module itself, never
from defaults restated here.

This module holds RLlib's batch keys as plain strings (the policies read the networks' outputs by them), a stand-in
for the observation space's shapes, and `describe`/`build`: a standard torch layer (or a `Sequential` of them) to
JSON and back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from torch import nn

OBS = "obs"
"""`ray.rllib.core.columns.Columns.OBS`: the observation in a forward pass's batch."""
ACTION_DIST_INPUTS = "action_dist_inputs"
"""`Columns.ACTION_DIST_INPUTS`: the (masked) logits a forward pass returns."""
QF_PREDS = "qf_preds"
"""`ray.rllib.algorithms.dqn.default_dqn_rl_module.QF_PREDS`: the Q values of `compute_q_values`."""


@dataclass(frozen=True)
class Box:
    """The shape of one observation part (what the policies read of a `gymnasium.spaces.Box`)."""

    shape: tuple[int, ...]


@dataclass(frozen=True)
class Spaces:
    """The observation's parts by key (what the policies read of a `gymnasium.spaces.Dict`)."""

    spaces: Mapping[str, Box]


def observation_shapes(space) -> dict[str, list[int]]:
    """The shape of each part of a Dict observation space, as JSON."""
    return {key: [int(n) for n in part.shape] for key, part in space.spaces.items()}


def spaces(shapes: Mapping[str, Any]) -> Spaces:
    """`observation_shapes` back as the stand-in the policies read."""
    return Spaces({key: Box(tuple(int(n) for n in shape)) for key, shape in shapes.items()})


class ExportedNetwork(nn.Module):
    """A network rebuilt from its exported architecture (the dict `inference_module` reads from policy.json): keeps
    it as `architecture` and its observation shapes as `observation_space`; the subclass builds its layers."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.observation_space = spaces(architecture["observation"])


_CONV = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "padding_mode")
_POOL = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
_FIELDS: dict[str, tuple[str, ...]] = {
    "Linear": ("in_features", "out_features"),
    "Conv1d": _CONV,
    "Conv2d": _CONV,
    "MaxPool1d": _POOL,
    "ReLU": (),
    "Tanh": (),
    "LeakyReLU": ("negative_slope",),
    "Flatten": ("start_dim", "end_dim"),
}
"""The torch layers `describe` knows, and the constructor arguments that define each."""


def describe(layer: nn.Module) -> dict[str, Any]:
    """A standard torch layer, or a `Sequential` of them, as JSON (`build` makes it again); ValueError for others."""
    kind = type(layer).__name__
    if isinstance(layer, nn.Sequential):
        return {"type": "Sequential", "layers": [describe(child) for child in layer]}
    if kind not in _FIELDS or type(layer) is not getattr(nn, kind):
        raise ValueError(f"no JSON form for a {kind} layer (known: Sequential, {', '.join(_FIELDS)})")
    out: dict[str, Any] = {"type": kind}
    for name in _FIELDS[kind]:
        value = getattr(layer, name)
        out[name] = list(value) if isinstance(value, tuple) else value
    if kind in ("Linear", "Conv1d", "Conv2d"):
        out["bias"] = layer.bias is not None
    return out


def build(spec: Mapping[str, Any]) -> nn.Module:
    """The layer `describe` wrote, freshly initialised (its weights are loaded afterwards)."""
    kind = spec.get("type")
    if kind == "Sequential":
        return nn.Sequential(*(build(child) for child in spec["layers"]))
    if kind not in _FIELDS:
        raise ValueError(f"unknown layer type {kind!r} in an architecture (known: Sequential, {', '.join(_FIELDS)})")
    args = {name: tuple(spec[name]) if isinstance(spec[name], list) else spec[name] for name in _FIELDS[kind]}
    if "bias" in spec:
        args["bias"] = bool(spec["bias"])
    return getattr(nn, kind)(**args)


class LayerNetwork(nn.Module):
    """A policy network that is one layer (or `Sequential`) of the trained RLModule, rebuilt from its JSON form under
    the module's own name for it (`layer`), so the module's weights load as they are. A subclass names the layer and,
    to check what it is given, the RLModule class it comes from and its `network` label:
    `inference_network(module or architecture)`."""

    layer: str
    """The attribute of the trained module, and the architecture's key, that holds the layer."""
    module_class: str | None = None
    """The RLModule class's name a trained module must have; None: unchecked."""
    module_label: str = "a policy module"
    """What the check's error calls such a module."""
    network: str | None = None
    """The architecture's `network` label (with the observation's shapes); None: the layer alone."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.add_module(self.layer, build(architecture[self.layer]))

    @classmethod
    def architecture_of(cls, module) -> dict[str, Any]:
        """The architecture of a trained module (ValueError for one of another class, where `module_class` is set)."""
        if cls.module_class is not None and type(module).__name__ != cls.module_class:
            raise ValueError(f"{type(module).__name__} is not {cls.module_label} ({cls.module_class})")
        if cls.network is None:
            return {cls.layer: describe(getattr(module, cls.layer))}
        return {"network": cls.network, "observation": observation_shapes(module.observation_space),
                cls.layer: describe(getattr(module, cls.layer))}

    @classmethod
    def inference_network(cls, source) -> "LayerNetwork":
        """The network of an exported `architecture` dict, or with the architecture of a trained module."""
        return cls(source if isinstance(source, Mapping) else cls.architecture_of(source))
