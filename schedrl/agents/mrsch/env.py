"""`schedrl/MRSch-v0`: MRSch's scheduling instance (§III) as a view over the schedrl simulator."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from schedrl.agents.mrsch.config import MRSchEnvConfig
from schedrl.agents.mrsch.keys import (
    INFO_GOAL, INFO_JOB, INFO_MEASUREMENTS, INFO_METRIC, INFO_START, OBS_ACTION_MASK, OBS_GOAL, OBS_MEASUREMENTS,
    OBS_STATE,
)
from schedrl.agents.mrsch.observation import StateBuilder, StateNorm, observe
from schedrl.agents.mrsch.workload import load_workload
from schedrl.agents.steps import checked_action
from schedrl.envs.episodes import EpisodeSource, parse_curriculum
from schedrl.envs.masked_discrete import MaskedDiscrete
from schedrl.envs.simulator_env import SimulatorEnv
from schedrl.metrics import summarize
from schedrl.sim import DECIDE_PICK, FINISHED, SimConfig, Simulator
from schedrl.workload.workload import Workload


def sim_config_for(config: MRSchEnvConfig) -> SimConfig:
    """MRSch §III-C: list scheduling from a window, the first pick that does not fit is reserved, EASY
    backfilling (every resource fits, the reservation is never delayed); whole-node allocation."""
    return SimConfig(discipline="list", window=config.window, backfill="easy", allocation="nodes")


def reward_weights(config: MRSchEnvConfig, n_resources: int) -> np.ndarray:
    """Weights of the `utilization` reward (MRSch §IV-D: 0.5 / 0.5 for nodes and burst buffer)."""
    if config.reward_weights:
        if len(config.reward_weights) != n_resources:
            raise ValueError(f"reward_weights has {len(config.reward_weights)} entries for {n_resources} resources")
        return np.asarray(config.reward_weights, dtype=np.float64)
    return np.full(n_resources, 1.0 / n_resources)


class MRSchEnv(SimulatorEnv):
    """Pick jobs from a window of the queue on a machine with several resources (MRSch).

    ## Description
    MRSch (Li et al., §III) on the schedrl simulator's `list` discipline: at each scheduling instance
    the agent picks jobs one at a time from the first `window` waiting jobs; a pick that fits every
    resource starts at once, the first that does not is reserved, and EASY backfilling over all
    resources fills the rest; the next event opens a new instance. The env only asks at picks.

    ## Action Space
    `Discrete(window)` (a `MaskedDiscrete` sampling valid slots): the window slot to pick. Stepping a
    masked slot raises `ValueError`.

    ## Observation Space
    `Dict` (R resources: nodes, burst buffer `bb`, and `power` in S6–S10; U_r units of resource r):

    | key | shape | content |
    |---|---|---|
    | `state` | ((R + 2)·W + 2·Σ U_r,) float32 in [0, 1] | per slot: request shares, requested time, queued time; per unit: available, time to its job's requested end (`observation.py`) |
    | `measurements` | (R,) float32 in [0, 1] | utilisation of each resource now; with `queue_weight` > 0 (ours) one more entry, q / (q + `queue_scale`) for q waiting jobs |
    | `goal` | (R,) float32 in [0, 1] | MRSch Eq. (1), recomputed at every decision (`goal.py`); with `queue_weight` one more entry, -`queue_weight` |
    | `action_mask` | (W,) float32 | 1 for slots holding a waiting job; with `fit_first` (ours) only those that fit now, while any does |

    The state length is derived from the machine: 4W + 2N₁ + 2N₂ for nodes and burst buffer, as in
    MRSch §IV-C. The paper's 11,410 for Theta is inconsistent with its own sizes (W = 10, 4,392 nodes,
    1.26 PB in one-TB units give 11,344): see `observation.py`.

    ## Rewards
    `reward="none"` (DFP): 0; DFP learns from the measurements (also in `info["measurements"]`).
    `reward="utilization"` (the scalar-RL baseline, §IV-D): Σ_j w_j·U_j at the next decision point
    (0 once the sequence is done). `info["metric_value"]` on the last step: the average wait.

    ## Starting State
    A sequence of `sequence_length` consecutive jobs from a random start within the first
    `train_fraction` of the trace (seeded by `reset(seed)`), or the next of the fixed `starts`.
    `continue_training` makes an env rebuilt mid-run pick up without replaying starts.

    ## Episode End
    Terminates when every job of the sequence has completed; never truncates. Stepping after that
    raises `RuntimeError` ("the episode is over: call reset()").

    ## Arguments
    The fields of `MRSchEnvConfig` (unknown keys are rejected), as keyword arguments
    (`gym.make(id, trace=...)`) or as a `config=` mapping. `render_mode`: `"ansi"` or `"rgb_array"`
    (`schedrl.envs.render`).

    ## Version History
    - v0: initial version.
    """

    def __init__(self, config: dict[str, Any] | MRSchEnvConfig | None = None, workload: Workload | None = None,
                 render_mode: str | None = None, **settings: Any):
        cfg = self._configure(MRSchEnvConfig, config, settings, render_mode)
        self.workload = workload if workload is not None else load_workload(cfg)
        if not self.workload.resources:
            raise ValueError(f"workload {self.workload.name!r} has no extra resources; MRSch schedules several")
        self.sim_config = sim_config_for(cfg)
        self.norm = StateNorm.from_dict(cfg.norm) if cfg.norm else StateNorm.from_trace(self.workload)
        probe = Simulator(self.workload[:1], self.sim_config)  # resource names and capacities
        self.resources = probe.resources
        self.capacity = probe.capacity.copy()
        self.builder = StateBuilder.for_config(self.resources, self.capacity, cfg, self.norm)
        r = len(self.resources)
        self.reward_weights = reward_weights(cfg, r)
        m = r + (cfg.queue_weight > 0)  # the queue measurement (ours) after the resources
        self.observation_space = gym.spaces.Dict({
            OBS_STATE: gym.spaces.Box(0.0, 1.0, shape=(self.builder.length,), dtype=np.float32),
            OBS_MEASUREMENTS: gym.spaces.Box(0.0, 1.0, shape=(m,), dtype=np.float32),
            OBS_GOAL: gym.spaces.Box(min(0.0, -cfg.queue_weight), 1.0, shape=(m,), dtype=np.float32),
            OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, shape=(cfg.window,), dtype=np.float32),
        })
        self.action_space = MaskedDiscrete(cfg.window)
        self.episodes = EpisodeSource(self.workload, cfg.sequence_length, fixed=cfg.starts,
                                      phases=parse_curriculum(cfg.curriculum),
                                      hi=int(cfg.train_fraction * len(self.workload)))
        """Where episodes come from: fixed `starts`, else the curriculum (sampled/real/synthetic jobsets)."""
        self.sim: Simulator | None = None
        self._window = np.zeros(0, dtype=np.int64)
        self._mask = np.zeros(cfg.window, dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        episode = self._next_episode(seed, options, self.sim_config)
        start = self.start = episode.start
        code = self.sim.advance()
        assert code == DECIDE_PICK  # a fresh sequence always starts with a pick
        obs = self._observe()
        return obs, {INFO_START: start, INFO_MEASUREMENTS: obs[OBS_MEASUREMENTS], INFO_GOAL: obs[OBS_GOAL]}

    def _observe(self) -> dict[str, np.ndarray]:
        obs, self._window = observe(self.builder, self.sim, self.config)
        self._mask = obs[OBS_ACTION_MASK].copy()
        self.action_space.set_mask(self._mask)
        return obs

    def step(self, action):
        a = checked_action(self.sim, self.sim is not None and self.sim.done, action, self._mask, lambda a: (
            f"action {a} is masked: the valid slots now are {', '.join(str(int(i)) for i in np.flatnonzero(self._mask))}"
            + (" (fit_first: the jobs that fit now)" if self.config.fit_first else "")))
        job = int(self._window[a])
        self.sim.pick(job)
        if self.sim.advance() == FINISHED:
            value = summarize(self.sim.schedule()).avg_wait
            obs = {key: np.zeros(space.shape, np.float32) for key, space in self.observation_space.items()}
            info = {INFO_JOB: job, INFO_METRIC: value, INFO_START: self.start,
                    INFO_MEASUREMENTS: obs[OBS_MEASUREMENTS], INFO_GOAL: obs[OBS_GOAL]}
            return obs, 0.0, True, False, info
        obs = self._observe()
        reward = 0.0
        if self.config.reward == "utilization":
            reward = float(self.reward_weights @ obs[OBS_MEASUREMENTS][:len(self.resources)])
        return obs, reward, False, False, {INFO_JOB: job, INFO_MEASUREMENTS: obs[OBS_MEASUREMENTS],
                                           INFO_GOAL: obs[OBS_GOAL]}
