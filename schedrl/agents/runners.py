"""Env runners, learner GPUs, seed and fault tolerance: declared once for every agent.

Each agent's settings dataclass subclasses `RunnerSettings` and redeclares a field only to give it its own default
(RLScheduler samples in one runner with four envs, DRAS and MRSch in the driver with one, MRSch allows 3 restarts
instead of 10; `tests/agents/test_contract.py` pins every agent's values). `runner_options` reads the shared
`schedrl train` options, and `with_runners` puts the settings into an RLlib `AlgorithmConfig`. No ray import here:
the config passed in is already built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schedrl.agents.base import AgentOptions


@dataclass(frozen=True)
class RunnerSettings:
    """Where and how RLlib samples, and what it does when a runner dies."""

    num_env_runners: int = 0
    """Sampling processes; 0 samples in the driver."""
    num_envs_per_env_runner: int = 1
    """Environments stepped together by each env runner."""
    num_gpus_per_learner: float = 0.0
    """GPUs for the (single, local) learner."""
    seed: int | None = 0
    """Seed for RLlib (modules, env runners, env resets); None leaves runs unseeded."""
    env_runner_resources: Mapping[str, float] | None = None
    """Custom Ray resources each env runner requires: runners go only to nodes declaring them."""
    restart_failed_env_runners: bool = True
    """Restart an env runner whose process or node died (a Ray actor restart) and keep training."""
    max_env_runner_restarts: int = 10  # ours: rides out a few node losses; a crash loop still ends the run
    """Restarts allowed per env runner."""


def runner_options(options: AgentOptions, **defaults: Any) -> dict[str, Any]:
    """The shared `schedrl train` options of `options` (`--num-env-runners`, `--envs-per-runner`,
    `--num-gpus-per-learner`, `--seed`, `--runner-resource` parsed as `runner_resources`) as `RunnerSettings` fields;
    `defaults` fill the ones it lacks (a test's or another tool's parser)."""
    names = {"num_env_runners": "num_env_runners", "num_envs_per_env_runner": "envs_per_runner",
             "num_gpus_per_learner": "num_gpus_per_learner", "seed": "seed", "env_runner_resources": "runner_resources"}
    return {field: getattr(options, option) if hasattr(options, option) else defaults[field]
            for field, option in names.items() if hasattr(options, option) or field in defaults}


def with_runners(config, settings: RunnerSettings, **env_runners: Any):
    """`config` (an RLlib `AlgorithmConfig`) with `settings`' env runners, their custom resources, fault tolerance and
    the learner's GPUs; `env_runners`: more `AlgorithmConfig.env_runners` keywords of the agent's own."""
    return (config
            .env_runners(num_env_runners=settings.num_env_runners,
                         num_envs_per_env_runner=settings.num_envs_per_env_runner,
                         custom_resources_per_env_runner=dict(settings.env_runner_resources or {}), **env_runners)
            .fault_tolerance(restart_failed_env_runners=settings.restart_failed_env_runners,
                             max_num_env_runner_restarts=settings.max_env_runner_restarts)
            .learners(num_gpus_per_learner=settings.num_gpus_per_learner))
