"""`schedrl train`'s options -> the one-trial `SweepSpec` the driver runs (`driver.train`).

The command line parses its options and resolves `--scenario` into a `Scenario` once; everything a run's options
then decide lives here: the checks of the shared options, the scenario's option values laid under the explicit ones
before the agent reads them (`Agent.configure`), one check that the agent trains on what the scenario says
(`Scenario.check_trains`), the validation and final evaluation on the scenario's fixed sequences
(`Scenario.final_evaluation`, as a sweep file's `scenario:`), the CPUs of the training process, and what `--resume`
reads back from a run's `sweep.json`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Callable

from schedrl.duration import parse_duration
from schedrl.scenarios.protocol import RunProtocol
from schedrl.training.sweep import SWEEP_FILE, EvaluateSpec, ResourceSpec, StopSpec, SweepSpec, TrainingOptions, single_run

DEFAULT_TIME_BUDGET = "30m"
"""Stop criterion when none is given: what beat the heuristics on Lublin-1 on 2 cores (docs/experiments/rlscheduler.md)."""

SCENARIO_SEQUENCES = {"eval_sequences": "sequences", "eval_jobs": "jobs"}
"""`schedrl train` options that redraw a scenario's evaluation sequences -> `Scenario.overridden`'s keywords."""


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether option `dest` was given on the command line (`args.explicit`, set by `schedrl.cli.main`)."""
    return dest in getattr(args, "explicit", ())


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


def with_scenario(args: argparse.Namespace, scenario) -> None:
    """Lay the option values `scenario` gives the agent (`Scenario.agent_options`) under the options the command line
    gave (`args.explicit`): what `Agent.configure` then reads."""
    scenario.check_agent(args.agent)
    for dest, value in scenario.agent_options(args.agent).items():
        if hasattr(args, dest) and not given(args, dest):
            setattr(args, dest, value)


def train_spec(args: argparse.Namespace, scenario=None, eval_starts: list[int] | None = None,
               log: Callable[[str], None] = lambda line: None) -> SweepSpec:
    """The one-trial `SweepSpec` of `schedrl train`'s parsed options (ValueError on a bad value).

    `scenario`: the `Scenario` `--scenario` resolved to (with the explicit options that override its parts), or
    None; `eval_starts`: `--eval-starts` parsed. Sets `args.runner_resources` and, where the training process's
    CPUs were not given, `args.auto_trial_cpus`."""
    from schedrl.agents import get_agent

    agent = get_agent(args.agent)
    check_options(args)
    args.runner_resources = parse_runner_resources(args.runner_resource)
    if scenario is not None:
        with_scenario(args, scenario)
        log(f"scenario {scenario.name} (definition {scenario.sha256()[:12]}): {scenario.training_summary()}")
    env, settings = agent.configure(args)
    RunProtocol.checked(agent.name, agent.judge(env), scenario)  # the agent trains on what the scenario says
    budget = parse_duration(args.time_budget, "--time-budget")
    if args.iterations is None and budget is None:
        budget = parse_duration(DEFAULT_TIME_BUDGET, "--time-budget")
    # validation on the scenario's fixed sequences (the same for every seed) unless the command line sets its own
    from_scenario = scenario is not None and not (given(args, "validation_sequences") or given(args, "validation_jobs"))
    options = {"validation_sequences": args.validation_sequences, "checkpoint_every": args.checkpoint_every,
               "validation_jobs": getattr(args, "validation_jobs", None),
               "validate_every": args.validate_every,
               "keep_checkpoints": args.keep_checkpoints or None,
               "validation_from_scenario": from_scenario,
               **agent.preparation_options(args)}
    evaluate = EvaluateSpec(sequences=args.eval_sequences, jobs=args.eval_jobs, starts=tuple(eval_starts or ()))
    if scenario is not None:  # the final table on its fixed evaluation sequences, as a sweep file's `scenario:`
        own = {name for name, dest in (("sequences", "eval_sequences"), ("starts", "eval_starts")) if given(args, dest)}
        evaluate = replace(evaluate, **scenario.final_evaluation(own))
    trial_cpus = getattr(args, "trial_cpus", None)
    if trial_cpus is None:
        trial_cpus = args.auto_trial_cpus = default_trial_cpus(args.num_env_runners)
    spec = single_run(args.agent, env, settings, getattr(args, "model", None),
                      StopSpec(iterations=args.iterations, time_budget=budget), TrainingOptions(**options), evaluate,
                      resources=ResourceSpec(cpus_for_main_process=float(trial_cpus)))
    return replace(spec, scenario=scenario)


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


def recorded_run(out: str | Path) -> tuple[list[str] | None, int]:
    """What `--resume` continues with: the `schedrl train` arguments the run in `out` was started with (None where
    it was started from Python) and the CPUs its training process had. ValueError where `out` holds no run."""
    record = Path(out).expanduser() / SWEEP_FILE
    if not record.is_file():
        raise ValueError(f"nothing to resume in {out}: no {SWEEP_FILE} (was the run started there?)")
    data = json.loads(record.read_text())
    cpus = int(data.get("spec", {}).get("resources", {}).get("cpus_for_main_process", 1))
    return data.get("train_args"), cpus
