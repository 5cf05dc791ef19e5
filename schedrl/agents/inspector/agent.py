"""The inspector behind the `Agent` contract: PPO (RLlib's) on an accept/reject MLP over a base heuristic.

No ray or torch at import: the RLlib pieces are imported inside `algorithm_config`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import Any, Mapping

from schedrl.agents.base import Agent, Baseline, Prepared, TraceJudge, held_out_after
from schedrl.agents.inspector import ENV_ID
from schedrl.agents.inspector.config import InspectorEnvConfig, TUNED_PREFIX, base_label, make_base
from schedrl.agents.runners import RunnerSettings, runner_options, with_runners
from schedrl.duration import parse_duration_or_off
from schedrl.envs.episodes import training_end
from schedrl.scenarios.workload import cleaning_for

TEACHER_KEY = "teacher"
"""`learner_config_dict` key of the teacher's settings (`InspectorSettings.teacher_spec`)."""
STARVATION_WAIT = "24h"
"""`schedrl train inspector`'s starvation guard (`--starvation-wait`): DRAS's 24 h. Without it a policy trained on
bounded slowdown learned to hold back long jobs (Lublin-1, seed 1: bsld 23.5 vs F1's 219, at twice F1's longest wait
and 44% utilisation against 76%; docs/agents/inspector.md)."""


def starvation_wait(value: str | float) -> float:
    """`--starvation-wait`'s value in seconds: a duration (`24h`, `90m`), or `0` / `off` for no guard."""
    return parse_duration_or_off(value, "--starvation-wait")


def scenarios_option(value: str | None) -> tuple[str, ...] | None:
    """`--teacher-scenarios NAME,NAME`: the names, each once (ValueError naming the option)."""
    if value is None:
        return None
    names = tuple(n.strip() for n in value.split(","))
    if not all(names):
        raise ValueError(f"--teacher-scenarios must be comma-separated scenario names, got {value!r}")
    if len(set(names)) < len(names):
        raise ValueError(f"--teacher-scenarios names a scenario twice: {value!r}")
    return names


def threshold_option(value: str | None) -> float | str | None:
    """`--teacher-threshold`: `auto` or a number >= 0 (ValueError naming the option)."""
    if value is None or value == "auto":
        return value
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"--teacher-threshold must be a number >= 0 or auto, got {value!r}") from None
    if not number >= 0:
        raise ValueError(f"--teacher-threshold must be a number >= 0 or auto, got {value!r}")
    return number


OTHER_BASELINES = ("fcfs", "sjf", "wfp3", "unicep", "f1")
"""Shown beside the base heuristic: RLScheduler Table V's heuristics (SchedInspector's bases)."""


