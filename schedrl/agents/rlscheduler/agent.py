"""RLScheduler behind the `Agent` contract: PPO (Spinning Up's update) on the kernel policy network.

No ray/torch at import: the RLlib pieces are imported inside `algorithm_config` and `load_module`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from typing import Any, Mapping

import numpy as np

from schedrl.agents.base import Agent, AgentOptions, Baseline, Prepared, TraceJudge, held_out_after
from schedrl.agents.rlscheduler import ENV_ID
from schedrl.agents.rlscheduler.config import REWARD_BASELINES, RLSchedulerEnvConfig
from schedrl.agents.rlscheduler.env import load_env_workload, sim_config_for
from schedrl.agents.rlscheduler.observation import JobFeatures
from schedrl.agents.rlscheduler.settings import TARGET_KL_KEY, VF_LR_KEY, WARM_START_KEY, PPOSettings
from schedrl.agents.runners import runner_options
from schedrl.envs.episodes import training_end
from schedrl.scenarios.workload import cleaning_for

BASELINES = ("fcfs", "sjf", "wfp3", "unicep", "f1")
"""RLScheduler Table V's heuristics."""

# checkpoints written before the agents package store their module class under these paths
LEGACY_MODULE_PATHS = {
    "schedrl.models.kernel_policy": "schedrl.agents.rlscheduler.modules.kernel",
    "schedrl.models.flat_policy": "schedrl.agents.rlscheduler.modules.flat",
    "schedrl.models.queue_module": "schedrl.agents.rlscheduler.modules.queue_module",
    "schedrl.models.registry": "schedrl.agents.rlscheduler.modules",
    "schedrl.envs.keys": "schedrl.agents.rlscheduler.keys",
}


