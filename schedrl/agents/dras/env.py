"""`schedrl/DRAS-v0`: DRAS (Fan et al., "Deep Reinforcement Agent for Scheduling in HPC") over the simulator."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from schedrl.agents.dras.config import DRASEnvConfig
from schedrl.agents.dras.decisions import LEVEL_BACKFILL, LEVEL_DONE, next_decision, sim_config_for
from schedrl.agents.dras.keys import (
    INFO_JOB, INFO_LEVEL, INFO_METRIC, INFO_METRICS, INFO_START, METRIC, OBS_ACTION_MASK, OBS_LEVEL, OBS_STATE,
)
from schedrl.agents.dras.observation import StateBuilder, StateScales, state_rows
from schedrl.agents.steps import checked_action
from schedrl.envs.episodes import EpisodeSource, parse_curriculum, training_end
from schedrl.envs.masked_discrete import MaskedDiscrete
from schedrl.envs.simulator_env import SimulatorEnv
from schedrl.metrics import summarize
from schedrl.sim import Simulator
from schedrl.workload.cleaning import CleaningRules
from schedrl.workload.workload import Workload

# the reading of Eq. (2): requested times in hours, so 1/t_j is O(1) for typical HPC jobs
CAPACITY_TIME_UNIT = 3600.0


def load_env_workload(config: DRASEnvConfig) -> Workload:
    from schedrl.workload.catalog import load_trace

    return load_trace(config.trace, CleaningRules.preset(config.cleaning))


def machine_size(workload: Workload) -> int:
    """N: the number of nodes DRAS sees (the simulator's resource-0 capacity, processors)."""
    return int(workload.max_procs)


def training_range(config: DRASEnvConfig, n_jobs: int) -> tuple[int, int]:
    """(first, end): the jobs random training sequences are drawn from."""
    if config.jobs_range:
        return config.jobs_range[0], config.jobs_range[1]
    return 0, training_end(config.train_fraction, n_jobs)


class DRASEnv(SimulatorEnv):
    """Select jobs at DRAS's two levels, one at a time, rewarded per selection.

    ## Description
    DRAS (Fan et al., §III): at each scheduling instance the agent sees the W oldest waiting jobs.
    Level 1 picks jobs one at a time: one that fits starts now ("ready"), the first that does not
    fit is reserved at its earliest start. Level 2 then picks backfill jobs one at a time among the
    candidates that do not delay the reservation, until none is left. A reservation is held until
    the job starts (level 1 is skipped meanwhile). `two_level=False` is the Decima-PG baseline: flat
    picks among window jobs that fit now, no reservation, no backfilling. `decisions.py` has the details.

    ## Action Space
    `Discrete(W)` for both levels (a `MaskedDiscrete`, whose `sample()` draws valid slots): the window
    slot of the job to select. Level 1 slots hold the W
    oldest waiting jobs (queue order); level 2 slots hold the first W backfill candidates. Stepping a
    masked slot raises `ValueError`; `action_masks()` returns the current mask.

    ## Observation Space
    `Dict`:

    | key | shape | content |
    |---|---|---|
    | `state` | (2W + N, 2) float32 | per window job [size/N, requested time/T], [priority, queued time/24 h]; per node [free, time to its job's estimated end/T] (`observation.py`) |
    | `level` | (1,) float32 | 0.0 at level 1, 1.0 at level 2 |
    | `action_mask` | (W,) float32 | 1 for the slots the current level may select |

    T is the training trace's largest requested time (`norm`, saved with checkpoints).

    ## Rewards
    `capability` (Eq. 1), per selection of job j at either level:
    w1 * wait_j / max(max wait in queue, 6 h) + w2 * size_j / N + w3 * busy nodes after the selection / N.
    `capacity` (Eq. 2), per selection: -(1/c) * sum over the c jobs still waiting of 1/t_j, with t_j the
    requested time in hours (0 when the queue is empty).

    ## Starting State
    A sequence of `sequence_length` consecutive jobs of the cleaned trace: the next of the fixed
    `starts`, else from a random start (seeded by `reset(seed)`) inside `jobs_range` (default: the
    first `train_fraction` of the trace).
    `continue_training` makes an env rebuilt mid-run (resume, restarted runner) pick up there.

    ## Episode End
    Terminates when every job of the sequence has completed; never truncates. The final info has the
    average wait under `metric_value` and every aggregate metric under `metrics`. Stepping after that
    raises `RuntimeError` ("the episode is over: call reset()").

    ## Arguments
    The fields of `DRASEnvConfig` (unknown keys are rejected), as keyword arguments
    (`gym.make(id, trace=...)`) or as a `config=` mapping. `render_mode`: `"ansi"` or `"rgb_array"`
    (`schedrl.envs.render`).

    ## Version History
    - v0: initial version.
    """

    def __init__(self, config: dict[str, Any] | DRASEnvConfig | None = None, workload: Workload | None = None,
                 render_mode: str | None = None, **settings: Any):
        cfg = self._configure(DRASEnvConfig, config, settings, render_mode)
        self.workload = workload if workload is not None else load_env_workload(cfg)
        first, end = training_range(cfg, len(self.workload))
        if end > len(self.workload):
            raise ValueError(f"jobs_range {cfg.jobs_range} runs past the end of trace {self.workload.name!r} "
                             f"({len(self.workload)} jobs)")
        if cfg.window > cfg.sequence_length:
            raise ValueError(f"window={cfg.window} is larger than a sequence ({cfg.sequence_length} jobs)")
        self.sim_config = sim_config_for(cfg)
        self.scales = StateScales.from_dict(cfg.norm) if cfg.norm else StateScales.from_trace(self.workload)
        self.n_nodes = machine_size(self.workload)
        w = cfg.window
        self.observation_space = gym.spaces.Dict({
            OBS_STATE: gym.spaces.Box(0.0, np.inf, shape=(state_rows(w, self.n_nodes), 2), dtype=np.float32),
            OBS_LEVEL: gym.spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32),
            OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, shape=(w,), dtype=np.float32),
        })
        self.action_space = MaskedDiscrete(w)
        self.episodes = EpisodeSource(self.workload, cfg.sequence_length, fixed=cfg.starts,
                                      phases=parse_curriculum(cfg.curriculum), lo=first, hi=end)
        """Where episodes come from: fixed `starts`, else the curriculum (sampled/real/synthetic jobsets)."""
        self.sim: Simulator | None = None
        self.level = LEVEL_DONE
        self._slots = np.zeros(0, dtype=np.int64)
        self._mask = np.zeros(w, dtype=np.float32)

    # ------------------------------------------------------------------ episodes
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        episode = self._next_episode(seed, options, self.sim_config)
        start = self.start = episode.start
        self._builder = StateBuilder(self.sim, self.config.window, self.scales, self.config.priority_fraction)
        self._advance()
        assert self.level != LEVEL_DONE  # a fresh sequence always starts with a decision
        return self._observe(), {INFO_START: start}

    # ------------------------------------------------------------------ decisions
    def _advance(self) -> None:
        self.level, self._slots, valid = next_decision(self.sim, self.config)
        self._mask = np.zeros(self.config.window, dtype=np.float32)
        self._mask[: len(valid)] = valid
        self.action_space.set_mask(self._mask)

    def _observe(self) -> dict[str, np.ndarray]:
        return {
            OBS_STATE: self._builder.build(self.sim, self._slots),
            OBS_LEVEL: np.array([1.0 if self.level == LEVEL_BACKFILL else 0.0], dtype=np.float32),
            OBS_ACTION_MASK: self._mask.copy(),
        }

    @property
    def slots(self) -> np.ndarray:
        """The jobs (indices into the current sequence) behind the valid slots, in slot order."""
        return self._slots

    def _capability(self, j: int, wait_max: float) -> float:
        s = self.sim.state
        cfg = self.config
        wait = self.sim.now - s.submit[j]
        busy = (s.cap[0] - s.free[0]) / s.cap[0]
        return float(cfg.w1 * wait / max(wait_max, cfg.min_tmax) + cfg.w2 * s.req[j, 0] / s.cap[0] + cfg.w3 * busy)

    def _capacity(self) -> float:
        queue = self.sim.queue
        if len(queue) == 0:
            return 0.0
        return float(-np.mean(CAPACITY_TIME_UNIT / self.sim.state.est[queue]))

    def _masked(self, a: int) -> str:
        what = "backfill candidates" if self.level == LEVEL_BACKFILL else (
            "waiting jobs" if self.config.two_level else "waiting jobs that fit now")
        return f"action {a} is masked at level {self.level}: only slots {np.flatnonzero(self._mask).tolist()} hold {what}"

    def step(self, action):
        a = checked_action(self.sim, self.level == LEVEL_DONE, action, self._mask, self._masked)
        j = int(self._slots[a])
        level = self.level
        wait_max = float(self.sim.now - self.sim.state.submit[self.sim.queue].min())
        if level == LEVEL_BACKFILL:
            self.sim.backfill(j)
        else:
            self.sim.pick(j)
        reward = self._capability(j, wait_max) if self.config.reward == "capability" else self._capacity()
        self._advance()
        info = {INFO_JOB: j, INFO_LEVEL: level}
        if self.level == LEVEL_DONE:
            metrics = summarize(self.sim.schedule())
            info.update({INFO_METRIC: metrics.value(METRIC), INFO_METRICS: metrics.to_dict(), INFO_START: self.start})
            obs = {OBS_STATE: np.zeros(self.observation_space[OBS_STATE].shape, np.float32),
                   OBS_LEVEL: np.zeros(1, np.float32), OBS_ACTION_MASK: np.zeros(self.config.window, np.float32)}
            return obs, reward, True, False, info
        return self._observe(), reward, False, False, info
