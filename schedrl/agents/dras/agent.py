"""DRAS-PG, DRAS-DQL and the Decima-PG baseline behind the `Agent` contract.

No ray/torch at import: the RLlib pieces are imported inside `algorithm_config` and `policy_from_module`.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any, ClassVar, Mapping

from schedrl.agents.base import Agent, AgentOptions, Baseline, Prepared, TraceJudge, held_out_after
from schedrl.agents.dras import ENV_ID
from schedrl.agents.dras.config import DRASEnvConfig, REWARDS
from schedrl.agents.dras.decisions import sim_config_for
from schedrl.agents.dras.env import load_env_workload, training_range
from schedrl.agents.dras.keys import METRIC
from schedrl.agents.dras.observation import StateScales
from schedrl.agents.dras.settings import DQLSettings, PGSettings
from schedrl.agents.runners import runner_options
from schedrl.duration import parse_duration
from schedrl.sim.config import SimConfig

# settings field -> key path in `AlgorithmConfig.to_dict()` (sweeps)
PG_CONFIG_PATHS: dict[str, tuple[str, ...]] = {
    "lr": ("lr",), "gamma": ("gamma",), "train_batch_size_per_learner": ("_train_batch_size_per_learner",),
    "decisions_per_update": ("minibatch_size",), "seed": ("seed",),
}
DQL_CONFIG_PATHS: dict[str, tuple[str, ...]] = {
    "lr": ("lr",), "gamma": ("gamma",), "train_batch_size_per_learner": ("_train_batch_size_per_learner",),
    "target_network_update_freq": ("target_network_update_freq",), "seed": ("seed",),
}


def dras_baselines(window: int) -> tuple[Baseline, ...]:
    """DRAS §IV-A's heuristics on a window of W jobs (FCFS with EASY; the others start jobs only at once),
    and SJF and F1 with EASY for reference."""
    easy = SimConfig(discipline="list", window=window, backfill="easy")
    immediate = SimConfig(discipline="list", window=window, backfill="none")
    return (
        Baseline("fcfs", easy, "FCFS+EASY"),
        Baseline("binpacking", immediate, "BinPacking"),
        Baseline("random", immediate, "Random"),
        Baseline("optimization", immediate, "Optimization"),
        Baseline("sjf", easy, "SJF+EASY"),
        Baseline("f1", easy, "F1+EASY"),
    )


class _DRASFamily(Agent):
    """What DRAS-PG, DRAS-DQL and Decima-PG share: the env, its data and its baselines."""

    env_id = ENV_ID
    env_config_class = DRASEnvConfig
    models = ("scaled", "theta", "cori")
    env_searchable = ("trace", "cleaning", "window", "reward", "w1", "w2", "w3", "sequence_length", "curriculum")
    two_level: ClassVar[bool] = True

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--window", type=int, default=10, help="W, jobs visible to the agent (default 10; the paper used 50 on Theta)")
        p.add_argument("--reward", choices=REWARDS, default="capability", help="Eq. (1) capability or Eq. (2) capacity")
        p.add_argument("--weights", default=None, metavar="W1,W2,W3", help="Eq. (1) weights (default 1/3 each)")
        p.add_argument("--priority-fraction", type=float, default=None,
                       help="without a priority column: high priority when size >= this share of the machine")
        p.add_argument("--starvation-wait", default=None, metavar="DURATION",
                       help="ours, not the paper's: pick the oldest job for the agent once it has waited this long "
                            "(e.g. 24h; it starts or is reserved, as under FCFS+EASY); default off")
        p.add_argument("--sequence-length", type=int, default=512, help="jobs per training episode (default 512)")
        p.add_argument("--train-fraction", type=float, default=1.0,
                       help="train on the first fraction of the cleaned trace (e.g. 0.7)")
        p.add_argument("--curriculum", default="real", metavar="KIND[:N],...",
                       help="training jobsets in order (§III-D): sampled, real, synthetic with N episodes per env, "
                            "e.g. sampled:200,real:200,synthetic (default: real)")
        p.add_argument("--model", default="scaled", help=f"network: {', '.join(self.models)} (default scaled)")
        p.add_argument("--lr", type=float, default=None, help="Adam learning rate (default 1e-3, as in the paper)")

    def _env_config(self, options: AgentOptions) -> DRASEnvConfig:
        weights = {}
        if options.weights:
            parts = [float(x) for x in str(options.weights).split(",")]
            if len(parts) != 3:
                raise ValueError(f"--weights takes three numbers w1,w2,w3; got {options.weights!r}")
            weights = dict(zip(("w1", "w2", "w3"), parts))
        extra = {} if options.priority_fraction is None else {"priority_fraction": options.priority_fraction}
        if getattr(options, "starvation_wait", None) is not None:
            if not self.two_level:
                raise ValueError(f"--starvation-wait needs DRAS's reservation level; {self.name} has none")
            extra["starvation_wait"] = parse_duration(options.starvation_wait, "--starvation-wait")
        return DRASEnvConfig(trace=options.trace, cleaning=options.cleaning or "default", window=options.window,
                             reward=options.reward, sequence_length=options.sequence_length,
                             train_fraction=options.train_fraction, two_level=self.two_level,
                             curriculum=getattr(options, "curriculum", "real"), **weights, **extra)

    def _runner_fields(self, options: AgentOptions) -> dict[str, Any]:
        if options.model not in self.models:
            raise ValueError(f"unknown model {options.model!r}; choose one of {', '.join(self.models)}")
        fields = dict(runner_options(options), model=options.model)
        if getattr(options, "lr", None) is not None:
            fields["lr"] = options.lr
        return fields

    def judge(self, env_config: DRASEnvConfig) -> TraceJudge:
        """The trace after the training part (DRAS trains on its first 70%), under DRAS's semantics (window, EASY
        or the two-level backfill), its baselines (each under its paper's semantics), average wait."""
        return TraceJudge(load=lambda: load_env_workload(env_config), metric=METRIC,
                          baselines=dras_baselines(env_config.window), sequence_length=env_config.sequence_length,
                          sim_config=sim_config_for(env_config),
                          held_out=lambda n: held_out_after(training_range(env_config, n)[1], n))

    def prepare(self, env_config: DRASEnvConfig, settings, options: Mapping[str, Any], log=print) -> Prepared:
        """Normalisation constants from the training part of the trace; the trace recorded portably."""
        from schedrl.workload.catalog import portable_trace

        workload = load_env_workload(env_config)
        first, end = training_range(env_config, len(workload))
        if end - first < env_config.sequence_length:
            raise ValueError(f"trace {workload.name!r} has {end - first} training jobs, fewer than the sequence "
                             f"length {env_config.sequence_length}: lower --sequence-length or raise --train-fraction")
        if env_config.window > env_config.sequence_length:
            raise ValueError(f"window {env_config.window} is larger than a sequence ({env_config.sequence_length} jobs)")
        norm = env_config.norm or StateScales.from_trace(workload[first:end]).to_dict()
        env = replace(env_config, trace=portable_trace(env_config.trace), norm=norm, two_level=self.two_level)
        log(f"{self.name}: W={env.window}, N={workload.max_procs}, training jobs [{first}, {end}), norm {norm}")
        return Prepared(env, workload.sha256)

    def policy_from_module(self, module, env_config: Mapping[str, Any]):
        from schedrl.agents.dras.policy import DRASPolicy

        return DRASPolicy(module, dict(env_config), name=self.name.upper())

    def inference_module(self, record, source):
        from schedrl.agents.dras.inference import inference_network

        return inference_network(source)

    def _env(self, env_config: DRASEnvConfig) -> dict:
        return replace(env_config, two_level=self.two_level).to_dict()

    def online_metrics(self, policy, checkpoint, env_config, workload, ids, length: int, seed: int = 0,
                       progress=None) -> list:
        """The network keeps learning while it schedules `ids` in order (`online.py`): REINFORCE with the run's
        baseline for the PG agents, DQN's rule at the run's epsilon floor for DRAS-DQL."""
        from schedrl.agents.dras.online import OnlineDQLSettings, OnlineSettings, checkpoint_baseline, online_schedules
        from schedrl.metrics import summarize

        if self.settings_section == "dql":
            settings, baseline = OnlineDQLSettings.from_run(policy.record.settings, seed=seed), None
        else:
            settings = OnlineSettings.from_run(policy.record.settings, seed=seed)
            baseline = checkpoint_baseline(checkpoint)
        schedules, _ = online_schedules(policy.module, env_config, workload, ids, length, settings, baseline,
                                        progress=progress)
        return [summarize(s) for s in schedules]


class DRASPGAgent(_DRASFamily):
    """DRAS-PG: the two-level network trained by REINFORCE with DRAS's baseline."""

    name = "dras-pg"
    summary = "DRAS-PG (Fan et al.): two-level pick/reserve + backfill policy, REINFORCE with baseline"
    settings_class = PGSettings
    settings_section = "pg"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        super().add_arguments(p)
        p.add_argument("--batch-size", type=int, default=None, help="decisions sampled per iteration (default 1000)")
        p.add_argument("--decisions-per-update", type=int, default=None, help="decisions per gradient step (default 100)")

    def configure(self, options: AgentOptions) -> tuple[DRASEnvConfig, PGSettings]:
        fields = self._runner_fields(options)
        for flag, field in (("batch_size", "train_batch_size_per_learner"), ("decisions_per_update", "decisions_per_update")):
            if getattr(options, flag, None) is not None:
                fields[field] = getattr(options, flag)
        return self._env_config(options), PGSettings(**fields)

    def algorithm_config(self, env_config: DRASEnvConfig, settings: PGSettings, model: str | None = None):
        from schedrl.agents.dras.env import DRASEnv
        from schedrl.agents.dras.learner import build_pg_config

        settings = replace(settings, model=model) if model else settings
        return build_pg_config(settings, DRASEnv, self._env(env_config))

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return PG_CONFIG_PATHS


class DecimaPGAgent(DRASPGAgent):
    """Decima-PG (DRAS §IV-A): the same PG without the two levels (flat picks that start at once)."""

    name = "decima-pg"
    summary = "Decima-PG (DRAS baseline): DRAS-PG's network and learner, one flat level, no reservation/backfill"
    two_level = False


class DRASDQLAgent(_DRASFamily):
    """DRAS-DQL: the per-job Q network trained by RLlib's DQN, epsilon 1.0 decaying x0.995."""

    name = "dras-dql"
    summary = "DRAS-DQL (Fan et al.): two-level per-job Q network, DQN with replay and target network"
    settings_class = DQLSettings
    settings_section = "dql"

    def configure(self, options: AgentOptions) -> tuple[DRASEnvConfig, DQLSettings]:
        return self._env_config(options), DQLSettings(**self._runner_fields(options))

    def algorithm_config(self, env_config: DRASEnvConfig, settings: DQLSettings, model: str | None = None):
        from schedrl.agents.dras.env import DRASEnv
        from schedrl.agents.dras.learner import build_dql_config

        settings = replace(settings, model=model) if model else settings
        return build_dql_config(settings, DRASEnv, self._env(env_config))

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return DQL_CONFIG_PATHS

    def episodes_drawn(self, algorithm_config, iteration: int) -> int:
        c = algorithm_config
        length = int(c.env_config.get("sequence_length", 512))
        per_iter = max(1, int(c.min_sample_timesteps_per_iteration) // max(1, length))
        n_envs = max(1, int(c.num_env_runners)) * int(c.num_envs_per_env_runner)
        return -(-iteration * per_iter // n_envs)
