"""`schedrl train AGENT`: one agent trained as a one-trial Ray Tune run (the sweep driver, one trial).

The shared options (trace, stop, seed, env runners, evaluation, output) are defined here; each agent
adds its own (`Agent.add_arguments`). `schedrl train AGENT --help` lists both.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from schedrl.cli.options import parse_starts
from schedrl.outputs import add_force
from schedrl.scenarios.workload import CLEANING_PRESETS
from schedrl.duration import parse_duration

DEFAULT_TIME_BUDGET = "30m"
"""Stop criterion when none is given: what beat the heuristics on Lublin-1 on 2 cores (docs/experiments/rlscheduler.md)."""


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    from schedrl.agents import AGENTS, get_agent

    p = subparsers.add_parser(name, help=help_text, description=help_text)
    agents = p.add_subparsers(dest="agent", metavar="AGENT", required=True)
    for agent_name in AGENTS:
        agent = get_agent(agent_name)
        sub = agents.add_parser(agent_name, help=agent.summary, description=f"train {agent.summary}")
        add_common_arguments(sub)
        agent.add_arguments(sub.add_argument_group(f"{agent_name} options"))
        sub.set_defaults(run=run)
    return p


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """The options every agent takes, with their defaults (an agent that sizes one for the machine, as RLScheduler
    does, says so in that option's help from its `add_arguments`)."""
    p.add_argument("--scenario", metavar="NAME|FILE", default=None,
                   help="a named scenario (`schedrl scenarios list`) or a scenario YAML file: its trace, cleaning, "
                        "semantics, metric, split and the agent's options for it; the final table is on its fixed "
                        "evaluation sequences, and the run record stores it with its hash. Precedence: options given "
                        "here, then --scenario, then the defaults")
    p.add_argument("--trace", default="default", metavar="NAME|PATH", help="catalog name or SWF file (default: the embedded trace)")
    p.add_argument("--cleaning", choices=CLEANING_PRESETS, default=None,
                   help="cleaning preset (default: default; rlscheduler with --preset rlscheduler)")
    p.add_argument("--iterations", type=int, default=None, help="stop after N iterations")
    p.add_argument("--time-budget", default=None, metavar="DURATION",
                   help=f"stop after this much training time, e.g. 20m (default: {DEFAULT_TIME_BUDGET} "
                        "when --iterations is not given either)")
    p.add_argument("--num-env-runners", type=int, default=0,
                   help="env-runner processes (0: sample in the trainer; default 0)")
    p.add_argument("--envs-per-runner", type=int, default=4, help="environments per env runner (default 4)")
    p.add_argument("--runner-resource", action="append", default=[], metavar="NAME=AMOUNT",
                   help="custom Ray resource each env runner requires, placing runners on nodes started with "
                        "--resources '{\"NAME\": ...}' (repeatable)")
    p.add_argument("--num-gpus-per-learner", type=float, default=0.0, help="GPUs for the learner (default 0)")
    p.add_argument("--trial-cpus", type=int, default=None, metavar="N",
                   help="CPUs the training process reserves: its learner's torch threads, and sampling when "
                        "--num-env-runners is 0 (default: on a Ray instance of its own, the cores the env runners "
                        "leave; under RAY_ADDRESS, 1). Two runs side by side on one machine: give each --trial-cpus 1")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--validation-sequences", type=int, default=5,
                   help="sequences the greedy policy is scored on every iteration (default 5, seeded by --seed; "
                        "with --scenario and neither this nor --validation-jobs: the scenario's fixed validation "
                        "sequences, the same for every seed)")
    p.add_argument("--validation-jobs", type=int, default=None, metavar="N",
                   help="jobs per validation sequence (default: the agent's choice; RLScheduler: --eval-jobs, "
                        "capped by the validation zone; the others: the training episode's length)")
    p.add_argument("--validate-every", type=int, default=1, metavar="K",
                   help="validate at iteration 1 and every K-th only, and checkpoint only there (validation is "
                        "wall time outside --time-budget; default 1)")
    p.add_argument("--eval-starts", metavar="I,J,...", help="fixed held-out evaluation starts for the final table")
    p.add_argument("--eval-sequences", type=int, default=10, help="random evaluation sequences (default 10)")
    p.add_argument("--eval-jobs", type=int, default=1024, help="jobs per evaluation sequence (default 1024)")
    p.add_argument("--checkpoint-every", type=int, default=1, help="checkpoint frequency in iterations (default 1)")
    p.add_argument("--keep-checkpoints", type=int, default=5,
                   help="checkpoints kept: the best by validation, plus the latest (default 5; 0 keeps all)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (results, checkpoints, plots)")
    p.add_argument("--resume", action="store_true",
                   help="continue the interrupted run in --out with the options it was started with")
    add_force(p, "--out's files")