class RLSchedulerAgent(Agent):
    """RLScheduler (Zhang et al., SC'20): kernel-based policy, PPO, trajectory filtering."""

    name = "rlscheduler"
    summary = "RLScheduler (SC'20): kernel policy over the job queue, PPO, trajectory filtering"
    env_id = ENV_ID
    env_config_class = RLSchedulerEnvConfig
    settings_class = PPOSettings
    models = ("kernel", "mlp_v1", "mlp_v2", "mlp_v3", "lenet")
    settings_section = "ppo"
    env_searchable = ("trace", "cleaning", "preset", "metric", "backfill", "sequence_length", "train_fraction")

    # ---------------------------------------------------------------- configuration
    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        from schedrl.sim.config import BACKFILLS

        p.add_argument("--preset", choices=("standard", "rlscheduler"), default="standard",
                       help="simulator semantics; rlscheduler reproduces the paper's SchedGym (default: standard)")
        p.add_argument("--metric", default="bsld", help="objective: bsld, wait, turnaround, slowdown, utilization, fairness")
        p.add_argument("--backfill", choices=BACKFILLS, default="none", help="backfilling while the picked job waits")
        p.add_argument("--reward-baseline", choices=REWARD_BASELINES, default="none",
                       help="none: reward = the objective (paper); sjf, f1, ...: relative to that heuristic on the "
                            "same sequence")
        p.add_argument("--dense-reward", action="store_true",
                       help="pay the same episode return as it accrues: after every decision, minus the waiting cost "
                            "since the previous one (bsld, wait, turnaround, slowdown; ours: the paper pays it at the end)")
        p.add_argument("--model", default="kernel", help=f"policy network: {', '.join(self.models)} (default kernel)")
        p.add_argument("--sequence-length", type=int, default=256, help="jobs per training episode (default 256, as in the paper)")
        sized = machine_defaults(os.cpu_count() or 1)  # what this machine gets unless an option is given
        paper = PPOSettings()
        shared = {  # the shared options whose default this agent sizes for the machine: say the real one
            "--num-env-runners": f"env-runner processes (0: sample in the trainer; default {sized['--num-env-runners']} "
                                 "on this machine: one per two cores, at least 1, at most 8)",
            "--envs-per-runner": f"environments per env runner (default {sized['--envs-per-runner']})",
            "--validate-every": "validate at iteration 1 and every K-th only, and checkpoint only there (validation is "
                                f"wall time outside --time-budget; default {sized['--validate-every']})"}
        for action in getattr(p, "_actions", ()):  # an argument group shares its parser's actions
            if action.option_strings and action.option_strings[0] in shared:
                action.help = shared[action.option_strings[0]]
        p.add_argument("--batch-size", type=int, default=None,
                       help=f"env steps per iteration (default {sized['--batch-size']}; the paper used 100 x 256)")
        p.add_argument("--epochs", type=int, default=None,
                       help=f"update passes per iteration (default {sized['--epochs']}; the paper used 80, with KL "
                            "early stopping)")
        p.add_argument("--minibatch-size", type=int, default=None,
                       help=f"SGD minibatch (default {sized['--minibatch-size']}; the paper used the whole batch)")
        p.add_argument("--target-kl", type=float, default=None,
                       help=f"KL early-stopping target (default {paper.target_kl}, as in the paper)")
        p.add_argument("--lr", type=float, default=None, help=f"policy learning rate (default {paper.lr:g}, as in the paper)")
        p.add_argument("--vf-lr", type=float, default=None,
                       help=f"value learning rate (default {paper.vf_lr:g}, as in the paper)")
        p.add_argument("--warm-start", default=None, metavar="HEURISTIC",
                       help="behaviour-clone a heuristic before PPO: auto (the best on the training sequences), none, "
                            "or one of fcfs, sjf, wfp3, unicep, f1, saf, smallest (default auto; the paper had no warm start: none)")
        p.add_argument("--warm-start-episodes", type=int, default=64,
                       help="training sequences the warm-start teacher schedules (default 64)")
        p.add_argument("--warm-start-epochs", type=int, default=16,
                       help="passes over the warm-start demonstrations (default 16)")
        p.add_argument("--warm-start-clones", type=int, default=None, metavar="N",
                       help="with auto: clone the N best heuristics on the training sequences and keep the clone that "
                            "schedules the validation sequences best (default 3; 1: the best heuristic's clone)")
        p.add_argument("--warm-start-smoothing", type=float, default=None, metavar="EPS",
                       help="label smoothing of the warm-start clone: EPS of the target spread over the valid jobs, so "
                            "an exact clone still explores (default 0)")
        p.add_argument("--key-features", default=None, metavar="NAMES",
                       help="comma-separated heuristics whose priority rank among the visible jobs is an extra feature "
                            "column each (ours), e.g. f1,sjf; none for the paper's features")
        p.add_argument("--overlap-sampling", action=argparse.BooleanOptionalAction, default=False,
                       help="env runners sample the next batch while the learner trains on the last one (ours; needs "
                            "--num-env-runners >= 1; one update of staleness; docs/experiments/rlscheduler.md, 'Throughput'); "
                            "default: on wherever there is an env runner")
        p.add_argument("--paper-defaults", action="store_true",
                       help="the paper's PPO configuration (100 x 256-step batches, 80 full-batch epochs, no warm "
                            "start, the whole trace) instead of the defaults sized for this machine: "
                            + " ".join(k if v is True else f"{k} {v}" for k, v in sized.items()))
        p.add_argument("--train-fraction", type=float, default=None,
                       help="train on the first FRACTION of the cleaned trace; validation and evaluation sequences "
                            "come from the rest (default 0.7, a scenario's own with --scenario; the paper used the whole trace for "
                            "both: 1)")
        p.add_argument("--validation-share", type=float, default=0.25,
                       help="share of the held-out part (its first jobs) the validation sequences come from; the "
                            "final evaluation takes the rest (default 0.25)")
        p.add_argument("--no-filtering", action="store_true", help="disable trajectory filtering")
        p.add_argument("--filter-iterations", type=int, default=20,
                       help="phase-1 iterations of trajectory filtering (default 20)")

    def configure(self, options: AgentOptions) -> tuple[RLSchedulerEnvConfig, PPOSettings]:
        options, note = self._with_machine_defaults(options)
        if note:  # said by `schedrl train` once the options are all valid
            options.note(note)
        cleaning = cleaning_for(options.preset, options.cleaning)
        if options.model not in self.models:
            raise ValueError(f"unknown model {options.model!r}; choose one of {', '.join(self.models)}")
        env = RLSchedulerEnvConfig(trace=options.trace, cleaning=cleaning, preset=options.preset,
                                   metric=options.metric, backfill=options.backfill,
                                   slurm=getattr(options, "slurm", None) or {},
                                   sequence_length=options.sequence_length,
                                   reward_baseline=options.reward_baseline, dense_reward=options.dense_reward,
                                   key_features=parse_key_features(options.key_features),
                                   train_fraction=1.0 if options.train_fraction is None else options.train_fraction,
                                   validation_share=getattr(options, "validation_share", 0.25))
        ppo = PPOSettings(**runner_options(options), warm_start=options.warm_start,
                          warm_start_episodes=options.warm_start_episodes,
                          warm_start_epochs=options.warm_start_epochs,
                          warm_start_smoothing=options.warm_start_smoothing or 0.0,
                          overlap_sampling=bool(getattr(options, "overlap_sampling", False)))
        overrides = {"train_batch_size_per_learner": options.batch_size, "num_epochs": options.epochs,
                     "lr": options.lr, "vf_lr": options.vf_lr, "minibatch_size": options.minibatch_size,
                     "target_kl": options.target_kl, "warm_start_clones": options.warm_start_clones}
        return env, replace(ppo, **{k: v for k, v in overrides.items() if v is not None})

    def _with_machine_defaults(self, options: AgentOptions) -> tuple[AgentOptions, str | None]:
        """(`options` with the options neither the command line nor the scenario set (`AgentOptions.chosen`) taken
        from `machine_defaults`, the note that says which), unless `--paper-defaults` asks for the paper's
        configuration (then no note). A scenario's value is never replaced: `train --scenario default` trains on the
        scenario's first 60%, not the machine default's 70%."""
        if getattr(options, "paper_defaults", False):
            return options, None
        defaults = machine_defaults(os.cpu_count() or 1, options.num_gpus_per_learner)
        applied = {flag: value for flag, value in defaults.items()
                   if not options.chosen(flag[2:].replace("-", "_"))
                   and getattr(options, flag[2:].replace("-", "_"), None) != value}
        if "--overlap-sampling" in applied and not applied.get("--num-env-runners", options.num_env_runners):
            del applied["--overlap-sampling"]  # `--num-env-runners 0`: nothing to overlap with
        batch = applied.get("--batch-size", options.batch_size)
        if "--minibatch-size" in applied and batch is not None and batch < applied["--minibatch-size"]:
            applied["--minibatch-size"] = batch  # a small --batch-size given
        sized = options.replace(**{flag[2:].replace("-", "_"): value for flag, value in applied.items()})
        if not applied:
            return sized, None
        return sized, (f"settings for this machine ({os.cpu_count()} cores): "
                       + " ".join(k if v is True else f"{k} {v}" for k, v in applied.items())
                       + " (the paper's configuration: --paper-defaults)")

    def preparation_options(self, options: AgentOptions) -> dict[str, Any]:
        return {"filtering": not options.no_filtering, "filter_phase1_iterations": options.filter_iterations,
                "validate_every": self._with_machine_defaults(options)[0].validate_every}

    def settings_from_dict(self, data: Mapping[str, Any]) -> PPOSettings:
        return PPOSettings(**dict(data))

    # ---------------------------------------------------------------- what it is judged on
    def judge(self, env_config: RLSchedulerEnvConfig) -> TraceJudge:
        """Table V's heuristics on the env's trace and semantics; with `train_fraction` < 1 the rest of the trace is
        held out. Validation sequences are as long as the final evaluation's (`long_validation`):

        Validation chooses the checkpoint that the evaluation then scores, so it is scored on sequences as
        long as the evaluation's: a policy can be at F1's level on 256-job windows and fall far behind on
        1,024-job ones, where a backlog it lets grow compounds. Measured on the default trace
        (docs/experiments/rlscheduler.md, `examples/research/validation_length.py`): among six kept checkpoints, 1,024-job
        validation chose the one best on the evaluation (299.6) in three of three seeded draws, 256-job
        validation in one, and the run's own 256-job sequences chose the worst (628.1; F1 228.3).

        The zone must hold several different windows of that length, or the "sequences" are one window
        seen several times: Lublin-1's validation zone is 750 jobs, and until 2026-11-26 its five validation
        sequences were the same 750 jobs, so the warm start's clone and the checkpoint were chosen on one
        window (three 30-minute seeds then scored 188.54, 574.41 and 1,324.34 on the evaluation; F1 181.59).
        So where the zone is shorter than two evaluation sequences, windows of half the zone (at least the
        training length), whose starts can differ by up to their own length.
        """
        return TraceJudge(load=lambda: load_env_workload(env_config), metric=env_config.metric,
                          baselines=tuple(Baseline(name) for name in BASELINES),
                          sequence_length=env_config.sequence_length, sim_config=sim_config_for(env_config),
                          held_out=lambda n: held_out_after(training_end(env_config.train_fraction, n), n),
                          validation_share=env_config.validation_share, long_validation=True)

    def prepare(self, env_config: RLSchedulerEnvConfig, settings: PPOSettings, options: Mapping[str, Any],
                log=print) -> Prepared:
        """Normalisation constants from the trace; trajectory filtering phase 1 (§IV-C)."""
        from schedrl.agents.rlscheduler.filtering import phase1_episodes
        from schedrl.workload.catalog import portable_trace

        workload = load_env_workload(env_config)
        norm = env_config.norm or JobFeatures.from_trace(workload).to_dict()
        env = replace(env_config, trace=portable_trace(env_config.trace), norm=norm)
        if options.get("filtering", True) and not env.starts:
            iterations = int(options.get("filter_phase1_iterations", 20))
            kept = filter_training_starts(env, workload, iterations, log)
            phase1 = phase1_episodes(iterations, settings.train_batch_size_per_learner, env.sequence_length,
                                     settings.num_env_runners, settings.num_envs_per_env_runner)
            env = replace(env, train_starts=kept, filter_phase1_episodes=phase1, filter_phase1_iterations=iterations)
        return Prepared(env, workload.sha256)

    # ---------------------------------------------------------------- RLlib
    def algorithm_config(self, env_config: RLSchedulerEnvConfig, settings: PPOSettings, model: str | None = None):
        from schedrl.agents.rlscheduler.ppo import build_ppo_config

        return build_ppo_config(settings, ENV_ID, env_config.to_dict(), model or self.models[0], vector_entry_point=True)

    def module_spec(self, model: str):
        from schedrl.agents.rlscheduler.modules import module_spec

        return module_spec(model)

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return PPO_CONFIG_PATHS

    def trial_env_value(self, field: str, prepared: Mapping[str, Any], trial_config: Mapping[str, Any]):
        from schedrl.agents.rlscheduler.filtering import phase1_episodes

        if field != "filter_phase1_episodes" or not prepared.get("filter_phase1_iterations"):
            return prepared[field]
        # phase 1 lasts the same number of iterations whatever batch size and runners a trial has
        return phase1_episodes(int(prepared["filter_phase1_iterations"]), int(trial_config["_train_batch_size_per_learner"]),
                               int(prepared["sequence_length"]), int(trial_config["num_env_runners"]),
                               int(trial_config["num_envs_per_env_runner"]))

    def warm_start(self, algorithm):
        spec = algorithm.config.learner_config_dict.get(WARM_START_KEY) or {}
        if not spec.get("teacher"):
            return None
        from schedrl.agents.rlscheduler.warm_start import warm_start

        # the trial's own seed and discount (a sweep searches them in the algorithm config, not in this dict)
        return warm_start(algorithm, {**spec, "seed": algorithm.config.seed or 0, "gamma": algorithm.config.gamma})

    # ---------------------------------------------------------------- evaluation
    def policy_from_module(self, module, env_config: Mapping[str, Any]):
        from schedrl.agents.rlscheduler.policy import CheckpointPolicy

        return CheckpointPolicy(module, dict(env_config))

    def load_module(self, module_dir, record):
        from ray.rllib.core.rl_module.rl_module import RLModule

        _alias_legacy_modules()
        return RLModule.from_checkpoint(str(module_dir))

    def inference_module(self, record, source):
        from schedrl.agents.rlscheduler.inference import inference_network
        from schedrl.agents.rlscheduler.tree import NETWORK, tree_network

        if isinstance(source, Mapping) and source.get("network") == NETWORK:
            return tree_network(source)
        return inference_network(source)

    # ---------------------------------------------------------------- a rule an admin can read (`Distillable`)
    def distill(self, policy, *, depth, rounds, windows, jobs, seed, log, teacher_depth=0, guard=None, allowed=None,
                target=None, base=None, refit_windows=0):
        """The kernel's scores as a regression tree over one job's features (`distill.py`: DAgger on its training
        zone); `target`: what the leaves predict (score, the default, or rank)."""
        from schedrl.agents.rlscheduler.distill import DEFAULT_TARGET, distill

        for given, option in ((teacher_depth, "--teacher hindsight"), (guard, "--starvation-wait and --reject-where"),
                              (allowed is not None, "--features"), (base is not None, "--base"),
                              (refit_windows, "--refit-windows")):
            if given:
                raise ValueError(f"{option}: an inspector's option; an RLScheduler kernel is distilled from its own "
                                 "scores over all its features")
        return distill(policy, depth, rounds, windows, jobs, seed, log=log, target=target or DEFAULT_TARGET)

    def export_distilled(self, distilled, policy, out_dir, name, command, source):
        from schedrl.agents.rlscheduler.distill import export_tree

        judge = self.judge(self.env_config_class.from_dict(dict(policy.record.env_config)))
        return export_tree(distilled, policy, out_dir, name, command, source, judge)

    def distilled_text(self, exported):
        from schedrl.agents.rlscheduler.distill import tree_card

        return tree_card(exported)


