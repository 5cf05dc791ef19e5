"""DRAS's networks as RLlib RLModules (torch, new API stack): DRAS-PG's policy and DRAS-DQL's Q network.

DRAS §III-B: "input layer, convolution layer, two fully-connected layers, and output layer. The input
layer is connected to a convolution layer with a 1x2 filter to extract job or node status information
in each row. The convolution layer is connected to two fully-connected layers activated by leaky
rectifier." Table III's parameter counts pin the shapes down exactly: one 1x2 filter with a bias
(3 parameters) turns the [R, 2] input into R values; the two fully connected layers have no bias; the
output layer has one. Theta's DRAS-PG: 3 + 4,460 x 4,000 + 4,000 x 1,000 + 1,000 x 50 + 50 =
21,890,053; DRAS-DQL scores one job at a time from its two rows and the N node rows (R = 2 + N = 4,362):
3 + 4,362 x 4,000 + 4,000 x 1,000 + 1,000 + 1 = 21,449,004 (Table III prints 4,368 for its
convolution width, which the total contradicts). Cori's DRAS-PG count (161,960,053) follows from the
same shapes; its DRAS-DQL count (161,764,004) only with DRAS-PG's 12,176-wide input, a slip in the table.

DRAS-DQL evaluates its shared network on every window job. The first fully connected layer is
linear in its input, so its node part is computed once per state and added to each job's part:
the same Q values as running the network W times, at about 1/W of the cost.

The network itself (`DRASNet`, with `policy_logits` and `q_values`) is defined once, without ray, in
inference.py: these RLModules hold it as `net`, and the exported policy is the same class.

`model_config` keys: `fc_hiddens` (the two layer widths; default sized from W and N, see
`scaled_hiddens`), `fc_bias` (default False, as Table III's counts imply), `leaky_slope` (0.01,
TensorFlow's and torch's default). Presets by name: `MODELS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.dqn.default_dqn_rl_module import QF_NEXT_PREDS, QF_PREDS, QF_TARGET_NEXT_PREDS
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.utils import make_target_network
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI, QNetAPI, TargetNetworkAPI
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.schedules.scheduler import Scheduler

from schedrl.agents.dras.inference import LEAKY_SLOPE, DRASNet, policy_logits, q_values
from schedrl.agents.dras.keys import OBS_ACTION_MASK, OBS_STATE

# DRAS Table III: fully connected layers 4000 -> 1000 (Theta), 10000 -> 4000 (Cori)
THETA_HIDDENS = (4000, 1000)
CORI_HIDDENS = (10000, 4000)

MODELS: dict[str, dict[str, Any]] = {
    "scaled": {},  # widths sized from W and N (`scaled_hiddens`)
    "theta": {"fc_hiddens": THETA_HIDDENS},  # DRAS Table III, Theta
    "cori": {"fc_hiddens": CORI_HIDDENS},  # DRAS Table III, Cori
}
"""Network presets by name; `model_config` overrides a preset's keys."""

_DEFAULTS: dict[str, Any] = {"fc_hiddens": None, "fc_bias": False, "leaky_slope": LEAKY_SLOPE}
# keys RLlib merges into every module's model_config (DefaultModelConfig fields, DQN's own), accepted and ignored
_RLLIB_KEYS = frozenset(f.name for f in dataclasses.fields(DefaultModelConfig)) | {
    "double_q", "dueling", "epsilon", "num_atoms", "std_init", "v_max", "v_min", "vf_share_layers"}


def scaled_hiddens(input_rows: int) -> tuple[int, int]:
    """Layer widths in Theta's proportions (4,460 input rows -> 4,000 -> 1,000), at least 32 and 16."""
    first = max(32, round(input_rows * THETA_HIDDENS[0] / 4460))
    return first, max(16, round(first * THETA_HIDDENS[1] / THETA_HIDDENS[0]))


def resolve_config(model_config: Mapping[str, Any] | None, input_rows: int) -> dict[str, Any]:
    """`model_config` over the defaults; unknown keys raise ValueError naming them."""
    given = dict(model_config or {})
    unknown = sorted(set(given) - set(_DEFAULTS) - _RLLIB_KEYS)
    if unknown:
        raise ValueError(f"DRAS network: unknown model_config key(s) {unknown}; valid keys: {sorted(_DEFAULTS)}")
    config = {**_DEFAULTS, **{k: v for k, v in given.items() if k in _DEFAULTS}}
    hiddens = config["fc_hiddens"]
    if hiddens is None:
        hiddens = scaled_hiddens(input_rows)
    hiddens = tuple(hiddens)
    if len(hiddens) != 2 or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hiddens):
        raise ValueError(f"model_config['fc_hiddens'] must be two positive ints (DRAS §III-B), got {config['fc_hiddens']!r}")
    config["fc_hiddens"] = hiddens
    return config


