"""`schedrl train`'s options -> the one-trial `SweepSpec` the driver runs (`driver.train`), and what to say first.

The command line parses its options and resolves `--scenario` into a `Scenario` once; everything a run's options
then decide lives here: the checks of the shared options, the options the agent is configured with (`AgentOptions`,
built once: the explicit ones over the scenario's over the defaults; the parsed namespace is never changed), one
check that the agent trains on what the scenario says (`Scenario.check_trains`), the validation and final evaluation
on the scenario's fixed sequences (`Scenario.final_evaluation`, as a sweep file's `scenario:`), the CPUs of the
training process, and what `--resume` reads back from a run's `sweep.json`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from schedrl.agents.base import AgentOptions
from schedrl.duration import parse_duration
from schedrl.scenarios.protocol import RunProtocol
from schedrl.training.sweep import SWEEP_FILE, EvaluateSpec, ResourceSpec, StopSpec, SweepSpec, TrainingOptions, single_run

DEFAULT_TIME_BUDGET = "30m"
"""Stop criterion when none is given: what beat the heuristics on Lublin-1 on 2 cores (docs/experiments/rlscheduler.md)."""

SCENARIO_SEQUENCES = {"eval_sequences": "sequences", "eval_jobs": "jobs"}
"""`schedrl train` options that redraw a scenario's evaluation sequences -> `Scenario.overridden`'s keywords."""


def parse_runner_resources(items: list[str]) -> dict[str, float] | None:
    """`["worker_node=0.5", "ssd=1"]` -> `{"worker_node": 0.5, "ssd": 1.0}`; None when empty (ValueError on a bad
    item)."""
    resources = {}
    for item in items:
        name, sep, amount = item.partition("=")
        try:
            value = float(amount) if sep and name.strip() else None
        except ValueError:
            value = None
        if value is None:
            raise ValueError(f"--runner-resource must look like NAME=AMOUNT (e.g. worker_node=0.5); got {item!r}")
        resources[name.strip()] = value
    return resources or None


def check_options(args: argparse.Namespace) -> None:
    """ValueError on a shared option out of range."""
    if args.iterations is not None and args.iterations < 1:
        raise ValueError(f"--iterations must be >= 1, got {args.iterations}")
    for flag in ("eval_sequences", "eval_jobs", "checkpoint_every", "envs_per_runner", "validate_every"):
        if getattr(args, flag) < 1:
            raise ValueError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.num_env_runners < 0 or args.validation_sequences < 0:
        raise ValueError("--num-env-runners and --validation-sequences must be >= 0")
    if getattr(args, "trial_cpus", None) is not None and args.trial_cpus < 1:
        raise ValueError(f"--trial-cpus must be >= 1, got {args.trial_cpus}")
    if args.keep_checkpoints < 0:
        raise ValueError(f"--keep-checkpoints must be >= 0 (0 keeps all), got {args.keep_checkpoints}")
    if getattr(args, "validation_jobs", None) is not None and args.validation_jobs < 1:
        raise ValueError(f"--validation-jobs must be >= 1, got {args.validation_jobs}")


def agent_options(args: argparse.Namespace, scenario=None) -> AgentOptions:
    """The options `schedrl train`'s agent is configured with: `args` (its parsed options; `args.explicit` the ones the
    command line gave) with `--runner-resource` parsed into `runner_resources`, and the option values `scenario` gives
    the agent (`Scenario.agent_options`) in place of the defaults of the options not given. ValueError on a bad
    `--runner-resource`, or a scenario that is not for the agent."""
    values = {**vars(args), "runner_resources": parse_runner_resources(args.runner_resource)}
    if scenario is None:
        return AgentOptions.of(argparse.Namespace(**values))
    scenario.check_agent(args.agent)
    return AgentOptions.of(argparse.Namespace(**values), scenario.agent_options(args.agent))


@dataclass(frozen=True)
class TrainPlan:
    """What `schedrl train` runs (`spec`) and says before it starts (`notes`)."""

    spec: SweepSpec
    options: AgentOptions
    """The options the agent was configured with (its notes: what it chose for this machine, a warm start to come)."""
    auto_trial_cpus: int | None = None
    """The training process's CPUs where `--trial-cpus` did not say (`default_trial_cpus`)."""

    @property
    def notes(self) -> tuple[str, ...]:
        """The lines `schedrl train` prints once every option is valid: the agent's, then the CPUs it chose."""
        cpus = () if self.auto_trial_cpus is None else (
            f"the training process reserves {self.auto_trial_cpus} CPU(s) (its learner's torch threads; --trial-cpus "
            "N to change, e.g. 1 each for two runs side by side)",)
        return (*self.options.notes, *cpus)


