"""`RLSchedulerVectorEnv`: many RLScheduler simulators stepped per call, in one process.

A native `gymnasium.vector.VectorEnv` (RLlib's `VECTOR_ENTRY_POINT` mode): no subprocesses and no
per-env wrappers; observations are written straight into preallocated batch arrays. Each sub-env is
an `RLSchedulerEnv` sharing one loaded workload, so a sub-env's trajectory equals the single env's
under the same seed (tested). Autoreset mode is NEXT_STEP, as RLlib requires: the step after a
terminal one resets that sub-env and ignores its action. `action_space.sample()` draws valid actions
(a `MaskedMultiDiscrete` following every sub-env's mask) and `action_masks()` returns the masks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from schedrl.envs.masked_discrete import MaskedMultiDiscrete
from schedrl.envs.render import RENDER_MODES
from schedrl.agents.rlscheduler.keys import OBS_ACTION_MASK, OBS_JOBS
from schedrl.agents.rlscheduler.env import RLSchedulerEnv, load_env_workload
from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
from schedrl.envs.settings import env_config


class RLSchedulerVectorEnv(VectorEnv):
    """`num_envs` RLScheduler environments behind one batched step."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(self, num_envs: int = 1, config: dict[str, Any] | None = None, render_mode: str | None = None,
                 **kwargs: Any):
        # RLlib's vector entry point and gymnasium's make_vec pass the env settings as keyword arguments
        self.envs: list[RLSchedulerEnv] = []  # before any check: close() (from __del__) must find it
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        cfg = env_config(RLSchedulerEnvConfig, config, kwargs)
        workload = load_env_workload(cfg)
        self.envs = [RLSchedulerEnv(cfg, workload=workload, render_mode=render_mode) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.render_mode = render_mode
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = MaskedMultiDiscrete(num_envs, int(self.single_action_space.n))
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        jobs_shape = self.single_observation_space[OBS_JOBS].shape
        self._jobs = np.zeros((num_envs,) + jobs_shape, dtype=np.float32)
        self._mask = np.zeros((num_envs, jobs_shape[0]), dtype=np.float32)
        self.action_space.set_masks(self._mask)  # read in place by sample()

    def _put(self, i: int, obs: dict) -> None:
        self._jobs[i] = obs[OBS_JOBS]
        self._mask[i] = obs[OBS_ACTION_MASK]

    def action_masks(self) -> np.ndarray:
        """Every sub-env's current action mask as booleans, shape (num_envs, slots)."""
        return self._mask > 0

    def render(self) -> tuple | None:
        """Every sub-env's `render()` (None without a `render_mode`)."""
        if self.render_mode is None:
            return None
        return tuple(env.render() for env in self.envs)

    def _batch(self) -> dict[str, np.ndarray]:
        return {OBS_JOBS: self._jobs.copy(), OBS_ACTION_MASK: self._mask.copy()}

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        if seed is None or isinstance(seed, (list, tuple)):
            seeds = list(seed) if seed is not None else [None] * self.num_envs
        else:
            # independent child seeds per sub-env (worker/vector index is not known here)
            seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(self.num_envs)]
        infos: dict[str, Any] = {}
        for i, env in enumerate(self.envs):
            obs, info = env.reset(seed=seeds[i], options=options)
            self._put(i, obs)
            infos = self._add_info(infos, info, i)
        self._needs_reset[:] = False
        return self._batch(), infos

    def continue_training(self, episodes_done: int, salt: tuple[int, ...]) -> None:
        """`RLSchedulerEnv.continue_training` on every sub-env (each has its own episode count)."""
        for env in self.envs:
            env.continue_training(episodes_done, salt)

    def step(self, actions):
        actions = np.asarray(actions)
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        infos: dict[str, Any] = {}
        for i, env in enumerate(self.envs):
            if self._needs_reset[i]:
                obs, info = env.reset()
                self._needs_reset[i] = False
            else:
                obs, rewards[i], terminated[i], truncated[i], info = env.step(actions[i])
                self._needs_reset[i] = terminated[i] or truncated[i]
            self._put(i, obs)
            infos = self._add_info(infos, info, i)
        return self._batch(), rewards, terminated, truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()
