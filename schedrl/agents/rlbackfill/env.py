"""`schedrl/RLBackfill-v0`: choose which candidate EASY backfills, at every backfill decision with a choice."""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium as gym
import numpy as np

from schedrl.agents.rlbackfill.config import RLBackfillEnvConfig, make_base
from schedrl.agents.rlbackfill.decisions import apply, next_decision
from schedrl.agents.rlbackfill.observation import CONTEXT_FEATURES, JOB_FEATURES, Normalisation, Observer
from schedrl.envs.episodes import ContinuedEpisodes, EpisodeSource, training_end
from schedrl.envs.masked_discrete import MaskedDiscrete
from schedrl.envs.render import RENDER_MODES, check_render_mode, render
from schedrl.envs.settings import env_config
from schedrl.metrics import lower_is_better, summarize
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
    scale = max(abs(base), REWARD_FLOOR.get(metric, 1.0 if metric != "utilization" else 0.01))
    gain = (base - value) / scale if lower_is_better(metric) else (value - base) / scale
    return float(np.clip(gain, -REWARD_CLIP, REWARD_CLIP))


class RLBackfillEnv(ContinuedEpisodes, gym.Env):
    """The base heuristic picks (its blocked job is reserved); at every backfill decision with a choice
    (`decisions.next_decision`) the action is the slot of the candidate to start (slot `slots`: none, with `skip`).

    Observation: `observation.Observer` (`jobs`, `context`, `action_mask`). Reward: 0 until the sequence is scheduled,
    then its metric relative to the base with first-fit backfilling on the same sequence (`relative`; the base's
    value is computed once per sequence and cached). A drawn sequence with no decision at all is skipped (another is
    drawn). `info` on the last step: `metric_value`, `base_value`, `decisions`, `skips`, `start`.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(self, config: Mapping[str, Any] | RLBackfillEnvConfig | None = None, workload: Workload | None = None,
                 render_mode: str | None = None, **settings: Any):
        self.config = env_config(RLBackfillEnvConfig, config, settings)
        self.render_mode = check_render_mode(render_mode)
        cfg = self.config
        self.workload = workload if workload is not None else cfg.workload()
        self.sim_config, self.base_config = cfg.sim_config(), cfg.base_sim_config()
        end = training_end(cfg.train_fraction, len(self.workload))
        self.norm = Normalisation.from_dict(cfg.norm) if cfg.norm else Normalisation.from_trace(self.workload[:end])
        self.observer = Observer(self.norm, cfg.slots, cfg.skip)
        self.episodes = EpisodeSource(self.workload, cfg.sequence_length, fixed=cfg.starts, hi=end)
        n = cfg.slots + 1
        self.observation_space = gym.spaces.Dict({
            "jobs": gym.spaces.Box(0.0, 1.0, (n, len(JOB_FEATURES)), np.float32),
            "context": gym.spaces.Box(0.0, 1.0, (len(CONTEXT_FEATURES),), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (n,), np.float32)})
        self.action_space = MaskedDiscrete(n)
        # one base object: a heuristic keeps no state between simulations (`random`'s stream position is the
        # simulator's), and building one draws its random numbers
        self.base = make_base(cfg.base)
        self._base_values: dict[tuple[int, int], float] = {}
        self.sim: Simulator | None = None
        self.candidates = np.zeros(0, np.int64)
        self._mask = np.zeros(n, np.float32)

    def base_value(self, start: int, jobs: Workload) -> float:
        """The base's metric with first-fit backfilling on the sequence at `start` (cached per sequence)."""
        key = (int(start), len(jobs))
        if start < 0 or key not in self._base_values:
            schedule = self.base.run(Simulator(jobs, self.base_config))
            value = summarize(schedule).value(self.config.metric)
            if start < 0:
                return value
            self._base_values[key] = value
        return self._base_values[key]

    def action_masks(self) -> np.ndarray:
        return self._mask > 0

    def render(self):
        return render(self.sim, self.render_mode)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=self.episodes.reset_seed(seed))
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
        if self.sim is None:
            raise RuntimeError("call reset() before step()")
        if self.sim.done:
            raise RuntimeError("the episode is over: call reset()")
        a = int(action)
        if not 0 <= a < len(self._mask) or self._mask[a] == 0:
            raise ValueError(f"action {a} is masked: slots 0..{len(self.candidates) - 1} hold candidates"
                             + (f", {self.config.slots} starts none" if self.config.skip else ""))
        apply(self.sim, self.candidates, a, self.config.slots)
        self.decisions += 1
        self.skips += a == self.config.slots
        cands = next_decision(self.sim, self.base, self.config.skip, self.config.slots)
        if cands is None:
            value = summarize(self.sim.schedule()).value(self.config.metric)
            base = self.base_value(self.start, self.jobs)
            info = {"metric_value": value, "base_value": base, "decisions": self.decisions, "skips": self.skips,
                    "start": self.start}
            return self.observer.empty(), relative(value, base, self.config.metric), True, False, info
        return self._observe(cands), 0.0, False, False, {}
