"""A trained DRAS module as a simulator policy: `pick(sim)` (level 1) and `backfill(sim)` (level 2), greedy.

The module sees exactly what the env shows at the same decision point (`decisions.py` takes the
decisions the agent does not make, `observation.py` builds the state with the run's normalisation
constants), so `Simulator.run(policy)` reproduces the env's greedy episode. Run it on the simulator
semantics of the agent (`decisions.sim_config_for`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from schedrl.agents.dras.config import DRASEnvConfig
from schedrl.agents.dras.decisions import backfill_choices, forced_pick, pick_choices
from schedrl.agents.dras.keys import OBS_ACTION_MASK, OBS_LEVEL, OBS_STATE
from schedrl.agents.dras.observation import StateBuilder, StateScales
from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, QF_PREDS
from schedrl.sim.simulator import Simulator


class DRASPolicy:
    """Greedy decisions of a trained DRAS-PG / Decima-PG (logits) or DRAS-DQL (Q values) module."""

    def __init__(self, module, env_config: Mapping[str, Any] | DRASEnvConfig, name: str = "DRAS"):
        self.module = module
        self.config = env_config if isinstance(env_config, DRASEnvConfig) else DRASEnvConfig.from_dict(env_config)
        if not self.config.norm:
            raise ValueError("the env config has no normalisation constants (norm): pass the run's recorded env config")
        self.scales = StateScales.from_dict(self.config.norm)
        self.name = name
        self._builder: StateBuilder | None = None
        self._for: Simulator | None = None

    def scores(self, state: np.ndarray, mask: np.ndarray, level: int) -> np.ndarray:
        """The module's scores of the W slots (masked slots lowest) for one observation."""
        obs = {OBS_STATE: torch.from_numpy(state)[None], OBS_ACTION_MASK: torch.from_numpy(mask)[None],
               OBS_LEVEL: torch.tensor([[float(level == 2)]])}
        with torch.inference_mode():
            if hasattr(self.module, "compute_q_values"):
                return self.module.compute_q_values({OBS: obs})[QF_PREDS][0].numpy()
            return self.module._forward({OBS: obs})[ACTION_DIST_INPUTS][0].numpy()

    def _choose(self, sim: Simulator, jobs: np.ndarray, valid: np.ndarray, level: int) -> int:
        if self._for is not sim:
            self._builder = StateBuilder(sim, self.config.window, self.scales, self.config.priority_fraction)
            self._for = sim
        if valid.sum() == 1:
            return int(jobs[np.argmax(valid)])
        mask = np.zeros(self.config.window, np.float32)
        mask[: len(valid)] = valid
        scores = self.scores(self._builder.build(sim, jobs), mask, level)
        scores = np.where(mask > 0, scores, -np.inf)
        return int(jobs[int(np.argmax(scores))])

    def pick(self, sim: Simulator) -> int:
        forced = forced_pick(sim, self.config)
        if forced >= 0:
            return forced
        jobs, valid = pick_choices(sim, self.config)
        return self._choose(sim, jobs, valid, 1)

    def backfill(self, sim: Simulator) -> int | None:
        jobs = backfill_choices(sim, self.config)
        if len(jobs) == 0:
            return None
        return self._choose(sim, jobs, np.ones(len(jobs), bool), 2)
