"""A trained RLSchert/DeepRM module as a policy of the discrete-time cluster: `act(sim) -> action` (greedy)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from schedrl.agents.cloning import module_device
from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS
from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.keys import OBS_ACTION_MASK
from schedrl.agents.rlschert.observation import StateView
from schedrl.dtsim import DTSim


def greedy_action(module, obs: Mapping[str, np.ndarray]) -> int:
    """The module's most likely valid action for one env observation (the mask is the observation's)."""
    device = module_device(module)  # the learner's GPU during the warm start's DAgger rounds
    batch = {OBS: {k: torch.from_numpy(np.asarray(v, np.float32)[None]).to(device) for k, v in obs.items()}}
    with torch.inference_mode():
        logits = module.forward_inference(batch)[ACTION_DIST_INPUTS][0].cpu().numpy()
    return int(np.argmax(np.where(np.asarray(obs[OBS_ACTION_MASK]) > 0, logits, -np.inf)))


class RLSchertPolicy:
    """The module's most likely valid action on a `DTSim` (the `schedrl.dtsim.heuristics.Policy` protocol).

    The module sees the sim through the same `StateView` as in training, so the observation and
    the mask (including "no kill of a job allocated at this step") are the env's. Build one per
    episode or reuse it: a new sim starts a new view.
    """

    def __init__(self, module, env_config: RLSchertEnvConfig | Mapping[str, Any], name: str = "RLSCHERT"):
        self.module = module
        self.config = env_config if isinstance(env_config, RLSchertEnvConfig) else RLSchertEnvConfig.from_dict(env_config)
        self.name = name
        self._view: StateView | None = None

    def __repr__(self) -> str:
        return f"RLSchertPolicy({self.name})"

    def act(self, sim: DTSim) -> int:
        if self._view is None or self._view.sim is not sim:
            self._view = StateView(sim, self.config)
        view = self._view
        mask = view.mask()
        obs = view.observe(mask, teacher=self.config.num_nw)  # the teacher is not an input of the networks
        action = greedy_action(self.module, obs)
        view.note(action)
        return action
