"""Learned backfilling behind the `Agent` contract: PPO (RLlib's) on a kernel network that chooses the backfilled job.

No ray or torch at import: the RLlib pieces are imported inside `algorithm_config` and `module_spec`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import Any, Mapping

from schedrl.agents.base import Agent, Baseline, Prepared
from schedrl.agents.rlbackfill import ENV_ID
from schedrl.agents.rlbackfill.config import TUNED_PREFIX, RLBackfillEnvConfig, base_label, make_base
from schedrl.agents.runners import RunnerSettings, runner_options, with_runners
from schedrl.envs.episodes import training_end
from schedrl.scenarios.workload import cleaning_for

OTHER_BASELINES = ("fcfs", "sjf", "f1")
"""Shown beside the base heuristic, each with the same backfilling (first fit)."""


@dataclass(frozen=True)
class RLBackfillSettings(RunnerSettings):
    """PPO settings (RLlib's PPO learner) and the kernel network; env runners, seed and restarts come from
    `RunnerSettings` (four envs in the driver by default)."""

    lr: float = 3e-4
    """Learning rate."""
    train_batch_size_per_learner: int = 2048
    """Env steps (backfill decisions with a choice) per iteration."""
    minibatch_size: int = 256
    """SGD minibatch."""
    num_epochs: int = 4
    """Passes over each batch."""
    gamma: float = 1.0
    """Discount (1: the reward is the whole sequence's)."""
    lambda_: float = 0.95
    """GAE lambda."""
    clip_param: float = 0.2
    """PPO ratio clipping."""
    entropy_coeff: float = 0.005
    """Entropy bonus."""
    hidden: tuple[int, ...] = (32, 16, 8)
    """Widths of the kernel's hidden layers."""
    num_envs_per_env_runner: int = 4
    """Envs per runner."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        problems = []
        for name in ("lr", "clip_param"):
            if not getattr(self, name) > 0:
                problems.append(f"{name}={getattr(self, name)} must be > 0")
        for name in ("train_batch_size_per_learner", "minibatch_size", "num_epochs", "num_envs_per_env_runner"):
            if getattr(self, name) < 1:
                problems.append(f"{name}={getattr(self, name)} must be >= 1")
        if not self.hidden or min(self.hidden) < 1:
            problems.append(f"hidden={list(self.hidden)} must be one or more widths >= 1")
        if self.minibatch_size > self.train_batch_size_per_learner:
            problems.append(f"minibatch_size={self.minibatch_size} must be <= train_batch_size_per_learner="
                            f"{self.train_batch_size_per_learner}")
        for name in ("gamma", "lambda_"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name}={getattr(self, name)} must be in [0, 1]")
        if self.entropy_coeff < 0 or self.num_env_runners < 0 or self.num_gpus_per_learner < 0:
            problems.append("entropy_coeff, num_env_runners and num_gpus_per_learner must be >= 0")
        if problems:
            raise ValueError("invalid rl-backfill settings: " + "; ".join(problems))


def _hidden(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(w) for w in text.split(","))
    except ValueError:
        raise ValueError(f"--hidden takes comma-separated widths such as 32,16,8, got {text!r}") from None


class RLBackfillAgent(Agent):
    """Learned backfilling (RLBackfilling, PMBS'23): choose which EASY candidate starts, over a base heuristic."""

    name = "rl-backfill"
    summary = "learned backfilling (RLBackfilling, PMBS'23): choose which candidate EASY backfills, over F1, PPO"
    env_id = ENV_ID
    env_config_class = RLBackfillEnvConfig
    settings_class = RLBackfillSettings
    models = ("kernel",)
    settings_section = "ppo"
    env_searchable = ("trace", "base", "backfill", "metric", "sequence_length", "skip", "slots")

    # ---------------------------------------------------------------- configuration
    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--base", default="f1", metavar="HEURISTIC|tuned:FILE",
                       help="the heuristic that orders the queue (its blocked job is reserved): fcfs, sjf, f1, ... "
                            "(`schedrl compare --help`) or tuned:FILE (`schedrl tuned fit`); default f1")
        p.add_argument("--preset", choices=("standard", "rlscheduler"), default="standard",
                       help="simulator semantics (default standard; rlscheduler: SchedGym's)")
        p.add_argument("--metric", default="bsld", help="objective (default bsld)")
        p.add_argument("--backfill", default="easy", metavar="easy|rlscheduler",
                       help="the backfilling whose candidates the policy chooses among (default easy)")
        p.add_argument("--window", type=int, default=0,
                       help="0: pick-and-wait (default); N: list scheduling from the first N waiting jobs (DRAS's)")
        p.add_argument("--slots", type=int, default=None, help="candidates seen at once (default 32)")
        p.add_argument("--skip", action="store_true",
                       help="the policy may also start none of the candidates until the next event (default: off, "
                            "some candidate always starts, as under EASY)")
        p.add_argument("--sequence-length", type=int, default=256, help="jobs per training episode (default 256)")
        p.add_argument("--train-fraction", type=float, default=0.7,
                       help="train on the first FRACTION of the cleaned trace (default 0.7)")
        p.add_argument("--validation-share", type=float, default=0.25,
                       help="share of the held-out part the validation sequences come from (default 0.25)")
        p.add_argument("--batch-size", type=int, default=None, help="decisions per iteration (default 2048)")
        p.add_argument("--minibatch-size", type=int, default=None, help="SGD minibatch (default 256)")
        p.add_argument("--epochs", type=int, default=None, help="passes over each batch (default 4)")
        p.add_argument("--lr", type=float, default=None, help="learning rate (default 3e-4)")
        p.add_argument("--entropy-coeff", type=float, default=None, help="entropy bonus (default 0.005)")
        p.add_argument("--hidden", default=None, metavar="W1,W2,...",
                       help="widths of the kernel's hidden layers (default 32,16,8)")

    def configure(self, args: argparse.Namespace):
        env = RLBackfillEnvConfig(trace=args.trace, cleaning=cleaning_for(args.preset, args.cleaning),
                                  preset=args.preset, base=args.base, metric=args.metric, backfill=args.backfill,
                                  window=args.window, skip=bool(args.skip), sequence_length=args.sequence_length,
                                  train_fraction=args.train_fraction, validation_share=args.validation_share,
                                  **({"slots": args.slots} if args.slots is not None else {}))
        settings = RLBackfillSettings(**runner_options(args))
        overrides = {"train_batch_size_per_learner": args.batch_size, "minibatch_size": args.minibatch_size,
                     "num_epochs": args.epochs, "lr": args.lr, "entropy_coeff": args.entropy_coeff,
                     "hidden": _hidden(args.hidden)}
        overrides = {k: v for k, v in overrides.items() if v is not None}
        if args.batch_size is not None and args.minibatch_size is None:
            overrides["minibatch_size"] = min(settings.minibatch_size, args.batch_size)
        return env, replace(settings, **overrides)

    def settings_from_dict(self, data: Mapping[str, Any]) -> RLBackfillSettings:
        return RLBackfillSettings(**dict(data))

    # ---------------------------------------------------------------- what it is judged on
    def baselines(self, env_config: RLBackfillEnvConfig) -> tuple[Baseline, ...]:
        """The base and FCFS, SJF, F1, each with the env's backfilling taken first-fit (EASY's choice)."""
        sim = env_config.base_sim_config()
        suffix = "+" + env_config.backfill.upper()
        base = env_config.base
        if base.startswith(TUNED_PREFIX):
            first = Baseline("tuned", sim=sim, label=base_label(base) + suffix, make=lambda: make_base(base))
        else:
            first = Baseline(base, sim=sim, label=base.upper() + suffix)
        return (first, *(Baseline(name, sim=sim, label=name.upper() + suffix) for name in OTHER_BASELINES
                         if name != base))

    def judge(self, env_config: RLBackfillEnvConfig):
        """The policy under the env's semantics with every backfill a decision; the base and the other heuristics with
        first-fit backfilling; the last 1 - `train_fraction` of the trace held out, validation first."""
        from schedrl.scenarios.judge import TraceJudge
        from schedrl.scenarios.split import held_out_after

        return TraceJudge(load=env_config.workload, metric=env_config.metric, baselines=self.baselines(env_config),
                          sequence_length=env_config.sequence_length, sim_config=env_config.sim_config(),
                          held_out=lambda n: held_out_after(training_end(env_config.train_fraction, n), n),
                          validation_share=env_config.validation_share, long_validation=True)

    def prepare(self, env_config: RLBackfillEnvConfig, settings, options, log=print) -> Prepared:
        """The normalisation from the training part of the trace; checks the base runs on this trace (a tuned rule
        fitted on another trace is refused)."""
        from schedrl.agents.rlbackfill.observation import Normalisation
        from schedrl.sim import Simulator
        from schedrl.workload.catalog import portable_trace
        from schedrl.workload.sampling import sequence

        workload = env_config.workload()
        end = training_end(env_config.train_fraction, len(workload))
        if end < env_config.sequence_length:
            raise ValueError(f"trace {workload.name!r}: the {end} jobs training draws from are fewer than the sequence "
                             f"length {env_config.sequence_length}")
        base = make_base(env_config.base)
        base.pick(Simulator(sequence(workload, 0, 2), env_config.base_sim_config()))  # a tuned rule checks its trace
        norm = dict(env_config.norm) or Normalisation.from_trace(workload[:end]).to_dict()
        sim = env_config.base_sim_config()
        log(f"rl-backfill: base {base_label(env_config.base)}, {sim.discipline}"
            + (f" (window {sim.window})" if sim.window else "") + f", {env_config.backfill} backfilling chosen by the "
            f"policy ({env_config.slots} slots" + (", may start none" if env_config.skip else "") + f"), "
            f"{env_config.metric} relative to {base_label(env_config.base)}+{env_config.backfill.upper()}")
        return Prepared(replace(env_config, trace=portable_trace(env_config.trace), norm=norm), workload.sha256)

    # ---------------------------------------------------------------- RLlib
    def algorithm_config(self, env_config: RLBackfillEnvConfig, settings: RLBackfillSettings, model: str | None = None):
        from ray.rllib.algorithms.ppo import PPOConfig

        s = settings
        return (with_runners(PPOConfig().environment(env=f"schedrl.envs:{ENV_ID}", env_config=env_config.to_dict()), s)
                .learners(num_learners=0)
                .training(lr=s.lr, train_batch_size_per_learner=s.train_batch_size_per_learner,
                          minibatch_size=s.minibatch_size, num_epochs=s.num_epochs, entropy_coeff=s.entropy_coeff,
                          gamma=s.gamma, lambda_=s.lambda_, clip_param=s.clip_param, vf_clip_param=float("inf"))
                .rl_module(rl_module_spec=self.module_spec(model or "kernel", s))
                .debugging(log_level="ERROR", log_sys_usage=False, seed=s.seed))

    def module_spec(self, model: str, settings: RLBackfillSettings | None = None):
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec

        from schedrl.agents.rlbackfill.module import RLBackfillModule

        if model != "kernel":
            raise ValueError(f"unknown model {model!r}; rl-backfill has one network: kernel")
        s = settings or RLBackfillSettings()
        return RLModuleSpec(module_class=RLBackfillModule, model_config={"hidden": list(s.hidden)})

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return {"lr": ("lr",), "entropy_coeff": ("entropy_coeff",), "seed": ("seed",), "num_epochs": ("num_epochs",),
                "train_batch_size_per_learner": ("_train_batch_size_per_learner",),
                "minibatch_size": ("minibatch_size",), "lambda_": ("lambda",), "clip_param": ("clip_param",)}

    # ---------------------------------------------------------------- evaluation
    def policy_from_module(self, module, env_config: Mapping[str, Any]):
        from schedrl.agents.rlbackfill.policy import RLBackfillPolicy

        return RLBackfillPolicy(module, env_config)

    def inference_module(self, record, source):
        from schedrl.agents.rlbackfill.inference import inference_network

        return inference_network(source)


__all__ = ["RLBackfillAgent", "RLBackfillSettings"]
