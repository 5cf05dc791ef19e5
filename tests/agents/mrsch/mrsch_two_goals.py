"""A tiny env where DFP's best action depends on its goal (DFP's defining property)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from schedrl.agents.mrsch.keys import OBS_ACTION_MASK, OBS_GOAL, OBS_MEASUREMENTS, OBS_STATE

STEPS = 8
GAIN = 0.1


class TwoGoalsEnv(gym.Env):
    """Two measurements, two actions: action a raises measurement a by 0.1 and lowers the other by
    0.05. The goal of each episode is one-hot on one measurement, drawn at random (or fixed with
    `options={"goal": [..]}`); the state says nothing about it, so only the goal input can tell
    which action serves it."""

    def __init__(self, config=None):
        self.observation_space = gym.spaces.Dict({
            OBS_STATE: gym.spaces.Box(0.0, 1.0, shape=(3,), dtype=np.float32),
            OBS_MEASUREMENTS: gym.spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32),
            OBS_GOAL: gym.spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32),
            OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32),
        })
        self.action_space = gym.spaces.Discrete(2)

    def _obs(self):
        state = np.array([self.t / STEPS, 1.0, 0.0], dtype=np.float32)
        return {OBS_STATE: state, OBS_MEASUREMENTS: self.m.copy(), OBS_GOAL: self.goal.copy(),
                OBS_ACTION_MASK: np.ones(2, dtype=np.float32)}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if options and "goal" in options:
            self.goal = np.asarray(options["goal"], dtype=np.float32)
        else:
            self.goal = np.eye(2, dtype=np.float32)[self.np_random.integers(2)]
        self.m = np.full(2, 0.5, dtype=np.float32)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        delta = np.full(2, -GAIN / 2, dtype=np.float32)
        delta[int(action)] = GAIN
        self.m = np.clip(self.m + delta, 0.0, 1.0)
        self.t += 1
        return self._obs(), 0.0, self.t >= STEPS, False, {}