def parse_key_features(text: str | None) -> tuple[str, ...]:
    """`--key-features`: "f1,sjf" -> ("f1", "sjf"); None, "" or "none" -> ()."""
    if text is None or text.strip().lower() in ("", "none"):
        return ()
    return tuple(part for part in (p.strip() for p in text.split(",")) if part)


def machine_defaults(cores: int, gpus: float = 0.0) -> dict[str, int | float | str | bool]:
    """PPO settings that learn within minutes on a machine with `cores` CPU cores.

    The paper's configuration (25,600-step batches, 80 full-batch epochs) spends most of a small
    machine's time in the learner and reaches only a few iterations in ten minutes. Measured on 2
    cores (docs/experiments/rlscheduler.md, "Throughput"): 8,192-step batches, 2 epochs of 512-step minibatches,
    64 vectorised envs in one env-runner process that samples the next batch while the learner trains
    on the last one (`--overlap-sampling`): ~9,000 env steps/s end to end, where 10 epochs of 2,048-step
    minibatches over 16 envs sampled in the trainer gave ~2,600; and, per seed, as good or better
    policies in the README's ten minutes. With more cores, more env runners (one per two cores, at
    most 8); a GPU learner changes nothing here (the kernel network is tiny). A warm start
    (`warm_start.py`: clone the best heuristic, ~20 s) skips the minutes PPO spends learning from random
    weights to schedule like a heuristic. Validation runs every 4th iteration: at ~1 s per iteration,
    validating every one would double the wall time.
    """
    runners = 1 if cores <= 2 else min(cores // 2, 8)
    return {"--batch-size": 8192, "--epochs": 2, "--minibatch-size": 512, "--envs-per-runner": 64,
            "--num-env-runners": runners, "--overlap-sampling": True, "--validate-every": 4,
            "--warm-start": "auto", "--train-fraction": 0.7}


# PPOSettings field -> key path in `AlgorithmConfig.to_dict()`, for the fields a sweep may search;
# tests check every path against `build_ppo_config`
PPO_CONFIG_PATHS: dict[str, tuple[str, ...]] = {
    "gamma": ("gamma",),
    "lambda_": ("lambda",),
    "clip_param": ("clip_param",),
    "lr": ("lr",),
    "vf_lr": ("learner_config_dict", VF_LR_KEY),
    "target_kl": ("learner_config_dict", TARGET_KL_KEY),
    "num_epochs": ("num_epochs",),
    "train_batch_size_per_learner": ("_train_batch_size_per_learner",),
    "minibatch_size": ("minibatch_size",),
    "entropy_coeff": ("entropy_coeff",),
    "vf_clip_param": ("vf_clip_param",),
    "seed": ("seed",),
    "warm_start": ("learner_config_dict", WARM_START_KEY, "teacher"),
}


def filter_training_starts(env: RLSchedulerEnvConfig, workload, phase1_iterations: int, log=lambda text: None) -> tuple[int, ...]:
    """Trajectory filtering phase 1 (RLScheduler §IV-C): the starts whose SJF score lies in the kept band."""
    from schedrl.agents.rlscheduler.filtering import filter_starts

    t0 = time.perf_counter()
    workload = workload[:training_end(env.train_fraction, len(workload))]  # phase 1 draws from the training part only
    n_starts = len(workload) - env.sequence_length + 1
    if n_starts < 1:
        raise ValueError(f"trace {workload.name!r}: the {len(workload)} jobs training draws from are fewer than the "
                         f"sequence length {env.sequence_length}: choose a shorter --sequence-length or a larger "
                         "--train-fraction")
    stride = max(1, n_starts // 4000)
    result = filter_starts(workload, env.sequence_length, sim_config_for(env), env.metric, stride)
    log(f"trajectory filtering: SJF scored {int(np.sum(~np.isnan(result.scores)))} sequences in "
        f"{time.perf_counter() - t0:.1f} s; phase 1 keeps {len(result.kept)} with {env.metric} in "
        f"({result.low:.2f}, {result.high:.2f}) for {phase1_iterations} iterations")
    return tuple(int(s) for s in result.kept)


def _alias_legacy_modules() -> None:
    """Make the module paths of pre-agents checkpoints import the classes' current homes."""
    import importlib

    for old, new in LEGACY_MODULE_PATHS.items():
        if old not in sys.modules:
            sys.modules[old] = importlib.import_module(new)
