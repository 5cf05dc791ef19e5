"""The `Agent` plumbing every base-rule agent shares: PPO settings, the env and PPO options of `schedrl train`, the
judge, `prepare`, the RLlib config, and loading a trained or exported policy. A specialisation (`InspectorAgent`,
`RLBackfillAgent`) says what its network decides: its env config, settings, options, baselines, RLModule, policy and
ray-free network.

No ray or torch at import: the RLlib pieces are imported inside `algorithm_config` and `module_spec`.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass, replace
from typing import Any, Mapping

from schedrl.agents.base import Agent, Baseline, Prepared, TraceJudge, held_out_after
from schedrl.agents.baserule.config import TUNED_PREFIX, BaseRuleEnvConfig, base_label, make_base
from schedrl.agents.runners import RunnerSettings, runner_options, with_runners
from schedrl.envs.episodes import training_end
from schedrl.scenarios.workload import cleaning_for


@dataclass(frozen=True)
class BaseRuleSettings(RunnerSettings):
    """PPO settings (RLlib's PPO learner); env runners, learner GPUs, seed and restarts come from `RunnerSettings`
    (four envs in the driver by default). A specialisation adds its network's fields and checks (`own_problems`)."""

    label = "base-rule"
    """How the settings error names the agent: `invalid <label> settings: ...`."""

    lr: float = 3e-4
    """Learning rate."""
    train_batch_size_per_learner: int = 2048
    """Env steps (decisions) per iteration."""
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
    num_envs_per_env_runner: int = 4
    """Envs per runner (the other runner settings, seed and restarts: `RunnerSettings`)."""

    def own_problems(self) -> list[str]:
        """What is wrong with the specialisation's own fields (each a `NAME=value must ...` phrase)."""
        return []

    def __post_init__(self) -> None:
        problems = self.own_problems()
        for name in ("lr", "clip_param"):
            if not getattr(self, name) > 0:
                problems.append(f"{name}={getattr(self, name)} must be > 0")
        for name in ("train_batch_size_per_learner", "minibatch_size", "num_epochs", "num_envs_per_env_runner"):
            if getattr(self, name) < 1:
                problems.append(f"{name}={getattr(self, name)} must be >= 1")
        if self.minibatch_size > self.train_batch_size_per_learner:
            problems.append(f"minibatch_size={self.minibatch_size} must be <= train_batch_size_per_learner="
                            f"{self.train_batch_size_per_learner}")
        for name in ("gamma", "lambda_"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name}={getattr(self, name)} must be in [0, 1]")
        if self.entropy_coeff < 0 or self.num_env_runners < 0 or self.num_gpus_per_learner < 0:
            problems.append("entropy_coeff, num_env_runners and num_gpus_per_learner must be >= 0")
        if problems:
            raise ValueError(f"invalid {self.label} settings: " + "; ".join(problems))


def _default(value: float) -> str:
    """A default as the help shows it: 3e-4, 0.001."""
    return f"{value:.0e}".replace("e-0", "e-") if 0 < value < 1e-3 else f"{value:g}"


def _load(path: str):
    """The object `module:name` names (imported on first use: policies and networks import torch)."""
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


class BaseRuleAgent(Agent):
    """An agent whose network decides on top of a base rule's proposal (`schedrl.agents.baserule`). The subclass sets
    the `Agent` attributes and what differs: `called` (its name in prose), `base_help`, `backfill_option`,
    `step_noun`, `other_baselines`, `policy_class` and `network_class` (`module:name`), and the hooks
    `add_decision_arguments`, `add_network_arguments`, `env_options`, `setting_options`, `baseline`, `describe`,
    `rl_module_class`, `model_config` (and `learner_options`)."""

    env_config_class: type[BaseRuleEnvConfig]
    settings_class: type[BaseRuleSettings]
    settings_section = "ppo"
    called: str
    """The agent in prose: `the inspector`, `rl-backfill`."""
    base_help: str
    """`--base`'s help."""
    backfill_option: Mapping[str, Any]
    """`--backfill`'s `add_argument` keywords."""
    step_noun = "decisions"
    """What an env step is, in `--batch-size`'s help."""
    other_baselines: tuple[str, ...]
    """Heuristics shown beside the base."""
    policy_class: str
    network_class: str

    # ---------------------------------------------------------------- configuration
    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        defaults = self.settings_class()
        p.add_argument("--base", default="f1", metavar="HEURISTIC|tuned:FILE", help=self.base_help)
        p.add_argument("--preset", choices=("standard", "rlscheduler"), default="standard",
                       help="simulator semantics (default standard; rlscheduler: SchedGym's)")
        p.add_argument("--metric", default="bsld", help="objective (default bsld)")
        p.add_argument("--backfill", **self.backfill_option)
        p.add_argument("--window", type=int, default=0,
                       help="0: pick-and-wait (default); N: list scheduling from the first N waiting jobs (DRAS's)")
        self.add_decision_arguments(p)
        p.add_argument("--sequence-length", type=int, default=256, help="jobs per training episode (default 256)")
        p.add_argument("--train-fraction", type=float, default=0.7,
                       help="train on the first FRACTION of the cleaned trace (default 0.7)")
        p.add_argument("--validation-share", type=float, default=0.25,
                       help="share of the held-out part the validation sequences come from (default 0.25)")
        p.add_argument("--batch-size", type=int, default=None,
                       help=f"{self.step_noun} per iteration (default {defaults.train_batch_size_per_learner})")
        p.add_argument("--minibatch-size", type=int, default=None,
                       help=f"SGD minibatch (default {defaults.minibatch_size})")
        p.add_argument("--epochs", type=int, default=None,
                       help=f"passes over each batch (default {defaults.num_epochs})")
        p.add_argument("--lr", type=float, default=None, help=f"learning rate (default {_default(defaults.lr)})")
        p.add_argument("--entropy-coeff", type=float, default=None,
                       help=f"entropy bonus (default {_default(defaults.entropy_coeff)})")
        self.add_network_arguments(p)

    def add_decision_arguments(self, p: argparse.ArgumentParser) -> None:
        """The options of what the agent decides (after `--window`)."""

    def add_network_arguments(self, p: argparse.ArgumentParser) -> None:
        """The options of the network and its training (after the PPO ones)."""

    def env_options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The agent's own env config fields from the options."""
        return {}

    def setting_options(self, args: argparse.Namespace, env: BaseRuleEnvConfig) -> dict[str, Any]:
        """The agent's own settings from the options (None: the default), checked against `env`."""
        return {}

    def configure(self, args: argparse.Namespace):
        env = self.env_config_class(trace=args.trace, cleaning=cleaning_for(args.preset, args.cleaning),
                                    preset=args.preset, base=args.base, metric=args.metric, backfill=args.backfill,
                                    slurm=getattr(args, "slurm", None) or {},
                                    window=args.window, sequence_length=args.sequence_length,
                                    train_fraction=args.train_fraction, validation_share=args.validation_share,
                                    **self.env_options(args))
        settings = self.settings_class(**runner_options(args))
        overrides = {"train_batch_size_per_learner": args.batch_size, "minibatch_size": args.minibatch_size,
                     "num_epochs": args.epochs, "lr": args.lr, "entropy_coeff": args.entropy_coeff,
                     **self.setting_options(args, env)}
        overrides = {k: v for k, v in overrides.items() if v is not None}
        if args.batch_size is not None and args.minibatch_size is None:
            overrides["minibatch_size"] = min(settings.minibatch_size, args.batch_size)
        return env, replace(settings, **overrides)

    def settings_from_dict(self, data: Mapping[str, Any]) -> BaseRuleSettings:
        return self.settings_class(**dict(data))

    # ---------------------------------------------------------------- what it is judged on
    def baseline(self, env_config: BaseRuleEnvConfig, name: str, label: str | None = None, make=None) -> Baseline:
        """The heuristic `name` (or a tuned base, with its `label` and `make`) as a baseline of this agent."""
        return Baseline(name, label=label, make=make)

    def baselines(self, env_config: BaseRuleEnvConfig) -> tuple[Baseline, ...]:
        """The base first (a tuned rule under its label), then `other_baselines`."""
        base = env_config.base
        if base.startswith(TUNED_PREFIX):
            first = self.baseline(env_config, "tuned", label=base_label(base), make=lambda: make_base(base))
        else:
            first = self.baseline(env_config, base)
        return (first, *(self.baseline(env_config, name) for name in self.other_baselines if name != base))

    def judge(self, env_config: BaseRuleEnvConfig) -> TraceJudge:
        """The policy under the env's semantics, beside `baselines` on the env's trace; the last 1 - `train_fraction`
        of the trace is held out; validation sequences as long as the evaluation's where the zone holds two."""
        return TraceJudge(load=env_config.workload, metric=env_config.metric, baselines=self.baselines(env_config),
                          sequence_length=env_config.sequence_length, sim_config=env_config.sim_config(),
                          held_out=lambda n: held_out_after(training_end(env_config.train_fraction, n), n),
                          validation_share=env_config.validation_share, long_validation=True)

    def describe(self, env_config: BaseRuleEnvConfig) -> str:
        """`prepare`'s line after `NAME: base BASE, `: the semantics and what the reward is relative to."""
        raise NotImplementedError

    def prepare(self, env_config: BaseRuleEnvConfig, settings, options, log=print) -> Prepared:
        """The normalisation from the training part of the trace; checks the base runs on this trace (a tuned rule
        fitted on another trace is refused)."""
        from schedrl.agents.baserule.observation import Normalisation
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
        log(f"{self.name}: base {base_label(env_config.base)}, {self.describe(env_config)}")
        return Prepared(replace(env_config, trace=portable_trace(env_config.trace), norm=norm), workload.sha256)

    # ---------------------------------------------------------------- RLlib
    def learner_options(self, settings: BaseRuleSettings) -> dict[str, Any]:
        """More `AlgorithmConfig.learners` keywords (the inspector's teacher)."""
        return {}

    def algorithm_config(self, env_config: BaseRuleEnvConfig, settings: BaseRuleSettings, model: str | None = None):
        from ray.rllib.algorithms.ppo import PPOConfig

        s = settings
        config = PPOConfig().environment(env=f"schedrl.envs:{self.env_id}", env_config=env_config.to_dict())
        return (with_runners(config, s)
                .learners(num_learners=0, **self.learner_options(s))
                .training(lr=s.lr, train_batch_size_per_learner=s.train_batch_size_per_learner,
                          minibatch_size=s.minibatch_size, num_epochs=s.num_epochs, entropy_coeff=s.entropy_coeff,
                          gamma=s.gamma, lambda_=s.lambda_, clip_param=s.clip_param, vf_clip_param=float("inf"))
                .rl_module(rl_module_spec=self.module_spec(model or self.models[0], s))
                .debugging(log_level="ERROR", log_sys_usage=False, seed=s.seed))

    def rl_module_class(self):
        """The RLModule class (imports ray)."""
        raise NotImplementedError

    def model_config(self, settings: BaseRuleSettings) -> dict[str, Any]:
        """The RLModule's `model_config`."""
        raise NotImplementedError

    def module_spec(self, model: str, settings: BaseRuleSettings | None = None):
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec

        if model not in self.models:
            raise ValueError(f"unknown model {model!r}; {self.called} has one network: {self.models[0]}")
        return RLModuleSpec(module_class=self.rl_module_class(),
                            model_config=self.model_config(settings or self.settings_class()))

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return {"lr": ("lr",), "entropy_coeff": ("entropy_coeff",), "seed": ("seed",), "num_epochs": ("num_epochs",),
                "train_batch_size_per_learner": ("_train_batch_size_per_learner",),
                "minibatch_size": ("minibatch_size",), "lambda_": ("lambda",), "clip_param": ("clip_param",)}

    # ---------------------------------------------------------------- evaluation
    def policy_from_module(self, module, env_config: Mapping[str, Any]):
        return _load(self.policy_class)(module, env_config)

    def inference_module(self, record, source):
        return _load(self.network_class).inference_network(source)