def _spaces(module) -> tuple[int, int]:
    obs, act = module.observation_space, module.action_space
    name = type(module).__name__
    if not isinstance(obs, gym.spaces.Dict) or {OBS_STATE, OBS_ACTION_MASK} - set(obs.spaces):
        raise ValueError(f"{name} needs the DRAS Dict observation (keys {OBS_STATE!r}, {OBS_ACTION_MASK!r}), got {obs}")
    if not isinstance(act, gym.spaces.Discrete) or obs[OBS_ACTION_MASK].shape != (act.n,):
        raise ValueError(f"{name}: the action space must be Discrete(W) matching the mask, got {act}")
    rows = obs[OBS_STATE].shape[0]
    if obs[OBS_STATE].shape != (rows, 2) or rows <= 2 * act.n:
        raise ValueError(f"{name}: the state must have shape (2W + N, 2), got {obs[OBS_STATE].shape} with W={act.n}")
    return rows, int(act.n)


class DRASPGModule(TorchRLModule):
    """DRAS-PG (and Decima-PG): W logits from the whole state, masked (`schedrl/agents/masking.py`)."""

    def setup(self) -> None:
        rows, self.window = _spaces(self)
        config = resolve_config(self.model_config, rows)
        self.net = DRASNet.create(rows, config["fc_hiddens"], self.window, config["fc_bias"], config["leaky_slope"])

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        # RLLIB_NOTES: finite, not -inf, or policy-gradient losses turn NaN (`policy_logits` masks with mask_logits)
        return {Columns.ACTION_DIST_INPUTS: policy_logits(self.net, batch[Columns.OBS])}


class DRASQModule(TorchRLModule, QNetAPI, TargetNetworkAPI, InferenceOnlyAPI):
    """DRAS-DQL: one Q value per window job from the shared per-job network; invalid slots are -inf.

    Implements what RLlib's DQN needs: `compute_q_values`, a target network (`TargetNetworkAPI`),
    epsilon-greedy exploration over the valid slots with the schedule in `model_config["epsilon"]`,
    and `_forward_train` returning the current, next (double Q) and target-next Q values.
    """

    def setup(self) -> None:
        rows, self.window = _spaces(self)
        config = resolve_config(self.model_config, 2 + rows - 2 * self.window)
        if self.model_config.get("dueling") or (self.model_config.get("num_atoms") or 1) > 1:
            raise ValueError("DRASQModule supports neither dueling nor distributional DQN (dueling=False, num_atoms=1)")
        self.uses_double_q = bool(self.model_config.get("double_q", False))
        self.net = DRASNet.create(2 + rows - 2 * self.window, config["fc_hiddens"], 1, config["fc_bias"],
                                  config["leaky_slope"])
        self.epsilon_schedule = Scheduler(fixed_value_or_schedule=self.model_config.get("epsilon", 0.0),
                                          framework="torch")

    def _q(self, net: DRASNet, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        # RLLIB_NOTES: DQN treats -inf Q values as invalid actions (`q_values` sets them)
        return q_values(net, obs, self.window)

    def compute_q_values(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {QF_PREDS: self._q(self.net, batch[Columns.OBS])}

    def make_target_networks(self) -> None:
        self._target_net = make_target_network(self.net)

    def get_target_network_pairs(self):
        return [(self.net, self._target_net)]

    def forward_target(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {QF_PREDS: self._q(self._target_net, batch[Columns.OBS])}

    def get_non_inference_attributes(self) -> list[str]:
        return ["_target_net"]

    def _forward_inference(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {Columns.ACTIONS: torch.argmax(self.compute_q_values(batch)[QF_PREDS], dim=-1)}

    def _forward_exploration(self, batch: dict[str, Any], t: int = 0, **kwargs) -> dict[str, Any]:
        greedy = self._forward_inference(batch)[Columns.ACTIONS]
        self.epsilon_schedule.update(t)
        epsilon = self.epsilon_schedule.get_current_value()
        mask = batch[Columns.OBS][OBS_ACTION_MASK]
        random = torch.multinomial(mask.clamp(min=0.0) + (mask.sum(-1, keepdim=True) <= 0).float(), 1).squeeze(-1)
        explore = torch.rand(greedy.shape, device=greedy.device) < epsilon
        return {Columns.ACTIONS: torch.where(explore, random, greedy)}

    def _forward_train(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        out = {QF_PREDS: self._q(self.net, batch[Columns.OBS])}
        if self.uses_double_q:
            out[QF_NEXT_PREDS] = self._q(self.net, batch[Columns.NEXT_OBS])
        out[QF_TARGET_NEXT_PREDS] = self._q(self._target_net, batch[Columns.NEXT_OBS])
        return out


def module_spec(kind: str, model: str = "scaled", model_config: Mapping[str, Any] | None = None) -> RLModuleSpec:
    """The RLModuleSpec of DRAS's `pg` or `dql` network with preset `model` and `model_config` over it."""
    if model not in MODELS:
        raise ValueError(f"unknown DRAS model {model!r}; choose one of {', '.join(MODELS)}")
    classes = {"pg": DRASPGModule, "dql": DRASQModule}
    if kind not in classes:
        raise ValueError(f"unknown DRAS network kind {kind!r}; choose pg or dql")
    config = {**MODELS[model], **dict(model_config or {})}
    resolve_config(config, 1)  # unknown keys and bad widths fail here, before anything is built
    return RLModuleSpec(module_class=classes[kind], model_config=config)
