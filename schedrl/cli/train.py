"""`schedrl train AGENT`: one agent trained as a one-trial Ray Tune run (the sweep driver, one trial).

The shared options (trace, stop, seed, env runners, evaluation, output) are defined here; each agent
adds its own (`Agent.add_arguments`). `schedrl train AGENT --help` lists both.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from schedrl.cli.options import add_slurm_options, parse_starts, scenario_with_options, slurm_options
from schedrl.outputs import add_force
from schedrl.scenarios.workload import CLEANING_PRESETS
from schedrl.training.single import DEFAULT_TIME_BUDGET


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    from schedrl.agents import AGENTS, get_agent

    p = subparsers.add_parser(name, help=help_text, description=help_text)
    agents = p.add_subparsers(dest="agent", metavar="AGENT", required=True)
    for agent_name in AGENTS:
        agent = get_agent(agent_name)
        sub = agents.add_parser(agent_name, help=agent.summary, description=f"train {agent.summary}",
                                add_help=False)
        sub.add_argument("-h", "--help", action=BriefHelp, nargs=0, default=argparse.SUPPRESS,
                         help="the common options (--help-all: every option)")
        sub.add_argument("--help-all", action="help", help="every option, the agent's own described")
        add_common_arguments(sub)
        agent.add_arguments(sub.add_argument_group(f"{agent_name} options"))
        if takes_slurm(sub):
            add_slurm_options(sub, policy_top=False)
        # the site's Slurm as the agent's env config takes it (`slurm`): from --scenario, else from the options above
        sub.set_defaults(run=run, slurm=None)
    return p


BRIEF = frozenset({"help", "help_all", "recipe", "scenario", "trace", "iterations", "time_budget", "seed",
                   "trial_cpus", "out", "resume", "force"})
"""The options `schedrl train AGENT --help` describes; the rest are named in a line, described by `--help-all`."""


class BriefHelp(argparse.Action):
    """`--help`: the common options described, every other option named, `--help-all` for all of them."""

    def __call__(self, parser, namespace, values, option_string=None):
        hidden = [a for a in parser._actions if a.dest not in BRIEF and a.help != argparse.SUPPRESS]
        saved = [a.help for a in hidden]
        for action in hidden:
            action.help = argparse.SUPPRESS
        try:
            text = parser.format_help()
        finally:
            for action, help_text in zip(hidden, saved):
                action.help = help_text
        import textwrap

        names = ", ".join(a.option_strings[-1] for a in hidden)
        more = textwrap.fill(f"{len(hidden)} more options (`{parser.prog} --help-all` describes them): {names}",
                             width=100, subsequent_indent="  ", break_on_hyphens=False)
        parser._print_message(text + "\n" + more + "\n", sys.stdout)
        parser.exit(0)


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """The options every agent takes, with their defaults (an agent that sizes one for the machine, as RLScheduler
    does, says so in that option's help from its `add_arguments`)."""
    p.add_argument("--recipe", metavar="NAME", default=None,
                   help="a named set of this agent's options with the result it gave (`schedrl recipes list`); "
                        "options given here override the recipe's")
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


def takes_slurm(parser: argparse.ArgumentParser) -> bool:
    """Whether an agent's `--backfill` can be `slurm` (its env config then carries the site's Slurm, `slurm`): such an
    agent's `train` also takes `--slurm-config` and the `--bf-*` options."""
    backfill = next((a for a in parser._actions if "--backfill" in a.option_strings), None)
    if backfill is None:
        return False
    # the values it takes: its choices, else those its metavar names (rl-backfill's `easy|rlscheduler`), else any
    named = backfill.choices or (backfill.metavar.split("|") if backfill.metavar else None)
    return named is None or "slurm" in named


def build_plan(args: argparse.Namespace):
    """What the options run and say first (`training/single.py:train_plan`; ValueError on a bad value), with
    `--scenario` resolved once into the `Scenario` it passes down."""
    from schedrl.training.single import SCENARIO_SEQUENCES, train_plan

    scenario = scenario_with_options(args, SCENARIO_SEQUENCES)
    if scenario is None:
        args.slurm = slurm_options(args, str(getattr(args, "backfill", None) or "")) or None
    return train_plan(args, scenario, parse_starts(args.eval_starts),
                      log=lambda line: print(f"schedrl train: {line}", file=sys.stderr))


def plan_where_started(args: argparse.Namespace):
    """`build_plan` in the directory the run was started in where `--resume` recorded one (`started_in`), its env's
    relative paths made absolute there: a resumed run reads its options' relative paths (`--trace`, `--scenario`, a
    file option) as it first did."""
    from dataclasses import replace

    from schedrl.training.driver import portable_env

    where = getattr(args, "started_in", None)
    if not where:
        return build_plan(args)
    with contextlib.chdir(where):
        plan = build_plan(args)
        return replace(plan, spec=replace(plan.spec, env=portable_env(plan.spec.env)))


def build_spec(args: argparse.Namespace):
    """The one-trial `SweepSpec` of the options (`build_plan`'s)."""
    return build_plan(args).spec


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError

    from schedrl.outputs import In, Out, claim, has_checkpoint, writing
    from schedrl.training.sweep import SWEEP_FILE

    out = Out("--out", Path(args.out), "dir", signature=(SWEEP_FILE,))
    inputs = [In(f"--{name}", Path(getattr(args, name))) for name in ("trace", "scenario")
              if getattr(args, name, None) and Path(getattr(args, name)).expanduser().exists()]
    claim("train", [out], inputs, force=args.force)
    if args.resume:
        args = recorded_args(args)
    elif args.recipe is not None:
        args = with_recipe(args)
    elif args.iterations is None and args.time_budget is None and not getattr(args, "no_ppo", False):
        print(f"schedrl train: no --iterations or --time-budget given: training for {DEFAULT_TIME_BUDGET}",
              file=sys.stderr)
    try:
        plan = plan_where_started(args)
    except ValueError as e:
        raise UsageError(str(e)) from None
    for line in plan.notes:
        print(f"schedrl train: {line}", flush=True)
    from schedrl.training.driver import train

    train_args = tuple(a for a in getattr(args, "argv", ()) if a not in ("--resume", "--force"))
    try:
        with writing("train", [out], inputs, force=args.force, keep=has_checkpoint):
            train(plan.spec, args.out, resume=args.resume, train_args=train_args)
    except (FileExistsError, ValueError) as e:
        raise UsageError(str(e)) from None
    return 0


def with_recipe(args: argparse.Namespace) -> argparse.Namespace:
    """`--recipe NAME`: the options parsed again with the recipe's before the ones given (which override them); the
    run records the expanded command, so `--resume` needs no recipe file."""
    from schedrl.cli.main import UsageError, build_parser, check_integers, explicit_dests, refuse_empty
    from schedrl.training.recipe import RecipeError, get_recipe

    try:
        recipe = get_recipe(args.recipe, args.agent)
    except RecipeError as e:
        raise UsageError(f"--recipe: {e}") from None
    given = list(getattr(args, "argv", ()))[1:]  # after the agent's name
    mine = [i for i, a in enumerate(given) if a == "--recipe" or a.startswith("--recipe=")]
    own = [a for i, a in enumerate(given) if i not in mine and not (i - 1 in mine and given[i - 1] == "--recipe")]
    argv = [args.agent, *recipe.arguments(), *own]
    parser = build_parser("train")
    expanded = parser.parse_args(["train", *argv])
    expanded.explicit = explicit_dests(parser, ["train", *argv])
    check_integers(parser, expanded, expanded.explicit)
    refuse_empty(parser, expanded, expanded.explicit)
    expanded.argv, expanded.command = argv, args.command
    print(f"schedrl train: recipe {recipe.name} (version {recipe.version}): {' '.join(recipe.arguments())}"
          + (f"; then {' '.join(own)}" if own else ""), file=sys.stderr)
    return expanded


def recorded_args(args: argparse.Namespace) -> argparse.Namespace:
    """`--resume`: the options the run in `--out` was started with (its sweep and run records), not today's."""
    from schedrl.cli.main import UsageError, build_parser, explicit_dests
    from schedrl.training.single import recorded_run

    try:
        recorded, cpus, started_in = recorded_run(args.out)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if recorded is None:  # started from Python: today's options stand in
        return args
    parser = build_parser("train")
    original = parser.parse_args(["train", *recorded])
    original.explicit = explicit_dests(parser, ["train", *recorded])
    if original.trial_cpus is None:  # the CPUs the run was given, whatever today's machine would give it
        original.trial_cpus = cpus
    # options given now (not defaults) that differ from the run's: said, then ignored
    given = {a.split("=")[0] for a in getattr(args, "argv", ()) if a.startswith("--")} - {"--out", "--resume"}
    ignored = sorted(flag for flag in given
                     if getattr(args, flag[2:].replace("-", "_"), None) != getattr(original, flag[2:].replace("-", "_"), None))
    if ignored:
        print(f"schedrl train: --resume continues with the run's original options; ignoring {', '.join(ignored)}",
              file=sys.stderr)
    original.out, original.resume, original.argv = str(Path(args.out).expanduser().resolve()), True, recorded
    original.started_in = started_in
    if started_in and not Path(started_in).is_dir():
        print(f"schedrl train: --resume: the run was started in {started_in}, which is gone; its options' relative "
              "paths are read from here", file=sys.stderr)
        original.started_in = None
    return original
