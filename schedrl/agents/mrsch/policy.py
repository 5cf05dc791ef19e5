"""A trained DFP module as a simulator policy (`pick(sim)`): greedy on goal · prediction.

The goal is recomputed from the simulator at every decision (MRSch Eq. 1), so the same network
favours whichever resource is scarce now. The run's env config (window, offsets and their weights,
normalisation, state units) makes the observation the one the module was trained on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS
from schedrl.agents.mrsch.config import MRSchEnvConfig
from schedrl.agents.mrsch.observation import StateBuilder, StateNorm, observe


class ObservationPolicy:
    """Builds the MRSch observation for a simulator; subclasses score the window slots."""

    def __init__(self, module, env_config: Mapping[str, Any], name: str):
        self.module = module
        self.config = MRSchEnvConfig.from_dict(env_config)
        if not self.config.norm:
            raise ValueError("the env config has no normalisation constants (`norm`): was it prepared?")
        self.norm = StateNorm.from_dict(self.config.norm)
        self.name = name
        self._builder: StateBuilder | None = None
        self._for = None

    def observe(self, sim) -> tuple[dict[str, np.ndarray], np.ndarray]:
        if self._for is not sim:
            self._builder = StateBuilder.for_config(sim.resources, sim.capacity, self.config, self.norm)
            self._for = sim
        return observe(self._builder, sim, self.config)

    def scores(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def pick(self, sim) -> int:
        obs, window = self.observe(sim)
        scores = self.scores(obs)[: len(window)]
        return int(window[int(np.argmax(scores))])


class DFPPolicy(ObservationPolicy):
    """Greedy decisions of a trained `DFPModule`."""

    def __init__(self, module, env_config: Mapping[str, Any], name: str = "MRSch"):
        super().__init__(module, env_config, name)

    def scores(self, obs):
        batch = {k: torch.from_numpy(v)[None] for k, v in obs.items()}
        with torch.inference_mode():
            return self.module.scores(batch)[0].numpy()


class LogitPolicy(ObservationPolicy):
    """Greedy decisions (the most probable slot) of the scalar-reward baseline's policy module."""

    def __init__(self, module, env_config: Mapping[str, Any], name: str = "ScalarRL"):
        super().__init__(module, env_config, name)

    def scores(self, obs):
        batch = {OBS: {k: torch.from_numpy(v)[None] for k, v in obs.items()}}
        with torch.inference_mode():
            return self.module._forward(batch)[ACTION_DIST_INPUTS][0].numpy()
