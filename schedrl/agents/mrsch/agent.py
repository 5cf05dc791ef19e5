"""MRSch and its scalar-reward RL baseline behind the `Agent` contract.

`mrsch`: DFP (a custom RLlib Algorithm, `dfp.py`) with the dynamic goal vector. `mrsch-scalar`: PPO
on the same env and state with the reward 0.5·U_node + 0.5·U_BB (MRSch §IV-D's policy-gradient
baseline). No ray/torch at import: the RLlib pieces are imported inside the methods that need them.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any, Mapping

from schedrl.agents.base import Agent, AgentOptions, Baseline, Prepared, TraceJudge
from schedrl.agents.mrsch import ENV_ID
from schedrl.agents.mrsch.config import TRAIN_FRACTION, MRSchEnvConfig
from schedrl.agents.mrsch.settings import DFPSettings, ScalarSettings
from schedrl.agents.runners import runner_options

# MRSch §IV-D compares with multi-resource FCFS (+EASY), the GA optimisation and the scalar RL agent;
# the GA is a policy object of this package (`ga_policy`), not a named heuristic
BASELINES = ("fcfs",)
# MRSch §IV-A: train on the earlier part of the trace, test on the rest (`config.TRAIN_FRACTION`)


def ga_policy(env_config=None):
    """The GA optimisation baseline (§IV-D) as a simulator policy."""
    from schedrl.agents.mrsch.ga import GAPolicy

    return GAPolicy()


class _MRSchBase(Agent):
    env_id = ENV_ID
    env_config_class = MRSchEnvConfig
    env_searchable = ("trace", "augment", "augment_seed", "window", "offset_weights", "fit_first", "queue_weight",
                      "sequence_length", "curriculum")

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        from schedrl.workload.augment import MRSCH_PRESETS

        p.add_argument("--augment", default="S4", help=f"MRSch workload preset: {', '.join(MRSCH_PRESETS)} or none (default S4)")
        p.add_argument("--augment-seed", type=int, default=0, help="seed of the augmentation draws (default 0)")
        p.add_argument("--window", type=int, default=10, help="jobs the agent picks from (default 10, as in the paper)")
        p.add_argument("--sequence-length", type=int, default=256, help="jobs per training episode (default 256)")
        p.add_argument("--train-fraction", type=float, default=TRAIN_FRACTION,
                       help="training starts come from this first share of the trace (default 0.7)")
        p.add_argument("--curriculum", default="real", metavar="KIND[:N],...",
                       help="training jobsets in order: sampled, real, synthetic with N episodes per env, "
                            "e.g. sampled:200,real:200,synthetic (default: real)")
        p.add_argument("--fit-first", action="store_true",
                       help="ours, not MRSch's: while a window job fits every resource now, only such jobs can be "
                            "picked; a job that does not fit is reserved only when none fits (default: any job)")
        p.add_argument("--lr", type=float, default=None, help="learning rate")

    def _env_config(self, options: AgentOptions, **extra) -> MRSchEnvConfig:
        return MRSchEnvConfig(trace=options.trace, cleaning=getattr(options, "cleaning", None) or "default",
                              augment=options.augment, augment_seed=options.augment_seed, window=options.window,
                              sequence_length=options.sequence_length, train_fraction=options.train_fraction,
                              curriculum=getattr(options, "curriculum", "real"),
                              fit_first=bool(getattr(options, "fit_first", False)), **extra)

    @staticmethod
    def _shared_settings(options: AgentOptions) -> dict[str, Any]:
        out = {**runner_options(options), "env_runner_resources": options.runner_resources or {}}
        if getattr(options, "lr", None) is not None:
            out["lr"] = options.lr
        return out

    def judge(self, env_config: MRSchEnvConfig) -> TraceJudge:
        """The (augmented) trace after its first `train_fraction`, under MRSch's semantics, the list heuristics and
        the GA (§IV-D); average wait, which MRSch §V reports first (Fig. 6a), then slowdown and utilisation."""
        from schedrl.agents.mrsch.env import sim_config_for
        from schedrl.agents.mrsch.workload import load_workload

        return TraceJudge(load=lambda: load_workload(env_config), metric="wait",
                          baselines=(*(Baseline(name) for name in BASELINES),
                                     Baseline("ga", label="GA", make=lambda: ga_policy(env_config))),
                          sequence_length=env_config.sequence_length, sim_config=sim_config_for(env_config),
                          held_out=lambda n: (int(env_config.train_fraction * n), n))

    def prepare(self, env_config: MRSchEnvConfig, settings, options: Mapping[str, Any], log=print) -> Prepared:
        """Normalisation constants from the training part of the (augmented) trace."""
        from schedrl.agents.mrsch.observation import StateNorm
        from schedrl.agents.mrsch.workload import prepare_workload
        from schedrl.workload.catalog import load_trace, portable_trace
        from schedrl.workload.cleaning import CleaningRules

        raw = load_trace(env_config.trace, CleaningRules.preset(env_config.cleaning))
        workload, notes = prepare_workload(raw, env_config.augment, env_config.augment_seed)
        for note in notes:
            log(f"{workload.name}: {note}")
        train = workload[: max(1, int(env_config.train_fraction * len(workload)))]
        norm = env_config.norm or StateNorm.from_trace(train).to_dict()
        return Prepared(replace(env_config, trace=portable_trace(env_config.trace), norm=norm), raw.sha256)

    def settings_from_dict(self, data: Mapping[str, Any]):
        data = dict(data)
        for key in ("hiddens",):
            if key in data:
                data[key] = tuple(data[key])
        return self.settings_class(**data)

    def inference_module(self, record, source):
        from schedrl.agents.mrsch.inference import inference_network

        return inference_network(source)


class MRSchAgent(_MRSchBase):
    """MRSch (Li et al.): Direct Future Prediction with a dynamic goal vector over node/BB/power use."""

    name = "mrsch"
    summary = "MRSch: multi-resource scheduling by Direct Future Prediction with a dynamic goal vector"
    settings_class = DFPSettings
    models = ("small", "paper")
    settings_section = "dfp"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        super().add_arguments(p)
        p.add_argument("--model", default="small", help="DFP network: small or paper (4000-1000-512)")
        p.add_argument("--offset-weights", default=None,
                       help="comma-separated weights of the offsets 1,2,4,8,16,32 (default 0,0,0,.5,.5,1)")
        p.add_argument("--queue-goal", type=float, default=0.0, metavar="W",
                       help="ours, not MRSch's: also measure the waiting queue and weigh it -W in the goal, so "
                            "picks that grow the queue score lower (default 0: the paper's measurements)")
        p.add_argument("--queue-scale", type=float, default=100.0, metavar="JOBS",
                       help="waiting jobs at which the queue measurement q/(q+JOBS) is 0.5 (default 100)")

    def configure(self, options: AgentOptions) -> tuple[MRSchEnvConfig, DFPSettings]:
        if getattr(options, "model", "small") not in self.models:
            raise ValueError(f"unknown model {options.model!r}; choose one of {', '.join(self.models)}")
        extra = {}
        if getattr(options, "offset_weights", None):
            extra["offset_weights"] = tuple(float(w) for w in str(options.offset_weights).split(","))
        if getattr(options, "queue_goal", 0.0):
            extra.update(queue_weight=float(options.queue_goal), queue_scale=float(options.queue_scale))
        return self._env_config(options, **extra), DFPSettings(**self._shared_settings(options))

    def algorithm_config(self, env_config: MRSchEnvConfig, settings: DFPSettings, model: str | None = None):
        from schedrl.agents.mrsch.dfp import build_dfp_config

        return build_dfp_config(settings, ENV_ID, env_config.to_dict(), model or self.models[0])

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return {"lr": ("lr",), "minibatch_size": ("dfp_minibatch_size",),
                "updates_per_iteration": ("updates_per_iteration",), "seed": ("seed",)}

    def episodes_drawn(self, algorithm_config, iteration: int) -> int:
        # every env of every runner plays `episodes_per_iteration` whole episodes per iteration (at least)
        return iteration * int(algorithm_config.episodes_per_iteration)

    def policy_from_module(self, module, env_config: Mapping[str, Any]):
        from schedrl.agents.mrsch.policy import DFPPolicy

        return DFPPolicy(module, dict(env_config))


class MRSchScalarAgent(_MRSchBase):
    """MRSch's scalar-reward RL baseline (§IV-D): PPO with reward 0.5·U_node + 0.5·U_BB, same state."""

    name = "mrsch-scalar"
    summary = "MRSch's scalar-reward baseline: PPO on the MRSch state, reward 0.5 U_node + 0.5 U_BB"
    settings_class = ScalarSettings
    models = ("mlp",)
    settings_section = "ppo"

    def configure(self, options: AgentOptions) -> tuple[MRSchEnvConfig, ScalarSettings]:
        return self._env_config(options, reward="utilization"), ScalarSettings(**self._shared_settings(options))

    def algorithm_config(self, env_config: MRSchEnvConfig, settings: ScalarSettings, model: str | None = None):
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec

        from schedrl.agents.mrsch.modules import ScalarPolicyModule
        from schedrl.agents.runners import with_runners

        if env_config.reward != "utilization":
            env_config = replace(env_config, reward="utilization")
        config = (PPOConfig()
                  .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
                  .environment(env=f"schedrl.envs:{ENV_ID}", env_config=env_config.to_dict()))
        return (
            with_runners(config, settings)
            .training(lr=settings.lr, gamma=settings.gamma, lambda_=settings.lambda_,
                      train_batch_size_per_learner=settings.train_batch_size, minibatch_size=settings.minibatch_size,
                      num_epochs=settings.num_epochs, clip_param=settings.clip_param,
                      entropy_coeff=settings.entropy_coeff, use_kl_loss=False)
            .rl_module(rl_module_spec=RLModuleSpec(module_class=ScalarPolicyModule,
                                                   model_config={"hiddens": tuple(settings.hiddens)}))
            .debugging(seed=settings.seed, log_level="ERROR")
        )

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return {"lr": ("lr",), "gamma": ("gamma",), "entropy_coeff": ("entropy_coeff",), "seed": ("seed",)}

    def policy_from_module(self, module, env_config: Mapping[str, Any]):
        from schedrl.agents.mrsch.policy import LogitPolicy

        return LogitPolicy(module, dict(env_config))
