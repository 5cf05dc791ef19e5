"""The `linear` agent behind the `Agent` contract (no ray/torch at import)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from schedrl.agents.base import Agent, AgentOptions, Baseline, Prepared, TraceJudge
from schedrl.agents.linear import ENV_ID
from schedrl.agents.linear.env import LinearEnvConfig, observe
from schedrl.agents.runners import RunnerSettings, runner_options, with_runners
from schedrl.scenarios.split import VALIDATION_SHARE, held_out_after, training_end


@dataclass(frozen=True)
class LinearSettings(RunnerSettings):
    """RLlib PPO settings of the example (stock PPO learner); env runners, seed and restarts come from
    `RunnerSettings`, with the example's own defaults redeclared."""

    lr: float = 3e-3
    """Learning rate."""
    train_batch_size_per_learner: int = 2048
    """Env steps per iteration."""
    minibatch_size: int = 256
    """SGD minibatch."""
    num_epochs: int = 4
    """Passes over each batch."""
    entropy_coeff: float = 0.0
    """Entropy bonus."""
    num_envs_per_env_runner: int = 4
    """Envs per runner."""
    max_env_runner_restarts: int = 1000
    """Restarts allowed per env runner (RLlib's default)."""

    def __post_init__(self) -> None:
        if not self.lr > 0 or self.train_batch_size_per_learner < 1 or self.num_epochs < 1 or self.minibatch_size < 1:
            raise ValueError("lr must be > 0; batch, minibatch and epochs >= 1")


class GreedyLinear:
    """The trained scorer as a simulator policy: the highest-scoring visible job."""

    def __init__(self, module):
        self.module = module

    def pick(self, sim) -> int:
        import torch

        jobs, mask, visible = observe(sim)
        with torch.inference_mode():
            scores = self.module.score(torch.from_numpy(jobs[: len(visible)])).squeeze(-1).numpy()
        return int(visible[int(np.argmax(scores))])


class LinearAgent(Agent):
    name = "linear"
    summary = "example agent: a linear per-job scorer trained with RLlib's PPO (docs/architecture.md)"
    env_id = ENV_ID
    env_config_class = LinearEnvConfig
    settings_class = LinearSettings
    settings_section = "ppo"
    env_searchable = ("trace", "backfill")

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--backfill", default="none", help="backfilling while the picked job waits (default none)")
        p.add_argument("--sequence-length", type=int, default=128, help="jobs per episode (default 128)")
        p.add_argument("--lr", type=float, default=3e-3, help="learning rate (default 3e-3)")
        p.add_argument("--batch-size", type=int, default=2048, help="env steps per iteration (default 2048)")
        p.add_argument("--train-fraction", type=float, default=1.0,
                       help="train on the first FRACTION of the cleaned trace; validation and evaluation sequences "
                            "come from the rest (default 1: the whole trace; a scenario sets its own)")
        p.add_argument("--validation-share", type=float, default=VALIDATION_SHARE,
                       help="share of the held-out part (its first jobs) the validation sequences come from "
                            f"(default {VALIDATION_SHARE})")

    def configure(self, options: AgentOptions):
        env = LinearEnvConfig(trace=options.trace, cleaning=options.cleaning or "default", backfill=options.backfill,
                              slurm=getattr(options, "slurm", None) or {},
                              sequence_length=options.sequence_length, train_fraction=options.train_fraction,
                              validation_share=options.validation_share)
        settings = LinearSettings(lr=options.lr, train_batch_size_per_learner=options.batch_size,
                                  minibatch_size=min(256, options.batch_size), **runner_options(options))
        return env, settings

    def judge(self, env_config: LinearEnvConfig) -> TraceJudge:
        """Bounded slowdown on windows of the trace, under the env's semantics, next to FCFS and SJF. It trains on the
        first `train_fraction` of the trace and the rest is held out (`held_out=`; by default the whole trace, with no
        held-out part)."""
        return TraceJudge(load=env_config.workload, metric="bsld", baselines=(Baseline("fcfs"), Baseline("sjf")),
                          sequence_length=env_config.sequence_length, sim_config=env_config.sim_config(),
                          held_out=lambda n: held_out_after(training_end(env_config.train_fraction, n), n),
                          validation_share=env_config.validation_share)

    def prepare(self, env_config: LinearEnvConfig, settings, options, log=print) -> Prepared:
        from schedrl.workload.catalog import portable_trace

        workload = env_config.workload()
        if len(workload) < env_config.sequence_length:
            raise ValueError(f"trace {workload.name!r} has {len(workload)} jobs, fewer than the sequence length "
                             f"{env_config.sequence_length}")
        return Prepared(replace(env_config, trace=portable_trace(env_config.trace)), workload.sha256)

    def algorithm_config(self, env_config: LinearEnvConfig, settings: LinearSettings, model: str | None = None):
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec

        from schedrl.agents.linear.module import LinearScorer

        s = settings
        return (with_runners(PPOConfig().environment(env=f"schedrl.envs:{ENV_ID}", env_config=env_config.to_dict()), s)
                .learners(num_learners=0)
                .training(lr=s.lr, train_batch_size_per_learner=s.train_batch_size_per_learner,
                          minibatch_size=s.minibatch_size, num_epochs=s.num_epochs, entropy_coeff=s.entropy_coeff,
                          gamma=1.0, lambda_=0.95, vf_clip_param=float("inf"))
                .rl_module(rl_module_spec=RLModuleSpec(module_class=LinearScorer))
                .debugging(log_level="ERROR", log_sys_usage=False, seed=s.seed))

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return {"lr": ("lr",), "entropy_coeff": ("entropy_coeff",), "seed": ("seed",)}

    def policy_from_module(self, module, env_config: Mapping[str, Any]):
        return GreedyLinear(module)

    def inference_module(self, record, source):
        from schedrl.agents.linear.inference import inference_network

        return inference_network(source)

    def settings_from_dict(self, data):
        return LinearSettings(**dict(data))


__all__ = ["LinearAgent", "LinearSettings"]
