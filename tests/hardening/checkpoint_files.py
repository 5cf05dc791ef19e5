"""A small RLScheduler checkpoint written without training (an untrained kernel module and its run record)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import schedrl  # noqa: F401  (registers the envs)
from schedrl.agents.checkpoint import MODULE_SUBPATH, RunRecord
from schedrl.agents.rlscheduler.env import sim_config_for

CHECKPOINT = "checkpoint_000001"


def write_checkpoint(run: Path) -> Path:
    """`run/CHECKPOINT`, laid out as RLlib's Algorithm checkpoints are, with `run/schedrl_run.json` above it."""
    from schedrl.agents.rlscheduler.modules import module_spec

    env = gym.make("schedrl/RLScheduler-v0", trace="default", sequence_length=32).unwrapped
    spec = module_spec("kernel")
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    checkpoint = run / CHECKPOINT
    spec.build().save_to_path(str(checkpoint / MODULE_SUBPATH))
    env_config = {**env.config.to_dict(), "norm": env.norm.to_dict()}
    RunRecord(agent="rlscheduler", env_config=env_config, sim_config=sim_config_for(env.config), model="kernel",
              settings={}).write(run)
    return checkpoint
