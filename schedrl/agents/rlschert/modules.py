"""RLSchert's networks as RLlib RLModules (torch, new API stack): MLP 64-64 (Table 3's best) and a CNN option.

Both read the `image`, `running` and `extra` parts of the observation (never `teacher`), output one
logit per action masked (`schedrl/agents/masking.py`), and carry a separate value network of the same
shape (PPO's `ValueFunctionAPI`; `InferenceOnlyAPI` keeps it off the env runners).

RLSchert §4.1.3's count pins its MLP down: 120 x 72 inputs, 64-64, 14 outputs, no biases:
8,640 x 64 + 64 x 64 + 64 x 14 = 557,952 parameters. Ours has biases (`bias`, default True) and a
120 x 75 image (the backlog block is 5 columns, §3.4's features are their own input, `observation.py`).
`model_config` keys: `hiddens` (default (64, 64)), `bias` (True), `activation` (`tanh` or `relu`),
`kill_head` (`flat` or `slots`).

Kill logits (ours, `kill_head`): with `flat` (the paper's) the network's last layer outputs all 14 logits, so
the kill logit of slot k is a separate linear read of the whole state, and the 7 features of slot k are 7 of
~9,000 inputs. With `slots` the network outputs the allocation and void logits only, and one small MLP
shared by the 8 running slots scores each slot's kill from that slot's features and the network's last hidden
layer (the state's summary): the same rule for every slot, learnt from every slot's examples (RLSchert's kill
rule, `KillRule`, is a test on one slot's features). The value network is unchanged.

The networks themselves (`FlatEncoder`, `ConvEncoder`, `SlotKills`, `policy_logits`) are defined once, without ray,
in inference.py: these RLModules hold them as `pi` and `value_net`, and the exported policy is the same classes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI, ValueFunctionAPI
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from schedrl.agents.rlschert.inference import (
    ACTIVATIONS, ConvEncoder, FlatEncoder, SlotKills, features, policy_logits,
)
from schedrl.agents.rlschert.keys import OBS_ACTION_MASK, OBS_EXTRA, OBS_IMAGE, OBS_RUNNING
from schedrl.agents.rlschert.settings import KILL_HEADS, MODELS

# RLSchert Table 3 / §4.1.3: "a two-layer fully connected neural network, which contains 64 neurons at each layer"
HIDDENS = (64, 64)
_DEFAULTS: dict[str, Any] = {"hiddens": HIDDENS, "bias": True, "activation": "tanh", "kill_head": "flat"}
_RLLIB_KEYS = frozenset(f.name for f in dataclasses.fields(DefaultModelConfig))


def resolve_config(model_config: Mapping[str, Any] | None) -> dict[str, Any]:
    """`model_config` over the defaults; unknown keys raise ValueError naming them."""
    given = dict(model_config or {})
    unknown = sorted(set(given) - set(_DEFAULTS) - _RLLIB_KEYS)
    if unknown:
        raise ValueError(f"RLSchert network: unknown model_config key(s) {unknown}; valid keys: {sorted(_DEFAULTS)}")
    config = {**_DEFAULTS, **{k: v for k, v in given.items() if k in _DEFAULTS}}
    config["hiddens"] = tuple(int(h) for h in config["hiddens"])
    if not config["hiddens"] or min(config["hiddens"]) < 1:
        raise ValueError(f"model_config['hiddens'] must be positive widths; got {config['hiddens']}")
    if config["activation"] not in ACTIVATIONS:
        raise ValueError(f"model_config['activation'] must be one of {', '.join(ACTIVATIONS)}")
    if config["kill_head"] not in KILL_HEADS:
        raise ValueError(f"model_config['kill_head'] must be one of {', '.join(KILL_HEADS)}; got {config['kill_head']!r}")
    return config


class _RLSchertModule(TorchRLModule, ValueFunctionAPI, InferenceOnlyAPI):
    """Policy and value networks over the same encoded observation; subclasses build `_encoder()`."""

    def setup(self) -> None:
        obs, act = self.observation_space, self.action_space
        if not isinstance(obs, gym.spaces.Dict) or {OBS_IMAGE, OBS_RUNNING, OBS_EXTRA, OBS_ACTION_MASK} - set(obs.spaces):
            raise ValueError(f"{type(self).__name__} needs the RLSchert Dict observation, got {obs}")
        if not isinstance(act, gym.spaces.Discrete) or obs[OBS_ACTION_MASK].shape != (act.n,):
            raise ValueError(f"{type(self).__name__}: Discrete actions matching the mask expected, got {act}")
        self.config = resolve_config(self.model_config)
        self.n_actions = int(act.n)
        if self.config["kill_head"] == "slots":
            slots, slot_features = obs[OBS_RUNNING].shape
            if self.n_actions <= slots:
                raise ValueError(f"kill_head='slots': {self.n_actions} actions cannot end in {slots} kill actions")
            self.pi = SlotKills.create(self._encoder(self.n_actions - slots), slots, slot_features, self.config)
        else:
            self.pi = self._encoder(self.n_actions)
        self.value_net = self._encoder(1)

    def _encoder(self, outputs: int) -> nn.Module:
        raise NotImplementedError

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: policy_logits(self.pi, batch[Columns.OBS])}

    def compute_values(self, batch: dict[str, Any], embeddings=None) -> torch.Tensor:
        return self.value_net(*features(batch[Columns.OBS])).squeeze(-1)

    def get_non_inference_attributes(self) -> list[str]:
        return ["value_net"]


class RLSchertMLP(_RLSchertModule):
    """MLP 64-64 over the flattened image, running features and extra column (RLSchert Table 3: ppo_bs128_mlp64_64)."""

    def _encoder(self, outputs: int) -> nn.Module:
        obs = self.observation_space
        inputs = sum(int(torch.tensor(obs[k].shape).prod()) for k in (OBS_IMAGE, OBS_RUNNING, OBS_EXTRA))
        return FlatEncoder.create(inputs, self.config, outputs)


class RLSchertCNN(_RLSchertModule):
    """Two convolutions over the image, then 64-64 over those features plus the running features (Table 3: ppo_bs128_cnn)."""

    def _encoder(self, outputs: int) -> nn.Module:
        obs = self.observation_space
        rest = int(torch.tensor(obs[OBS_RUNNING].shape).prod()) + obs[OBS_EXTRA].shape[0]
        return ConvEncoder.create(tuple(obs[OBS_IMAGE].shape), rest, self.config, outputs)


def module_spec(model: str = "mlp", model_config: Mapping[str, Any] | None = None) -> RLModuleSpec:
    """The RLModuleSpec of network `model` (`mlp` or `cnn`)."""
    classes = {"mlp": RLSchertMLP, "cnn": RLSchertCNN}
    if model not in MODELS:
        raise ValueError(f"unknown RLSchert model {model!r}; choose one of {', '.join(MODELS)}")
    resolve_config(model_config)
    return RLModuleSpec(module_class=classes[model], model_config=dict(model_config or {}))
