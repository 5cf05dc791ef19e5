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
from ray.rllib.core.columns import Columns

from schedrl.agents.mrsch.config import MRSchEnvConfig
from schedrl.agents.mrsch.goal import decision_goal
from schedrl.agents.mrsch.keys import OBS_ACTION_MASK, OBS_GOAL, OBS_MEASUREMENTS, OBS_STATE
from schedrl.agents.mrsch.observation import StateBuilder, StateNorm, measurements


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
            c = self.config
            self._builder = StateBuilder(sim.resources, sim.capacity, c.window, self.norm, c.bb_unit_gb, c.power_units,
                                         c.fit_first)
            self._for = sim
        state, mask, window = self._builder.build(sim)
        c = self.config
        queue_scale = c.queue_scale if c.queue_weight > 0 else None
        obs = {OBS_STATE: state, OBS_MEASUREMENTS: measurements(sim, queue_scale),
               OBS_GOAL: decision_goal(sim, c.queue_weight).astype(np.float32), OBS_ACTION_MASK: mask}
        return obs, window

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
        batch = {Columns.OBS: {k: torch.from_numpy(v)[None] for k, v in obs.items()}}
        with torch.inference_mode():
            return self.module._forward(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
