"""`schedrl/RLBackfill-v0`: choose which candidate EASY backfills, at every backfill decision with a choice."""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium as gym
import numpy as np

from schedrl.agents.baserule.env import BaseRuleEnv
from schedrl.agents.baserule.env import relative as relative_to_base
from schedrl.agents.rlbackfill.config import RLBackfillEnvConfig
from schedrl.agents.rlbackfill.decisions import apply, next_decision
from schedrl.agents.rlbackfill.observation import CONTEXT_FEATURES, JOB_FEATURES, Observer
from schedrl.envs.masked_discrete import MaskedDiscrete
from schedrl.sim import Simulator
from schedrl.workload.workload import Workload

REWARD_FLOOR = {"wait": 60.0, "turnaround": 60.0}
"""Smallest base value the relative reward divides by, per metric (seconds for times; 1 otherwise): a quiet sequence
whose base waits 0 s would otherwise make the reward unbounded."""
REWARD_CLIP = 5.0
"""The relative reward is clipped to [-REWARD_CLIP, REWARD_CLIP]."""
MAX_EMPTY_DRAWS = 200
"""Sequences drawn at a reset before giving up when none has a backfill decision with a choice."""


def relative(value: float, base: float, metric: str) -> float:
    """The reward: the metric's improvement over the base (first-fit backfilling) on the same sequence, as a share of
    the base's value (positive is better), with the base's value floored (`REWARD_FLOOR`) and the result clipped."""
    floor = REWARD_FLOOR.get(metric, 1.0 if metric != "utilization" else 0.01)
    return relative_to_base(value, base, metric, floor=floor, clip=REWARD_CLIP)


class RLBackfillEnv(BaseRuleEnv):
    """The base heuristic picks (its blocked job is reserved); at every backfill decision with a choice
    (`decisions.next_decision`) the action is the slot of the candidate to start (slot `slots`: none, with `skip`).

    Observation: `observation.Observer` (`jobs`, `context`, `action_mask`). Reward: 0 until the sequence is scheduled,
    then its metric relative to the base with first-fit backfilling on the same sequence (`relative`; the base's
    value is computed once per sequence and cached). A drawn sequence with no decision at all is skipped (another is
    drawn). `info` on the last step: `metric_value`, `base_value`, `decisions`, `skips`, `start`.
    """

    config_class = RLBackfillEnvConfig
    config: RLBackfillEnvConfig

    def __init__(self, config: Mapping[str, Any] | RLBackfillEnvConfig | None = None, workload: Workload | None = None,
                 render_mode: str | None = None, **settings: Any):
        super().__init__(config, workload, render_mode, settings)
        cfg = self.config
        self.observer = Observer(self.norm, cfg.slots, cfg.skip)
        n = cfg.slots + 1
        self.observation_space = gym.spaces.Dict({
            "jobs": gym.spaces.Box(0.0, 1.0, (n, len(JOB_FEATURES)), np.float32),
            "context": gym.spaces.Box(0.0, 1.0, (len(CONTEXT_FEATURES),), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (n,), np.float32)})
        self.action_space = MaskedDiscrete(n)
        self.candidates = np.zeros(0, np.int64)
        self._mask = np.zeros(n, np.float32)

    def reward(self, value: float, base: float) -> float:
        return relative(value, base, self.config.metric)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=self.episodes.reset_seed(seed))  # once: the draws below continue its stream
        for _ in range(MAX_EMPTY_DRAWS):
            episode = self.episodes.for_reset(self.np_random, options)
            self.start, self.jobs = episode.start, episode.jobs
            self.sim = Simulator(episode.jobs, self.sim_config)
            self.decisions = self.skips = 0
            cands = next_decision(self.sim, self.base, self.config.skip, self.config.slots)
            if cands is not None:
                return self._observe(cands), {"start": self.start}
            if options and "start" in options:
                break
        raise ValueError(f"trace {self.workload.name!r}: no sequence of {self.config.sequence_length} jobs drawn had a "
                         f"backfill decision with a choice (two candidates, or one with skip)")

    def _observe(self, cands: np.ndarray) -> dict[str, np.ndarray]:
        self.candidates = cands
        obs = self.observer.build(self.sim, cands)
        self._mask = obs["action_mask"]
        self.action_space.set_mask(self._mask)
        return {**obs, "action_mask": self._mask.copy()}

    def step(self, action):
        a = self.checked(action, lambda a: f"action {a} is masked: slots 0..{len(self.candidates) - 1} hold candidates"
                         + (f", {self.config.slots} starts none" if self.config.skip else ""))
        apply(self.sim, self.candidates, a, self.config.slots)
        self.decisions += 1
        self.skips += a == self.config.slots
        cands = next_decision(self.sim, self.base, self.config.skip, self.config.slots)
        if cands is None:
            reward, info = self.finish({"decisions": self.decisions, "skips": self.skips})
            return self.observer.empty(), reward, True, False, info
        return self._observe(cands), 0.0, False, False, {}
