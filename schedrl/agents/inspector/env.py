"""`schedrl/Inspector-v0`: accept or reject the base heuristic's proposal at every scheduling point."""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium as gym
import numpy as np

from schedrl.agents.inspector.config import InspectorEnvConfig, make_base
from schedrl.agents.inspector.observation import Normalisation, Observer
from schedrl.envs.episodes import ContinuedEpisodes, EpisodeSource, training_end
from schedrl.envs.masked_discrete import MaskedDiscrete
from schedrl.envs.render import RENDER_MODES, check_render_mode, render
from schedrl.envs.settings import env_config
from schedrl.metrics import lower_is_better, summarize
from schedrl.sim import DECIDE_PICK, FINISHED, Simulator
from schedrl.workload.workload import Workload

ACCEPT, REJECT = 0, 1
"""The two actions."""
OBS_FEATURES = "features"
OBS_ACTION_MASK = "action_mask"


def reject_allowed(sim: Simulator, proposal: int = -1, starvation_wait: float = 0.0) -> bool:
    """A rejection waits for the next event: with no job running and none to arrive there is none (a deadlock), so
    such a point is always accepted. The starvation guard (`starvation_wait` > 0 seconds): a proposal that has
    waited that long is always accepted, so a policy cannot win on the mean by holding back a few jobs for ever."""
    if not sim.has_event:
        return False
    return starvation_wait <= 0 or proposal < 0 or sim.now - sim.state.submit[proposal] < starvation_wait


def relative(value: float, base: float, metric: str) -> float:
    """The reward: the metric's improvement over the base heuristic's value on the same sequence, as a share of it
    (positive is better)."""
    scale = max(abs(base), 1e-9)
    return (base - value) / scale if lower_is_better(metric) else (value - base) / scale


class InspectorEnv(ContinuedEpisodes, gym.Env):
    """At every scheduling point the base heuristic proposes a job; accept (0) starts it (or holds it, as the base
    would, when it does not fit; backfilling then runs around it), reject (1) starts nothing and moves to the next
    arrival or completion, where the base proposes again.

    Observation: `features` (the `observation.FEATURES`, in [0, 1]) and `action_mask` (accept is always allowed;
    reject only where an event is left to wait for, `reject_allowed`). Reward: 0 until the sequence is scheduled,
    then its metric relative to the base heuristic alone on the same sequence (`relative`; the base's value is
    computed once per sequence and cached). `info`: `metric_value`, `base_value`, `rejections` on the last step.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(self, config: Mapping[str, Any] | InspectorEnvConfig | None = None, workload: Workload | None = None,
                 render_mode: str | None = None, **settings: Any):
        self.config = env_config(InspectorEnvConfig, config, settings)
        self.render_mode = check_render_mode(render_mode)
        cfg = self.config
        self.workload = workload if workload is not None else cfg.workload()
        self.sim_config = cfg.sim_config()
        self.norm = Normalisation.from_dict(cfg.norm) if cfg.norm else Normalisation.from_trace(
            self.workload[:training_end(cfg.train_fraction, len(self.workload))])
        self.observer = Observer(self.norm, cfg.history_features)
        self.episodes = EpisodeSource(self.workload, cfg.sequence_length, fixed=cfg.starts,
                                      hi=training_end(cfg.train_fraction, len(self.workload)))
        self.observation_space = gym.spaces.Dict({
            OBS_FEATURES: gym.spaces.Box(0.0, 1.0, (self.observer.size,), np.float32),
            OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, (2,), np.float32)})
        self.action_space = MaskedDiscrete(2)
        self.base = make_base(cfg.base)
        self._base_values: dict[tuple[int, int], float] = {}
        self.sim: Simulator | None = None
        self.proposal = -1
        self._mask = np.ones(2, np.float32)

    def base_value(self, start: int, jobs: Workload) -> float:
        """The base heuristic's metric on the sequence at `start` (cached: computed once per sequence)."""
        key = (int(start), len(jobs))
        if key not in self._base_values:
            schedule = make_base(self.config.base).run(Simulator(jobs, self.sim_config))
            self._base_values[key] = summarize(schedule).value(self.config.metric)
        return self._base_values[key]

    def action_masks(self) -> np.ndarray:
        return self._mask > 0

    def render(self):
        return render(self.sim, self.render_mode)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=self.episodes.reset_seed(seed))
        episode = self.episodes.for_reset(self.np_random, options)
        self.start, self.jobs = episode.start, episode.jobs
        self.sim = Simulator(episode.jobs, self.sim_config)
        self.base = make_base(self.config.base)  # a fresh random stream for `random`, as the base's own run has
        self.rejections = 0
        assert self.sim.advance() == DECIDE_PICK
        return self._observe(), {"start": self.start}

    def _observe(self) -> dict[str, np.ndarray]:
        self.proposal = int(self.base.pick(self.sim))
        self._mask = np.array([1.0, float(reject_allowed(self.sim, self.proposal, self.config.starvation_wait))],
                              np.float32)
        self.action_space.set_mask(self._mask)
        return {OBS_FEATURES: self.observer.build(self.sim, self.proposal), OBS_ACTION_MASK: self._mask.copy()}

    def step(self, action):
        if self.sim is None:
            raise RuntimeError("call reset() before step()")
        if self.sim.done:
            raise RuntimeError("the episode is over: call reset()")
        a = int(action)
        if a not in (ACCEPT, REJECT) or self._mask[a] == 0:
            raise ValueError(f"action {a} is not allowed here (mask {self._mask.tolist()}: 0 accept, 1 reject; a "
                             "rejection needs a running job or a future arrival to wait for)")
        if a == REJECT:
            self.sim.defer()
            self.rejections += 1
        else:
            self.sim.pick(self.proposal)
        code = self.sim.advance()
        if code == FINISHED:
            value = summarize(self.sim.schedule()).value(self.config.metric)
            base = self.base_value(self.start, self.jobs)
            obs = {OBS_FEATURES: np.zeros(self.observer.size, np.float32), OBS_ACTION_MASK: np.zeros(2, np.float32)}
            info = {"metric_value": value, "base_value": base, "rejections": self.rejections, "start": self.start}
            return obs, relative(value, base, self.config.metric), True, False, info
        assert code == DECIDE_PICK  # first-fit backfilling: the simulator starts backfilled jobs itself
        return self._observe(), 0.0, False, False, {}