def parse_runner_resources(items: list[str]) -> dict[str, float] | None:
    """`["worker_node=0.5", "ssd=1"]` -> `{"worker_node": 0.5, "ssd": 1.0}`; None when empty."""
    from schedrl.cli.main import UsageError

    resources = {}
    for item in items:
        name, sep, amount = item.partition("=")
        try:
            value = float(amount) if sep and name.strip() else None
        except ValueError:
            value = None
        if value is None:
            raise UsageError(f"--runner-resource must look like NAME=AMOUNT (e.g. worker_node=0.5); got {item!r}")
        resources[name.strip()] = value
    return resources or None


def build_spec(args: argparse.Namespace):
    """The one-trial `SweepSpec` of the options (ValueError on a bad value)."""
    from schedrl.agents import get_agent
    from schedrl.training.spec import EvaluateSpec, ResourceSpec, StopSpec, TrainingOptions, single_run

    agent = get_agent(args.agent)
    if args.iterations is not None and args.iterations < 1:
        raise ValueError(f"--iterations must be >= 1, got {args.iterations}")
    for flag in ("eval_sequences", "eval_jobs", "checkpoint_every", "envs_per_runner", "validate_every"):
        if getattr(args, flag) < 1:
            raise ValueError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.num_env_runners < 0 or args.validation_sequences < 0:
        raise ValueError("--num-env-runners and --validation-sequences must be >= 0")
    if getattr(args, "trial_cpus", None) is not None and args.trial_cpus < 1:
        raise ValueError(f"--trial-cpus must be >= 1, got {args.trial_cpus}")
    args.runner_resources = parse_runner_resources(args.runner_resource)
    scenario = apply_scenario(args)
    env, settings = agent.configure(args)
    if scenario is not None:
        scenario.check_trains(agent.name, agent.judge(env))
    budget = parse_duration(args.time_budget, "--time-budget")
    if args.iterations is None and budget is None:
        budget = parse_duration(DEFAULT_TIME_BUDGET, "--time-budget")
    if args.keep_checkpoints < 0:
        raise ValueError(f"--keep-checkpoints must be >= 0 (0 keeps all), got {args.keep_checkpoints}")
    if getattr(args, "validation_jobs", None) is not None and args.validation_jobs < 1:
        raise ValueError(f"--validation-jobs must be >= 1, got {args.validation_jobs}")
    options = {"validation_sequences": args.validation_sequences, "checkpoint_every": args.checkpoint_every,
               "validation_jobs": getattr(args, "validation_jobs", None),
               "validate_every": args.validate_every,
               "keep_checkpoints": args.keep_checkpoints or None,
               "validation_from_scenario": getattr(args, "validation_from_scenario", False),
               **agent.preparation_options(args)}
    trial_cpus = getattr(args, "trial_cpus", None)
    if trial_cpus is None:
        trial_cpus = args.auto_trial_cpus = default_trial_cpus(args.num_env_runners)
    spec = single_run(args.agent, env, settings, getattr(args, "model", None),
                      StopSpec(iterations=args.iterations, time_budget=budget),
                      TrainingOptions(**options),
                      EvaluateSpec(sequences=args.eval_sequences, jobs=args.eval_jobs,
                                   starts=tuple(parse_starts(args.eval_starts) or ())),
                      resources=ResourceSpec(cpus_for_main_process=float(trial_cpus)))
    return replace(spec, scenario=scenario) if scenario is not None else spec


SCENARIO_SEQUENCES = {"eval_sequences": "sequences", "eval_jobs": "jobs"}
"""`schedrl train` options that redraw a scenario's evaluation sequences -> `Scenario.overridden`'s keywords."""


