"""`schedrl/RLSchert-v0`: RLSchert (and DeepRM) over the discrete-time cluster `schedrl.dtsim` (no ray/torch)."""

from __future__ import annotations

import itertools
from typing import Any

import gymnasium as gym
import numpy as np

from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.evaluation import episode_summary, sequence_for
from schedrl.agents.rlschert.keys import (
    INFO_METRIC, INFO_SEQUENCE_SEED, INFO_SUMMARY, INFO_TEACHER, OBS_ACTION_MASK, OBS_EXTRA, OBS_IMAGE, OBS_RUNNING,
    OBS_TEACHER,
)
from schedrl.agents.rlschert.observation import MAX_RELATIVE_CHANGE, RUNNING_FEATURES, StateView, image_shape
from schedrl.dtsim import DTSim, JobTable
from schedrl.envs.masked_discrete import MaskedDiscrete


class RLSchertEnv(gym.Env):
    """Allocate, kill or wait, one action at a time, on DeepRM's discrete-time cluster with RLSchert's re-estimates.

    ## Description
    RLSchert (Wang et al. 2021, §3.3-3.4): jobs arrive step by step (Bernoulli, `job_rate`) and wait;
    the agent allocates visible jobs at their earliest fit on the canvas, kills running jobs (they
    return to the queue and restart from zero), or moves time on one step. With `kill=False` and
    `estimates="prerun"` this is DeepRM's env (Mao et al. 2016) on the same jobs. The cluster is
    `schedrl.dtsim.DTSim`; `observation.StateView` builds the state, mask and teacher.

    ## Action Space
    `Discrete(num_nw + 1 + num_kill)` (14) with kills, `Discrete(num_nw + 1)` (6) without (a
    `MaskedDiscrete`, sampling valid actions): 0..num_nw-1 allocate visible job i, num_nw void,
    num_nw+1+k kill running slot k. A masked action raises `ValueError` with the reason;
    `action_masks()` returns the current mask.

    ## Observation Space
    `Dict` (layout and normalisation: `observation.py`):

    | key | shape | content |
    |---|---|---|
    | `image` | (horizon, res_slot + num_nw x job_width + ceil(backlog / horizon)) | canvas, waiting-job images, backlog (0/1) |
    | `running` | (num_kill, 7) | per running slot: len_param, elapsed, relative change, current estimate, time in system, size, state |
    | `extra` | (1,) | steps since the latest arrival / horizon |
    | `action_mask` | (n_actions,) | 1.0 for valid actions |
    | `teacher` | (n_actions,) | one-hot of the imitation teacher's action (also `info["teacher_action"]`) |

    ## Rewards
    Paid when time moves on (the void action), for the step passed; 0 for other actions.
    `slowdown` (Eq. 9): -sum over every job in the system (running, ready, waiting, backlog) of 1 / its
    current estimate. `completion` (Eq. 10): -the number of jobs in the system.

    ## Starting State
    A job sequence: `simu_len` Bernoulli arrival steps over the job table, drawn from the env's RNG
    (`reset(seed=...)`), or the next of the fixed `sequence_seeds` (evaluation), or the
    `schedrl.dtsim.JobSequence` given as `reset(options={"sequence": ...})` (tests, replays).
    Drawn sequences without any arrival are redrawn.

    ## Episode End
    Terminates when every job has finished (or was dropped); truncates at `max_seq` steps. The last
    info holds `metric_value` (average slowdown; unfinished jobs counted up to now) and `summary`.

    ## Arguments
    `env_config` keys: the fields of `RLSchertEnvConfig` (unknown keys are rejected).

    ## Version History
    - v0: initial version.
    """

    metadata = {"render_modes": []}

    def __init__(self, config: dict[str, Any] | RLSchertEnvConfig | None = None, table: JobTable | None = None,
                 **kwargs: Any):
        # gymnasium.make passes the env config as keyword arguments, RLlib as one dict
        if isinstance(config, RLSchertEnvConfig) and not kwargs:
            self.config = config
        else:
            given = config.to_dict() if isinstance(config, RLSchertEnvConfig) else dict(config or {})
            self.config = RLSchertEnvConfig.from_dict({**given, **kwargs})
        cfg = self.config
        if table is not None:
            cfg.check_table(table)
        self.table = table if table is not None else cfg.job_table()
        self._cluster = cfg.dtsim_config()
        n = cfg.n_actions
        self.observation_space = gym.spaces.Dict({
            OBS_IMAGE: gym.spaces.Box(0.0, 1.0, shape=image_shape(cfg), dtype=np.float32),
            OBS_RUNNING: gym.spaces.Box(-1.0, max(MAX_RELATIVE_CHANGE, cfg.max_seq / cfg.horizon),
                                        shape=(cfg.num_kill, RUNNING_FEATURES), dtype=np.float32),
            OBS_EXTRA: gym.spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32),
            OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32),
            OBS_TEACHER: gym.spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32),
        })
        self.action_space = MaskedDiscrete(n)
        self._seeds = itertools.cycle(cfg.sequence_seeds) if cfg.sequence_seeds else None
        self.view: StateView | None = None
        self._mask = np.zeros(n, dtype=bool)

    @property
    def sim(self) -> DTSim | None:
        """The running episode's cluster (None before the first reset)."""
        return None if self.view is None else self.view.sim

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the actions valid now."""
        return self._mask.copy()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        sequence_seed = None
        if options and options.get("sequence") is not None:
            sequence = options["sequence"]
        else:
            if self._seeds is not None:
                sequence_seed = next(self._seeds)
            else:
                sequence_seed = int(self.np_random.integers(2**63 - 1))
            sequence = sequence_for(self.table, self.config, sequence_seed)
        self.view = StateView(DTSim(self.table, sequence, self._cluster), self.config)
        obs, teacher = self._observe()
        return obs, {INFO_TEACHER: teacher, INFO_SEQUENCE_SEED: sequence_seed}

    def _observe(self) -> tuple[dict[str, np.ndarray], int]:
        self._mask = self.view.mask()
        self.action_space.set_mask(self._mask)
        teacher = self.view.teacher(self._mask)
        return self.view.observe(self._mask, teacher), teacher

    def _penalty(self) -> float:
        sim = self.view.sim
        if self.config.reward == "slowdown":
            return sim.slowdown_penalty()
        return -float(len(sim.queue) + sum(1 for j in sim.slots if j >= 0))

    def step(self, action):
        if self.view is None or self.view.sim.done:
            raise RuntimeError("the episode is over: call reset()")
        action = int(action)
        # the void action moves time on: the penalty is for the jobs in the system during the step passed
        reward = self._penalty() if action == self.config.num_nw and self._mask[action] else 0.0
        self.view.step(action)
        sim = self.view.sim
        obs, teacher = self._observe()
        info: dict[str, Any] = {INFO_TEACHER: teacher}
        if sim.done:
            summary = episode_summary(sim)
            info[INFO_METRIC] = summary["slowdown"]
            info[INFO_SUMMARY] = summary
        return obs, float(reward), bool(sim.done and not sim.truncated), bool(sim.truncated), info