def train_plan(args: argparse.Namespace, scenario=None, eval_starts: list[int] | None = None,
               log: Callable[[str], None] = lambda line: None) -> TrainPlan:
    """The one-trial `SweepSpec` of `schedrl train`'s parsed options (ValueError on a bad value), with what to say
    before training.

    `scenario`: the `Scenario` `--scenario` resolved to (with the explicit options that override its parts), or
    None; `eval_starts`: `--eval-starts` parsed. `args` is read, never changed."""
    from schedrl.agents import get_agent

    agent = get_agent(args.agent)
    check_options(args)
    options = agent_options(args, scenario)
    if scenario is not None:
        log(f"scenario {scenario.name} (definition {scenario.sha256()[:12]}): {scenario.training_summary()}")
    env, settings = agent.configure(options)
    RunProtocol.checked(agent.name, agent.judge(env), scenario)  # the agent trains on what the scenario says
    budget = parse_duration(options.time_budget, "--time-budget")
    iterations = options.iterations
    only = getattr(settings, "only_iterations", None)  # e.g. the inspector's --no-ppo: its one iteration
    if only is not None:
        if iterations is not None and iterations != only:
            raise ValueError(f"--iterations {iterations}: this run trains nothing after its warm start (--no-ppo) "
                             f"and stops after {only}")
        iterations = only
    if iterations is None and budget is None:
        budget = parse_duration(DEFAULT_TIME_BUDGET, "--time-budget")
    # validation on the scenario's fixed sequences (the same for every seed) unless the command line sets its own
    from_scenario = scenario is not None and not (options.given("validation_sequences")
                                                  or options.given("validation_jobs"))
    training = {"validation_sequences": options.validation_sequences, "checkpoint_every": options.checkpoint_every,
                "validation_jobs": getattr(options, "validation_jobs", None),
                "validate_every": options.validate_every,
                "keep_checkpoints": options.keep_checkpoints or None,
                "validation_from_scenario": from_scenario,
                **agent.preparation_options(options)}
    evaluate = EvaluateSpec(sequences=options.eval_sequences, jobs=options.eval_jobs,
                            starts=tuple(eval_starts or ()))
    if scenario is not None:  # the final table on its fixed evaluation sequences, as a sweep file's `scenario:`
        own = {name for name, dest in (("sequences", "eval_sequences"), ("starts", "eval_starts"))
               if options.given(dest)}
        evaluate = replace(evaluate, **scenario.final_evaluation(own))
    trial_cpus, auto = getattr(options, "trial_cpus", None), None
    if trial_cpus is None:  # the env runners the agent settled on (its machine defaults included) leave the rest
        trial_cpus = auto = default_trial_cpus(settings.num_env_runners)
    spec = single_run(args.agent, env, settings, getattr(options, "model", None),
                      StopSpec(iterations=iterations, time_budget=budget), TrainingOptions(**training),
                      evaluate, resources=ResourceSpec(cpus_for_main_process=float(trial_cpus)))
    return TrainPlan(replace(spec, scenario=scenario), options, auto)


def default_trial_cpus(num_env_runners: int) -> int:
    """CPUs for the training process of a `schedrl train` run that does not say (`--trial-cpus`).

    Ray gives a process with N CPUs `OMP_NUM_THREADS=N`, so this is also the learner's torch threads. On a
    Ray instance of the run's own (no `RAY_ADDRESS`) the run has the machine to itself: every core the env
    runners (one CPU each) leave, at least 1, and no more than an already running Ray instance has (tests
    share one). Measured on 2 cores (`benchmarks/bench_scaling.py`, 8,192-step batches, 10 epochs of
    2,048, 16 envs in the trainer): 1 CPU 1,937 env steps/s, 2 CPUs 2,637. Under `RAY_ADDRESS` (`ray job
    submit`, a cluster) the trial may land on any node: 1, as before.
    """
    import os

    if os.environ.get("RAY_ADDRESS"):
        return 1
    cores = os.cpu_count() or 1
    import ray

    if ray.is_initialized():
        cores = min(cores, int(ray.cluster_resources().get("CPU", 1)))
    return max(1, cores - num_env_runners)


def recorded_run(out: str | Path) -> tuple[list[str] | None, int, str | None]:
    """What `--resume` continues with: the `schedrl train` arguments the run in `out` was started with (None where
    it was started from Python), the CPUs its training process had, and the directory it was started in (None in
    records written before it was kept), which its arguments' relative paths are relative to. ValueError where `out`
    holds no run."""
    record = Path(out).expanduser() / SWEEP_FILE
    if not record.is_file():
        raise ValueError(f"nothing to resume in {out}: no {SWEEP_FILE} (was the run started there?)")
    data = json.loads(record.read_text())
    cpus = int(data.get("spec", {}).get("resources", {}).get("cpus_for_main_process", 1))
    return data.get("train_args"), cpus, data.get("cwd")
