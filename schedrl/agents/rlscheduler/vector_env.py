"""`RLSchedulerVectorEnv`: many RLScheduler simulators stepped per call, in one process.

A native `gymnasium.vector.VectorEnv` (RLlib's `VECTOR_ENTRY_POINT` mode): no subprocesses and no
per-env wrappers; observations are written straight into preallocated batch arrays. Each sub-env is
an `RLSchedulerEnv` sharing one loaded workload, so a sub-env's trajectory equals the single env's
under the same seed (tested). Autoreset mode is NEXT_STEP, as RLlib requires: the step after a
terminal one resets that sub-env and ignores its action.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from schedrl.agents.rlscheduler.keys import OBS_ACTION_MASK, OBS_JOBS
from schedrl.agents.rlscheduler.env import RLSchedulerEnv, load_env_workload
from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig


class RLSchedulerVectorEnv(VectorEnv):
    """`num_envs` RLScheduler environments behind one batched step."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, config: dict[str, Any] | None = None, **kwargs: Any):
        # RLlib's vector entry point passes the env_config keys (and num_envs) as keyword arguments
        merged = dict(config or {})
        merged.update(kwargs)
        merged.pop("render_mode", None)
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        cfg = RLSchedulerEnvConfig.from_dict(merged)
        workload = load_env_workload(cfg)
        self.envs = [RLSchedulerEnv(cfg, workload=workload) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        jobs_shape = self.single_observation_space[OBS_JOBS].shape
        self._jobs = np.zeros((num_envs,) + jobs_shape, dtype=np.float32)
        self._mask = np.zeros((num_envs, jobs_shape[0]), dtype=np.float32)

    def _put(self, i: int, obs: dict) -> None:
        self._jobs[i] = obs[OBS_JOBS]
        self._mask[i] = obs[OBS_ACTION_MASK]

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
