"""Fixtures for the RLModule tests: RLScheduler-shaped spaces and random masked batches."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE, OBS_ACTION_MASK, OBS_JOBS

NUM_FEATURES = 8  # RLScheduler's JOB_FEATURES; the models read F from the space


def job_spaces(num_features: int = NUM_FEATURES) -> tuple[gym.spaces.Dict, gym.spaces.Discrete]:
    """The env's observation and action spaces (the contract in schedrl.agents.rlscheduler.keys)."""
    obs = gym.spaces.Dict(
        {
            OBS_JOBS: gym.spaces.Box(0.0, 1.0, (MAX_OBSV_SIZE, num_features), np.float32),
            OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, (MAX_OBSV_SIZE,), np.float32),
        }
    )
    return obs, gym.spaces.Discrete(MAX_OBSV_SIZE)


def random_obs(batch: int, num_features: int = NUM_FEATURES, seed: int = 0) -> dict[str, torch.Tensor]:
    """A batch of job matrices with a random mask; every row keeps at least one valid slot."""
    gen = torch.Generator().manual_seed(seed)
    mask = (torch.rand(batch, MAX_OBSV_SIZE, generator=gen) < 0.3).float()
    mask[:, 0] = 1.0
    jobs = torch.rand(batch, MAX_OBSV_SIZE, num_features, generator=gen) * mask[..., None]
    return {OBS_JOBS: jobs, OBS_ACTION_MASK: mask}


@pytest.fixture
def make_spaces():
    """``job_spaces`` as a fixture, for tests that need another feature count."""
    return job_spaces


@pytest.fixture
def make_obs():
    """``random_obs`` as a fixture."""
    return random_obs


@pytest.fixture
def spaces() -> tuple[gym.spaces.Dict, gym.spaces.Discrete]:
    return job_spaces()


@pytest.fixture
def obs() -> dict[str, torch.Tensor]:
    return random_obs(batch=6)
