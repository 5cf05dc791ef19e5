"""`schedrl/Inspector-v0`: accept or reject the base heuristic's proposal at every scheduling point."""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium as gym
import numpy as np

from schedrl.agents.baserule.env import BaseRuleEnv, relative
from schedrl.agents.inspector.config import InspectorEnvConfig
from schedrl.agents.inspector.mask import RejectMask, reject_allowed
from schedrl.agents.inspector.observation import Observer
from schedrl.envs.masked_discrete import MaskedDiscrete
from schedrl.sim import DECIDE_PICK, FINISHED
from schedrl.workload.workload import Workload

__all__ = ["ACCEPT", "InspectorEnv", "OBS_ACTION_MASK", "OBS_FEATURES", "REJECT", "reject_allowed", "relative"]

ACCEPT, REJECT = 0, 1
"""The two actions."""
OBS_FEATURES = "features"
OBS_ACTION_MASK = "action_mask"


class InspectorEnv(BaseRuleEnv):
    """At every scheduling point the base heuristic proposes a job; accept (0) starts it (or holds it, as the base
    would, when it does not fit; backfilling then runs around it), reject (1) starts nothing and moves to the next
    arrival or completion, where the base proposes again.

    Observation: `features` (the `observation.FEATURES`, in [0, 1]) and `action_mask` (accept is always allowed;
    reject only where `mask.RejectMask` allows: an event left to wait for, the starvation guard, and with
    `reject_where="pays"` another waiting job the proposal competes with). Reward: 0 until the sequence is scheduled,
    then its metric relative to the base heuristic alone on the same sequence (`baserule.env.relative`; the base's
    value is computed once per sequence and cached). `info`: `metric_value`, `base_value`, `rejections` on the last
    step.
    """

    config_class = InspectorEnvConfig
    config: InspectorEnvConfig

    def __init__(self, config: Mapping[str, Any] | InspectorEnvConfig | None = None, workload: Workload | None = None,
                 render_mode: str | None = None, **settings: Any):
        super().__init__(config, workload, render_mode, settings)
        self.observer = Observer(self.norm, self.config.history_features)
        self.observation_space = gym.spaces.Dict({
            OBS_FEATURES: gym.spaces.Box(0.0, 1.0, (self.observer.size,), np.float32),
            OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, (2,), np.float32)})
        self.action_space = MaskedDiscrete(2)
        self.reject_mask = RejectMask.of(self.config)
        self.proposal = -1
        self._mask = np.ones(2, np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        episode = self._next_episode(seed, options, self.sim_config)
        self.start, self.jobs = episode.start, episode.jobs
        self.rejections = 0
        assert self.sim.advance() == DECIDE_PICK
        return self._observe(), {"start": self.start}

    def _observe(self) -> dict[str, np.ndarray]:
        self.proposal = int(self.base.pick(self.sim))
        self._mask = np.array([1.0, float(self.reject_mask.allows(self.sim, self.proposal))], np.float32)
        self.action_space.set_mask(self._mask)
        return {OBS_FEATURES: self.observer.build(self.sim, self.proposal), OBS_ACTION_MASK: self._mask.copy()}

    def step(self, action):
        a = self.checked(action, lambda a: f"action {a} is not allowed here (mask {self._mask.tolist()}: 0 accept, "
                                           "1 reject; a rejection needs a running job or a future arrival to wait for)")
        if a == REJECT:
            self.sim.defer()
            self.rejections += 1
        else:
            self.sim.pick(self.proposal)
        code = self.sim.advance()
        if code == FINISHED:
            obs = {OBS_FEATURES: np.zeros(self.observer.size, np.float32), OBS_ACTION_MASK: np.zeros(2, np.float32)}
            reward, info = self.finish({"rejections": self.rejections})
            return obs, reward, True, False, info
        assert code == DECIDE_PICK  # first-fit backfilling: the simulator starts backfilled jobs itself
        return self._observe(), 0.0, False, False, {}
