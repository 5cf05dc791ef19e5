"""Issue 9 items 10, 13, 14, 15: every agent's env behaves as Gymnasium and RL libraries expect.

Settings as keyword arguments (`gym.make(id, trace=..., backfill=...)`, `make_vec` in every mode),
`render_mode` (`ansi`, `rgb_array`), `action_masks()`, masked `action_space.sample()`, a clear error
when stepping a finished episode, and registration on `import schedrl` without ray or torch.
"""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from shared_traces import shared_trace

import schedrl  # noqa: F401  (registers the envs)
from schedrl.agents.rlscheduler.vector_env import RLSchedulerVectorEnv

# env id -> settings given as keyword arguments (small sequences keep the episodes short)
ENVS = {
    "schedrl/RLScheduler-v0": {"trace": "default", "backfill": "easy", "sequence_length": 24},
    "schedrl/DRAS-v0": {"trace": "default", "sequence_length": 40, "window": 8},
    "schedrl/MRSch-v0": {"trace": "default", "sequence_length": 24, "window": 6},
    "schedrl/Linear-v0": {"trace": "default", "backfill": "easy", "sequence_length": 24},
}


def finish_episode(env, seed: int = 0) -> None:
    """Reset, then step sampled actions to the end, checking the mask conventions at every step."""
    obs, _ = env.reset(seed=seed)
    done = False
    while not done:
        masks = env.unwrapped.action_masks()
        assert masks.dtype == bool and np.array_equal(masks, obs["action_mask"] > 0)
        action = env.action_space.sample()
        assert masks[action], f"sample() drew masked action {action}"
        obs, _, done, truncated, _ = env.step(action)
        assert not truncated


@pytest.mark.parametrize("env_id", ENVS)
def test_settings_as_keyword_arguments_or_config(env_id):
    settings = ENVS[env_id]
    by_keyword = gym.make(env_id, **settings).unwrapped.config
    by_config = gym.make(env_id, config=settings).unwrapped.config
    assert by_keyword == by_config
    assert all(getattr(by_keyword, k) == v for k, v in settings.items())
    with pytest.raises(ValueError, match="sequence_length given both in config= and as keyword arguments"):
        gym.make(env_id, config=settings, sequence_length=settings["sequence_length"])
    with pytest.raises(ValueError, match="unknown .*no_such_setting"):
        gym.make(env_id, no_such_setting=1)


def test_rlscheduler_make_with_lublin_256_and_easy_backfill():
    env = gym.make("schedrl/RLScheduler-v0", trace=str(shared_trace("lublin_256.swf.gz")), backfill="easy")
    assert env.unwrapped.config.backfill == "easy" and len(env.unwrapped.workload) == 10_000


@pytest.mark.parametrize("env_id", ENVS)
def test_make_vec_sync_takes_keyword_settings(env_id):
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync", **ENVS[env_id])
    obs, _ = envs.reset(seed=3)
    assert obs["action_mask"].shape[0] == 2
    assert all(e.unwrapped.config.sequence_length == ENVS[env_id]["sequence_length"] for e in envs.envs)
    envs.close()


def test_make_vec_native_rlscheduler_takes_keyword_settings():
    envs = gym.make_vec("schedrl/RLScheduler-v0", num_envs=2, **ENVS["schedrl/RLScheduler-v0"])
    assert isinstance(envs, RLSchedulerVectorEnv) and envs.envs[0].config.backfill == "easy"
    envs.close()


@pytest.mark.parametrize("env_id", ENVS)
def test_step_after_the_end_says_call_reset(env_id):
    env = gym.make(env_id, **ENVS[env_id])
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.unwrapped.step(0)
    finish_episode(env)
    with pytest.raises(RuntimeError, match=r"^the episode is over: call reset\(\)$"):
        env.step(0)
    env.reset(seed=1)  # and reset() starts a fresh one
    assert env.unwrapped.action_masks().any()


@pytest.mark.parametrize("env_id", ENVS)
def test_action_masks_and_masked_sampling_over_episodes(env_id):
    env = gym.make(env_id, **ENVS[env_id])
    for seed in range(3):
        finish_episode(env, seed)


@pytest.mark.parametrize("env_id", ENVS)
def test_render_modes(env_id):
    env = gym.make(env_id, render_mode="ansi", **ENVS[env_id])
    assert set(env.metadata["render_modes"]) == {"ansi", "rgb_array"}
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "waiting" in text and "busy" in text
    env.step(env.action_space.sample())
    assert isinstance(env.render(), str)  # and after a step
    picture = gym.make(env_id, render_mode="rgb_array", **ENVS[env_id])
    picture.reset(seed=0)
    frame = picture.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert (frame != 255).any()  # something is drawn
    silent = gym.make(env_id, **ENVS[env_id])
    silent.reset(seed=0)
    assert silent.render() is None  # no render_mode: nothing, per Gymnasium
    with pytest.raises(ValueError, match="render_mode 'html' is not supported"):
        type(env.unwrapped)(render_mode="html", **ENVS[env_id])


def test_ansi_shows_the_queue_and_machine():
    env = gym.make("schedrl/RLScheduler-v0", render_mode="ansi", trace="default", sequence_length=256)
    env.reset(seed=0)
    sim = env.unwrapped.sim
    while len(sim.queue) < 2 or len(sim.running()) == 0:
        assert not sim.done, "no decision point with running and waiting jobs in 256 jobs"
        env.step(env.action_space.sample())
    text = env.render()
    busy = sim.capacity[0] - sim.free[0]
    assert f"{busy:g}/{sim.capacity[0]:g} busy" in text
    assert f"waiting {len(sim.queue)}:" in text and f"running {len(sim.running())}:" in text
    assert f"#{sim.queue[0]}(" in text


@pytest.mark.parametrize("env_id", ENVS)
def test_env_checker_with_rendering(env_id):
    check_env(gym.make(env_id, render_mode="rgb_array", **ENVS[env_id]).unwrapped, skip_render_check=False)


def test_vector_env_sample_respects_masks():
    envs = RLSchedulerVectorEnv(num_envs=3, trace="default", sequence_length=64)
    envs.action_space.seed(0)
    obs, _ = envs.reset(seed=0)
    steps_with_choice = 0
    for _ in range(60):
        actions = envs.action_space.sample()
        masks = envs.action_masks()
        assert np.array_equal(masks, obs["action_mask"] > 0)
        live = masks.any(axis=1)  # a sub-env past its terminal step has no valid action until it resets
        assert masks[np.arange(3), actions][live].all(), (actions, np.flatnonzero(masks[0]))
        steps_with_choice += int((masks.sum(axis=1) > 1).any())
        obs, *_ = envs.step(actions)
    assert steps_with_choice > 10  # the masks did leave room for a wrong draw


@pytest.mark.integration  # starts a subprocess
def test_vector_env_with_no_envs_fails_cleanly():
    probe = ("from schedrl.agents.rlscheduler.vector_env import RLSchedulerVectorEnv\n"
             "try:\n    RLSchedulerVectorEnv(num_envs=0)\nexcept ValueError as e:\n    print(e)\n"
             "import gc; gc.collect()\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "num_envs must be an integer >= 1, got 0" in result.stdout
    assert result.stderr == ""  # no "Exception ignored in __del__ ... AttributeError"


@pytest.mark.integration  # starts a subprocess
def test_import_schedrl_registers_every_env_without_ray_or_torch():
    probe = ("import json, sys, schedrl, gymnasium as gym\n"
             f"envs = [gym.make(i) for i in {list(ENVS)!r}]\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('ray', 'torch'))))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
