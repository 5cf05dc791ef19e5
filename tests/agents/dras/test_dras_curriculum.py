"""DRAS's three-phase curriculum (§III-D) through the shared episode source: phases in order, each a
complete schedule, the held-out part of the trace never used, bad phases refused."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.agents.dras.config import DRASEnvConfig
from schedrl.agents.dras.env import DRASEnv
from schedrl.workload.lublin import generate_lublin


@pytest.fixture(scope="module")
def trace():
    return generate_lublin(800, nodes=64, seed=11)


def play(env: DRASEnv, rng: np.random.Generator, seed: int | None = None) -> dict:
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        valid = np.flatnonzero(obs["action_mask"])
        obs, _, done, _, last = env.step(int(rng.choice(valid)))
    return {**info, **last}


@pytest.mark.integration  # whole curriculum episodes
def test_phases_come_in_order_and_each_episode_is_a_complete_schedule(trace):
    config = DRASEnvConfig(window=5, sequence_length=64, train_fraction=0.5,
                           curriculum="sampled:2,synthetic:2,real")
    env = DRASEnv(config, workload=trace)
    rng = np.random.default_rng(0)
    phases, starts = [], []
    for i in range(6):
        info = play(env, rng, seed=3 if i == 0 else None)
        phases.append(env.episodes.phase().kind)
        starts.append(info["start"])
        assert np.isfinite(info["metric_value"]) and env.sim.done
    assert starts[:4] == [-1, -1, -1, -1]  # re-timed jobsets
    assert all(0 <= s <= 400 - 64 for s in starts[4:])  # real windows inside the training half
    assert phases[-1] == "real"


def test_a_continued_env_skips_the_phases_already_trained(trace):
    env = DRASEnv(DRASEnvConfig(window=5, sequence_length=64, curriculum="sampled:3,real"), workload=trace)
    env.continue_training(5, salt=(2, 0))
    env.reset(seed=1)
    assert env.episodes.phase().kind == "real" and env.start >= 0


def test_an_unknown_phase_is_refused_with_the_valid_ones():
    with pytest.raises(ValueError, match="unknown curriculum phase 'hard'; choose from real, filtered, sampled"):
        DRASEnvConfig(curriculum="hard:3,real")