@dataclass(frozen=True)
class InspectorSettings(RunnerSettings):
    """PPO settings of the inspector (RLlib's PPO learner) and its network; env runners, learner GPUs, seed and
    restarts come from `RunnerSettings` (four envs in the driver by default)."""

    lr: float = 3e-4
    """Learning rate."""
    train_batch_size_per_learner: int = 4096
    """Env steps (inspections) per iteration: about 14 sequences of 256 jobs."""
    minibatch_size: int = 512
    """SGD minibatch."""
    num_epochs: int = 4
    """Passes over each batch."""
    gamma: float = 1.0
    """Discount (1: the reward is the whole sequence's)."""
    lambda_: float = 0.95
    """GAE lambda."""
    clip_param: float = 0.2
    """PPO ratio clipping."""
    entropy_coeff: float = 0.001
    """Entropy bonus."""
    hidden: int = 64
    """Units per hidden layer of the policy and value MLPs (two layers each)."""
    initial_reject: float = 0.05
    """Probability with which the untrained policy rejects (`module.InspectorModule`)."""
    num_envs_per_env_runner: int = 4
    """Envs per runner (the other runner settings, seed and restarts: `RunnerSettings`)."""
    teacher: str | None = None
    """`hindsight`: DAgger of the hindsight teacher before PPO (`teacher.py`); None: PPO from the biased start."""
    teacher_depth: int = 1
    """Rejections in a row the teacher tries at a decision (`schedrl hindsight --depth`)."""
    teacher_rounds: int = 4
    """DAgger rounds after the teacher's own round."""
    teacher_windows: int = 16
    """Training windows labelled per round."""
    teacher_epochs: int = 30
    """Passes over everything gathered at each fit."""
    teacher_time: float | None = None
    """Seconds after which no further round starts (None: all rounds)."""
    teacher_weights: str = "balanced"
    """How labels weigh in the fit (`teacher.WEIGHTINGS`): balanced, gap or plain."""
    teacher_floor: float = 1e-3
    """Added to every label's weight (relative value gap) under balanced and gap."""
    teacher_threshold: float | str = 0.0
    """Subtracted from the fitted reject logit (a greedy student rejects only where reject's logit exceeds accept's by
    this); `auto`: chosen on training windows so the student keeps the no-starvation constraint (`teacher.py`)."""
    teacher_threshold_windows: int = 4
    """Training windows of 1,024 jobs `auto` scores each threshold on."""
    teacher_scenarios: tuple[str, ...] = ()
    """Lever 2: trace scenarios whose training zones the teacher also draws windows from (`teacher.sources`)."""
    teacher_wait_penalty: float = 0.0
    """Lever 4: the teacher's objective adds this times the mean wait past the starvation guard's bound (in units of
    it); 0: the metric alone."""

    def teacher_spec(self) -> dict[str, Any] | None:
        """What the warm start (`teacher.warm_start`) needs; None without a teacher."""
        if self.teacher is None:
            return None
        return {"teacher": self.teacher, "depth": self.teacher_depth, "rounds": self.teacher_rounds,
                "windows": self.teacher_windows, "epochs": self.teacher_epochs, "seconds": self.teacher_time,
                "wait_penalty": self.teacher_wait_penalty, "weights": self.teacher_weights,
                "floor": self.teacher_floor, "threshold": self.teacher_threshold,
                "threshold_windows": self.teacher_threshold_windows, "seed": self.seed or 0,
                "scenarios": list(self.teacher_scenarios)}

    def __post_init__(self) -> None:
        problems = []
        if self.teacher is not None:
            for name in ("teacher_depth", "teacher_windows", "teacher_epochs", "teacher_threshold_windows"):
                if getattr(self, name) < 1:
                    problems.append(f"{name}={getattr(self, name)} must be >= 1")
            from schedrl.agents.inspector.teacher import WEIGHTINGS

            if self.teacher_threshold != "auto" and not (isinstance(self.teacher_threshold, (int, float))
                                                         and self.teacher_threshold >= 0):
                problems.append(f"teacher_threshold={self.teacher_threshold!r} must be a number >= 0 or auto")
            if self.teacher_weights not in WEIGHTINGS:
                problems.append(f"teacher_weights={self.teacher_weights!r} must be one of {', '.join(WEIGHTINGS)}")
            if self.teacher_rounds < 0 or self.teacher_wait_penalty < 0 or self.teacher_floor < 0 or (
                    self.teacher_time is not None and not self.teacher_time > 0):
                problems.append("teacher_rounds, teacher_wait_penalty and teacher_floor must be >= 0, teacher_time > 0")
        for name in ("lr", "clip_param"):
            if not getattr(self, name) > 0:
                problems.append(f"{name}={getattr(self, name)} must be > 0")
        for name in ("train_batch_size_per_learner", "minibatch_size", "num_epochs", "hidden",
                     "num_envs_per_env_runner"):
            if getattr(self, name) < 1:
                problems.append(f"{name}={getattr(self, name)} must be >= 1")
        if self.minibatch_size > self.train_batch_size_per_learner:
            problems.append(f"minibatch_size={self.minibatch_size} must be <= train_batch_size_per_learner="
                            f"{self.train_batch_size_per_learner}")
        for name in ("gamma", "lambda_"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name}={getattr(self, name)} must be in [0, 1]")
        if not 0.0 < self.initial_reject < 1.0:
            problems.append(f"initial_reject={self.initial_reject} must be in (0, 1)")
        if self.entropy_coeff < 0 or self.num_env_runners < 0 or self.num_gpus_per_learner < 0:
            problems.append("entropy_coeff, num_env_runners and num_gpus_per_learner must be >= 0")
        if problems:
            raise ValueError("invalid inspector settings: " + "; ".join(problems))


def baselines(env_config: InspectorEnvConfig) -> tuple[Baseline, ...]:
    """The base heuristic first (a tuned rule under its label), then Table V's heuristics."""
    base = env_config.base
    if base.startswith(TUNED_PREFIX):
        first = Baseline("tuned", label=base_label(base), make=lambda: make_base(base))
    else:
        first = Baseline(base)
    return (first, *(Baseline(name) for name in OTHER_BASELINES if name != base))