def apply_scenario(args: argparse.Namespace):
    """Fill the options `--scenario` sets and the command line did not give; the scenario (with the explicit
    options that override its parts) or None. Its evaluation starts become `--eval-starts`."""
    from schedrl.cli.options import given, scenario_with_options
    from schedrl.scenarios import scoring

    scenario = scenario_with_options(args, SCENARIO_SEQUENCES)
    if scenario is None:
        return None
    scenario.check_agent(args.agent)
    for dest, value in scenario.agent_options(args.agent).items():
        if hasattr(args, dest) and not given(args, dest):
            setattr(args, dest, value)
    # validation on the scenario's fixed sequences (the same for every seed) unless the command line sets its own
    args.validation_from_scenario = not (given(args, "validation_sequences") or given(args, "validation_jobs"))
    if not given(args, "eval_starts"):
        starts = scoring.pinned_starts(scenario)
        if starts is not None:
            args.eval_starts = ",".join(map(str, starts))
    print(f"schedrl train: scenario {scenario.name} (definition {scenario.sha256()[:12]}): "
          f"{scenario.training_summary()}", file=sys.stderr)
    return scenario


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


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from schedrl.cli.main import UsageError

    from schedrl.outputs import In, Out, claim, has_checkpoint, writing
    from schedrl.training.spec import SWEEP_FILE

    out = Out("--out", Path(args.out), "dir", signature=(SWEEP_FILE,))
    inputs = [In(f"--{name}", Path(getattr(args, name))) for name in ("trace", "scenario")
              if getattr(args, name, None) and Path(getattr(args, name)).expanduser().exists()]
    claim("train", [out], inputs, force=args.force)
    if args.resume:
        args = recorded_args(args)
    elif args.iterations is None and args.time_budget is None:
        print(f"schedrl train: no --iterations or --time-budget given: training for {DEFAULT_TIME_BUDGET}",
              file=sys.stderr)
    try:
        spec = build_spec(args)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if getattr(args, "settings_note", None):
        print(f"schedrl train: {args.settings_note}", flush=True)
    if getattr(args, "auto_trial_cpus", None) is not None:
        print(f"schedrl train: the training process reserves {args.auto_trial_cpus} CPU(s) (its learner's torch "
              "threads; --trial-cpus N to change, e.g. 1 each for two runs side by side)", flush=True)
    from schedrl.training.driver import train

    train_args = tuple(a for a in getattr(args, "argv", ()) if a not in ("--resume", "--force"))
    try:
        with writing("train", [out], inputs, force=args.force, keep=has_checkpoint):
            train(spec, args.out, resume=args.resume, train_args=train_args)
    except (FileExistsError, ValueError) as e:
        raise UsageError(str(e)) from None
    return 0


def recorded_args(args: argparse.Namespace) -> argparse.Namespace:
    """`--resume`: the options the run in `--out` was started with (its sweep and run records), not today's."""
    import json
    from pathlib import Path

    from schedrl.cli.main import UsageError, build_parser, explicit_dests
    from schedrl.training.spec import SWEEP_FILE

    out = Path(args.out).expanduser()
    record = out / SWEEP_FILE
    if not record.is_file():
        raise UsageError(f"nothing to resume in {args.out}: no {SWEEP_FILE} (was the run started there?)")
    data = json.loads(record.read_text())
    recorded = data.get("train_args")
    if recorded is None:  # started from Python: today's options stand in
        return args
    parser = build_parser("train")
    original = parser.parse_args(["train", *recorded])
    original.explicit = explicit_dests(parser, ["train", *recorded])
    if original.trial_cpus is None:  # the CPUs the run was given, whatever today's machine would give it
        original.trial_cpus = int(data.get("spec", {}).get("resources", {}).get("cpus_for_main_process", 1))
    # options given now (not defaults) that differ from the run's: said, then ignored
    given = {a.split("=")[0] for a in getattr(args, "argv", ()) if a.startswith("--")} - {"--out", "--resume"}
    ignored = sorted(flag for flag in given
                     if getattr(args, flag[2:].replace("-", "_"), None) != getattr(original, flag[2:].replace("-", "_"), None))
    if ignored:
        print(f"schedrl train: --resume continues with the run's original options; ignoring {', '.join(ignored)}",
              file=sys.stderr)
    original.out, original.resume, original.argv = args.out, True, recorded
    return original
