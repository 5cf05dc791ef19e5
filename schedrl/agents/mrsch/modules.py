"""RLlib RLModules of the MRSch agents: the DFP network (MRSch §III-C, §IV-C) and the scalar-reward
baseline's masked policy/value MLPs (§IV-D)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule

from schedrl.agents.mrsch.config import OFFSET_WEIGHTS
from schedrl.agents.mrsch.inference import DFP, mlp, scalar_inputs, scalar_logits
from schedrl.agents.mrsch.keys import DFP_PREDICTIONS, OBS_ACTION_MASK, OBS_GOAL, OBS_MEASUREMENTS, OBS_STATE


DFP_DEFAULTS: dict[str, Any] = {
    # MRSch §IV-C: state network 4,000 -> 1,000 -> output 512
    "state_hiddens": (4000, 1000),
    "state_out": 512,
    # MRSch §IV-C: "a three-layer fully-connected network with 128 neurons" for measurements and goal
    "io_hiddens": (128, 128, 128),
    # DFP (Dosovitskiy & Koltun 2017, Table A1): one hidden layer of 512 in each stream
    "stream_hiddens": (512,),
    "offsets": 6,
    "offset_weights": OFFSET_WEIGHTS,
    # MRSch §IV-C: epsilon starts at 1.0 and decays by 0.995 per decision; the floor is ours
    "epsilon_start": 1.0,
    "epsilon_decay": 0.995,
    "epsilon_floor": 0.05,
}

DFP_MODELS: dict[str, dict[str, Any]] = {
    "paper": {},
    # for machines of a few hundred nodes (a state vector of hundreds, not 11,410): our preset
    "small": {"state_hiddens": (256,), "state_out": 128, "io_hiddens": (64, 64, 64), "stream_hiddens": (128,)},
}


class DFPModule(DFP, TorchRLModule):
    """Direct Future Prediction: predicts m_{t+τ} - m_t for every window slot, offset and measurement.

    State, measurement and goal modules feed a joint representation; an expectation stream (one
    prediction for the state) and an action stream (one per action, its mean over the valid actions
    subtracted) add up to the prediction (DFP §3.2, dueling-style; `predictions` and `scores` are inference.py's
    `DFP`, which the exported network shares). Acting: argmax over valid actions
    of Σ_τ w_τ Σ_j g_j·prediction; exploring: ε-greedy among valid actions, ε = max(floor,
    start·decay^t) with t the global env steps sampled.
    """

    def setup(self) -> None:
        cfg = {**DFP_DEFAULTS, **dict(self.model_config or {})}
        self.cfg = cfg
        spaces = self.observation_space.spaces
        self.n_measurements = spaces[OBS_MEASUREMENTS].shape[0]
        self.n_actions = int(self.action_space.n)
        self.n_offsets = int(cfg["offsets"])
        if len(cfg["offset_weights"]) != self.n_offsets:
            raise ValueError(f"offset_weights has {len(cfg['offset_weights'])} entries for {self.n_offsets} offsets")
        # built in this order (the initial weights depend on it)
        state_net = mlp(spaces[OBS_STATE].shape[0], cfg["state_hiddens"], cfg["state_out"])
        measurement_net = mlp(self.n_measurements, cfg["io_hiddens"])
        goal_net = mlp(spaces[OBS_GOAL].shape[0], cfg["io_hiddens"])
        joint = cfg["state_out"] + 2 * cfg["io_hiddens"][-1]
        out = self.n_offsets * self.n_measurements
        expectation = mlp(joint, cfg["stream_hiddens"], out)
        action_stream = mlp(joint, cfg["stream_hiddens"], self.n_actions * out)
        self.set_streams({"state_net": state_net, "measurement_net": measurement_net, "goal_net": goal_net,
                          "expectation": expectation, "action_stream": action_stream}, cfg["offset_weights"])

    def epsilon(self, t: int) -> float:
        c = self.cfg
        return max(float(c["epsilon_floor"]), float(c["epsilon_start"]) * float(c["epsilon_decay"]) ** max(int(t), 0))

    def _forward_inference(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        with torch.no_grad():
            return {Columns.ACTIONS: torch.argmax(self.scores(batch[Columns.OBS]), dim=-1)}

    def _forward_exploration(self, batch: dict[str, Any], t: int = 0, **kwargs) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        with torch.no_grad():
            greedy = torch.argmax(self.scores(obs), dim=-1)
            mask = obs[OBS_ACTION_MASK]
            random = torch.multinomial(mask + (mask.sum(-1, keepdim=True) == 0).float(), 1).squeeze(-1)
            explore = torch.rand(greedy.shape[0], device=greedy.device) < self.epsilon(t)
            return {Columns.ACTIONS: torch.where(explore, random, greedy)}

    def _forward_train(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {DFP_PREDICTIONS: self.predictions(batch[Columns.OBS])}


def dfp_module_spec(model: str = "small", model_config: Mapping[str, Any] | None = None) -> RLModuleSpec:
    """The `RLModuleSpec` of DFP network preset `model` ("small" or "paper"), `model_config` over it."""
    if model not in DFP_MODELS:
        raise ValueError(f"unknown DFP model {model!r}; choose one of {', '.join(DFP_MODELS)}")
    config = {**DFP_DEFAULTS, **DFP_MODELS[model], **dict(model_config or {})}
    unknown = sorted(set(config) - set(DFP_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown DFP model_config key(s): {', '.join(unknown)}")
    return RLModuleSpec(module_class=DFPModule, model_config=config)


class ScalarPolicyModule(TorchRLModule, ValueFunctionAPI):
    """The scalar-reward baseline's policy (§IV-D): masked logits over the window from an MLP on the
    state and measurements, and a separate value MLP (PPO)."""

    def setup(self) -> None:
        cfg = {"hiddens": (256, 128), **dict(self.model_config or {})}
        spaces = self.observation_space.spaces
        n_in = spaces[OBS_STATE].shape[0] + spaces[OBS_MEASUREMENTS].shape[0]
        self.pi = mlp(n_in, cfg["hiddens"], int(self.action_space.n))
        self.vf = mlp(n_in, cfg["hiddens"], 1)

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: scalar_logits(self.pi, batch[Columns.OBS])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.vf(scalar_inputs(batch[Columns.OBS])).squeeze(-1)