class InspectorAgent(Agent):
    """SchedInspector (Zhang, Dai, Xie, HPDC'22): accept or reject the base heuristic's proposal."""

    name = "inspector"
    summary = "SchedInspector (HPDC'22): accept or reject a base heuristic's proposed job (F1 by default), PPO"
    env_id = ENV_ID
    env_config_class = InspectorEnvConfig
    settings_class = InspectorSettings
    models = ("mlp",)
    settings_section = "ppo"
    env_searchable = ("trace", "base", "backfill", "metric", "sequence_length", "starvation_wait")

    # ---------------------------------------------------------------- configuration
    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        from schedrl.sim.config import BACKFILLS

        p.add_argument("--base", default="f1", metavar="HEURISTIC|tuned:FILE",
                       help="the heuristic whose proposals are inspected: fcfs, sjf, wfp3, unicep, f1, ... "
                            "(`schedrl compare --help`) or tuned:FILE (`schedrl tuned fit`); default f1")
        p.add_argument("--preset", choices=("standard", "rlscheduler"), default="standard",
                       help="simulator semantics (default standard; rlscheduler: SchedGym's)")
        p.add_argument("--metric", default="bsld", help="objective (default bsld)")
        p.add_argument("--backfill", choices=BACKFILLS, default="none",
                       help="backfilling while an accepted job waits to fit; a rejection starts nothing, backfilled "
                            "or not, until the next event (default none)")
        p.add_argument("--window", type=int, default=0,
                       help="0: pick-and-wait (default); N: list scheduling from the first N waiting jobs (DRAS's)")
        p.add_argument("--starvation-wait", default=STARVATION_WAIT, metavar="DURATION",
                       help="starvation guard: a proposal that has waited this long is always accepted (e.g. 12h, "
                            "90m; 0: off; default 24h, as DRAS's guard)")
        p.add_argument("--history-features", action="store_true",
                       help="also observe the recent arrivals (time since the last, counts in the last 10 min and "
                            "hour, the last 32's requests): 27 features instead of 21")
        p.add_argument("--sequence-length", type=int, default=256, help="jobs per training episode (default 256)")
        p.add_argument("--train-fraction", type=float, default=0.7,
                       help="train on the first FRACTION of the cleaned trace (default 0.7)")
        p.add_argument("--validation-share", type=float, default=0.25,
                       help="share of the held-out part the validation sequences come from (default 0.25)")
        p.add_argument("--batch-size", type=int, default=None, help="inspections per iteration (default 4096)")
        p.add_argument("--minibatch-size", type=int, default=None, help="SGD minibatch (default 512)")
        p.add_argument("--epochs", type=int, default=None, help="passes over each batch (default 4)")
        p.add_argument("--lr", type=float, default=None, help="learning rate (default 3e-4)")
        p.add_argument("--entropy-coeff", type=float, default=None, help="entropy bonus (default 0.001)")
        p.add_argument("--hidden", type=int, default=None, help="units per hidden layer (default 64)")
        p.add_argument("--initial-reject", type=float, default=None,
                       help="rejection probability of the untrained policy (default 0.05)")
        p.add_argument("--teacher", default=None, metavar="hindsight",
                       help="imitate a teacher before PPO: hindsight (DAgger of the perfect-knowledge inspector on "
                            "training windows; its time counts in --time-budget)")
        p.add_argument("--teacher-depth", type=int, default=None,
                       help="rejections in a row the hindsight teacher tries at a decision (default 1)")
        p.add_argument("--teacher-rounds", type=int, default=None,
                       help="DAgger rounds after the teacher's own (default 4)")
        p.add_argument("--teacher-windows", type=int, default=None,
                       help="training windows labelled per round (default 16)")
        p.add_argument("--teacher-epochs", type=int, default=None,
                       help="passes over the labelled decisions at each fit (default 30)")
        p.add_argument("--teacher-time", default=None, metavar="DURATION",
                       help="start no further DAgger round after this long (e.g. 8m; default: all rounds)")
        p.add_argument("--teacher-weights", default=None, choices=("balanced", "gap", "plain"),
                       help="how the labels weigh: balanced (value gaps, the two labels equal in all; default), gap "
                            "(value gaps alone), plain (1 each)")
        p.add_argument("--teacher-floor", type=float, default=None,
                       help="added to each label's weight under balanced and gap (default 0.001)")
        p.add_argument("--teacher-threshold", default=None, metavar="T|auto",
                       help="subtract T from the fitted reject logit; auto: the T (0..4) that keeps the longest wait "
                            "within 1.25x and utilisation within 1 point of the base on training windows (default 0)")
        p.add_argument("--teacher-threshold-windows", type=int, default=None,
                       help="training windows of 1,024 jobs --teacher-threshold auto scores each threshold on "
                            "(default 4)")
        p.add_argument("--teacher-scenarios", default=None, metavar="NAME,NAME",
                       help="also label windows of these trace scenarios' training zones, each under its own "
                            "semantics (learn the rule, not the trace); the same metric and decision as the run")
        p.add_argument("--teacher-wait-penalty", type=float, default=None,
                       help="add this times the mean wait past --starvation-wait (in units of it) to the teacher's "
                            "objective (default 0)")

    def configure(self, args: argparse.Namespace):
        env = InspectorEnvConfig(trace=args.trace, cleaning=cleaning_for(args.preset, args.cleaning),
                                 preset=args.preset, base=args.base, metric=args.metric, backfill=args.backfill,
                                 window=args.window, sequence_length=args.sequence_length,
                                 history_features=bool(getattr(args, "history_features", False)),
                                 starvation_wait=starvation_wait(getattr(args, "starvation_wait", STARVATION_WAIT)),
                                 train_fraction=args.train_fraction, validation_share=args.validation_share)
        settings = InspectorSettings(**runner_options(args))
        overrides = {"train_batch_size_per_learner": args.batch_size, "minibatch_size": args.minibatch_size,
                     "num_epochs": args.epochs, "lr": args.lr, "entropy_coeff": args.entropy_coeff,
                     "hidden": args.hidden, "initial_reject": args.initial_reject}
        teacher = getattr(args, "teacher", None)
        depth = getattr(args, "teacher_depth", None)
        teacher_options = {"teacher_depth": depth, "teacher_rounds": getattr(args, "teacher_rounds", None),
                           "teacher_windows": getattr(args, "teacher_windows", None),
                           "teacher_epochs": getattr(args, "teacher_epochs", None),
                           "teacher_wait_penalty": getattr(args, "teacher_wait_penalty", None),
                           "teacher_weights": getattr(args, "teacher_weights", None),
                           "teacher_floor": getattr(args, "teacher_floor", None),
                           "teacher_threshold": threshold_option(getattr(args, "teacher_threshold", None)),
                           "teacher_threshold_windows": getattr(args, "teacher_threshold_windows", None),
                           "teacher_scenarios": scenarios_option(getattr(args, "teacher_scenarios", None))}
        given = [k for k, v in teacher_options.items() if v is not None]
        if teacher is None and (given or getattr(args, "teacher_time", None) is not None):
            raise ValueError(f"--{(given or ['teacher_time'])[0].replace('_', '-')} is an option of --teacher")
        from schedrl.agents.inspector.teacher import check_teacher

        check_teacher(teacher, env.base, env.sim_config(), 1 if depth is None else depth)
        if teacher_options["teacher_scenarios"]:
            from schedrl.agents.inspector.teacher import check_scenarios

            for scenario in check_scenarios(teacher_options["teacher_scenarios"], env.sim_config(), env.metric,
                                            env.sequence_length):
                if scenario.workload.trace == env.trace:
                    raise ValueError(f"--teacher-scenarios: {scenario.name} is on {env.trace}, the run's own trace "
                                     "(its windows are labelled already)")
        overrides.update(teacher_options, teacher=teacher)
        if getattr(args, "teacher_time", None) is not None:
            from schedrl.duration import parse_duration

            overrides["teacher_time"] = parse_duration(args.teacher_time, "--teacher-time")
        overrides = {k: v for k, v in overrides.items() if v is not None}
        if args.batch_size is not None and args.minibatch_size is None:
            overrides["minibatch_size"] = min(settings.minibatch_size, args.batch_size)
        return env, replace(settings, **overrides)

    def settings_from_dict(self, data: Mapping[str, Any]) -> InspectorSettings:
        return InspectorSettings(**dict(data))

    # ---------------------------------------------------------------- what it is judged on
    def judge(self, env_config: InspectorEnvConfig) -> TraceJudge:
        """The base heuristic and Table V's heuristics on the env's trace and semantics; the last 1 - `train_fraction`
        of the trace is held out; validation sequences as long as the evaluation's where the zone holds two."""
        return TraceJudge(load=env_config.workload, metric=env_config.metric, baselines=baselines(env_config),
                          sequence_length=env_config.sequence_length, sim_config=env_config.sim_config(),
                          held_out=lambda n: held_out_after(training_end(env_config.train_fraction, n), n),
                          validation_share=env_config.validation_share, long_validation=True)

    def prepare(self, env_config: InspectorEnvConfig, settings, options, log=print) -> Prepared:
        """The normalisation from the training part of the trace; checks the base runs on this trace (a tuned rule
        fitted on another trace is refused)."""
        from schedrl.agents.inspector.observation import Normalisation
        from schedrl.sim import Simulator
        from schedrl.workload.catalog import portable_trace
        from schedrl.workload.sampling import sequence

        workload = env_config.workload()
        end = training_end(env_config.train_fraction, len(workload))
        if end < env_config.sequence_length:
            raise ValueError(f"trace {workload.name!r}: the {end} jobs training draws from are fewer than the sequence "
                             f"length {env_config.sequence_length}")
        base = make_base(env_config.base)
        base.pick(Simulator(sequence(workload, 0, 2), env_config.sim_config()))  # a tuned rule checks its trace here
        norm = dict(env_config.norm) or Normalisation.from_trace(workload[:end]).to_dict()
        log(f"inspector: base {base_label(env_config.base)}, {env_config.sim_config().discipline}, backfill "
            f"{env_config.backfill}, {env_config.metric} relative to the base on each sequence")
        return Prepared(replace(env_config, trace=portable_trace(env_config.trace), norm=norm), workload.sha256)

    # ---------------------------------------------------------------- RLlib
    def algorithm_config(self, env_config: InspectorEnvConfig, settings: InspectorSettings, model: str | None = None):
        from ray.rllib.algorithms.ppo import PPOConfig

        s = settings
        return (with_runners(PPOConfig().environment(env=f"schedrl.envs:{ENV_ID}", env_config=env_config.to_dict()), s)
                .learners(num_learners=0, learner_config_dict={TEACHER_KEY: s.teacher_spec()})
                .training(lr=s.lr, train_batch_size_per_learner=s.train_batch_size_per_learner,
                          minibatch_size=s.minibatch_size, num_epochs=s.num_epochs, entropy_coeff=s.entropy_coeff,
                          gamma=s.gamma, lambda_=s.lambda_, clip_param=s.clip_param, vf_clip_param=float("inf"))
                .rl_module(rl_module_spec=self.module_spec(model or "mlp", s))
                .debugging(log_level="ERROR", log_sys_usage=False, seed=s.seed))

    def module_spec(self, model: str, settings: InspectorSettings | None = None):
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec

        from schedrl.agents.inspector.module import InspectorModule

        if model != "mlp":
            raise ValueError(f"unknown model {model!r}; the inspector has one network: mlp")
        s = settings or InspectorSettings()
        return RLModuleSpec(module_class=InspectorModule,
                            model_config={"hidden": s.hidden, "initial_reject": s.initial_reject})

    def warm_start(self, algorithm):
        """DAgger of the hindsight teacher (`teacher.py`) when the settings ask for it (the `WarmStart` capability)."""
        spec = (algorithm.config.learner_config_dict or {}).get(TEACHER_KEY)
        if not spec:
            return None
        from schedrl.agents.inspector.teacher import warm_start

        return warm_start(algorithm, {**spec, "seed": algorithm.config.seed or 0})

    def searchable(self) -> Mapping[str, tuple[str, ...]]:
        return {"lr": ("lr",), "entropy_coeff": ("entropy_coeff",), "seed": ("seed",), "num_epochs": ("num_epochs",),
                "train_batch_size_per_learner": ("_train_batch_size_per_learner",),
                "minibatch_size": ("minibatch_size",), "lambda_": ("lambda",), "clip_param": ("clip_param",)}

    # ---------------------------------------------------------------- evaluation
    def policy_from_module(self, module, env_config: Mapping[str, Any]):
        from schedrl.agents.inspector.policy import InspectorPolicy

        return InspectorPolicy(module, env_config)

    def inference_module(self, record, source):
        from schedrl.agents.inspector.inference import inference_network

        return inference_network(source)


__all__ = ["InspectorAgent", "InspectorSettings"]
