"""`schedrl` entry point: one subcommand per module in `schedrl.cli`, imported only when used.

Each subcommand module defines `add_parser(subparsers)` and `run(args) -> int`. Input errors
(bad traces, bad options) print one `error:` line and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from schedrl import __version__
from schedrl.agents import agent_commands
from schedrl.numbers import Integer, finite_options

# subcommand name -> (module, one-line help); modules are imported lazily so that
# `schedrl traces ...` never pays for torch or ray
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "traces": ("schedrl.cli.traces", "list, inspect, fetch and generate workload traces"),
    "scenarios": ("schedrl.cli.scenarios", "list, show and check the named setups policies are trained and judged on"),
    "simulate": ("schedrl.cli.simulate", "run one policy on a trace sequence and print its metrics"),
    "compare": ("schedrl.cli.compare", "run several policies on the same job sequences and print them side by side"),
    "train": ("schedrl.cli.train", "train an agent with Ray RLlib (`schedrl train AGENT --help` for its options)"),
    "recipes": ("schedrl.cli.recipes", "list and show named training recipes: options, and the result each gave"),
    "tune": ("schedrl.cli.tune", "run a hyperparameter sweep from a YAML file (one Ray Tune experiment)"),
    "evaluate": ("schedrl.cli.evaluate", "score a trained checkpoint or zoo policy against the heuristics on held-out sequences"),
    "tuned": ("schedrl.cli.tuned", "fit a linear priority rule to a scenario (CMA-ES, no RL) and evaluate it"),
    "select": ("schedrl.cli.select", "choose a training run's best checkpoint on validation sequences"),
    "distill": ("schedrl.cli.distill", "turn a trained inspector or RLScheduler policy into a small decision tree an admin can read"),
    "export": ("schedrl.cli.export", "turn a checkpoint into a small policy that loads without Ray or pickles"),
    "zoo": ("schedrl.cli.zoo", "list and show the trained policies shipped with schedrl (use one as zoo:NAME)"),
    "dtsim": ("schedrl.cli.forward", "run heuristics and checkpoints on the discrete-time cluster of DeepRM and RLSchert, "
                                     "across loads and settings"),
    "predict": ("schedrl.cli.forward", "train or evaluate a predictor of jobs' remaining run time on an SWF trace"),
    "hindsight": ("schedrl.cli.hindsight", "how much rejecting or choosing backfills could gain with perfect knowledge of the future"),
    "bound": ("schedrl.cli.bound", "how far from perfect: the offline optimum of a scenario's windows, bounded from both sides"),
    "leaderboard": ("schedrl.cli.leaderboard", "score every heuristic and shipped policy on every scenario against its reference"),
    "slurm": ("schedrl.cli.slurm", "let a policy order a Slurm partition's queue (or shadow it), report, reset"),
    "bench": ("schedrl.cli.bench", "run the speed benchmarks of a source checkout"),
}

GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("data", ("traces", "scenarios")),
    ("simulate and compare", ("simulate", "compare", "leaderboard", "hindsight", "bound")),
    ("train", ("train", "recipes", "tune", "tuned", "select")),
    ("evaluate and ship", ("evaluate", "export", "distill", "zoo")),
    ("deploy", ("slurm",)),
)
"""`schedrl --help` lists the subcommands by task; any not named here (an agent's own tool, `dtsim`, `predict`,
`bench`) is listed under "more tools"."""

GETTING_STARTED = "docs/guides/getting-started.md"

EXIT_INPUT_ERROR = 2

FORWARDED = {"dtsim": "schedrl.dtsim.__main__", "predict": "schedrl.predict.__main__"}
"""Subcommands whose whole argument list goes to another module's `main(argv)` (their own parsers)."""

# the agents' own tools (`schedrl mrsch goals ...`), found through the registry (`COMMANDS` in an agent package)
for _name, (_module, _help) in agent_commands().items():
    if _name in SUBCOMMANDS:
        raise ValueError(f"an agent package's subcommand {_name!r} shadows a shared one")
    SUBCOMMANDS[_name] = ("schedrl.cli.forward", _help)
    FORWARDED[_name] = _module


class UsageError(ValueError):
    """A bad command-line option or value; printed as one line, exit status 2."""


def did_you_mean(value: str, choices, what: str) -> str:
    """"unknown WHAT 'value' (did you mean X?); choose from A, B, ..." for a misspelled name."""
    import difflib

    choices = sorted(str(c) for c in choices)
    close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown {what} {value!r}{hint}; choose from {', '.join(choices)}"


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `schedrl train rlscheduler: error: ...` and status 2, never the usage block
    first (`--help` shows it), and "did you mean" for a misspelled subcommand or agent."""

    def error(self, message: str):  # noqa: D102 (argparse's hook)
        import re

        match = re.match(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if match:
            dest, value, listed = match.groups()
            choices = re.findall(r"'([^']*)'", listed) or [c.strip() for c in listed.split(",")]
            what = {"COMMAND": "command", "AGENT": "agent", "ACTION": "action"}.get(dest)
            if what:
                message = did_you_mean(value, choices, what)
            else:  # an option's value: argparse's words, with the hint
                message = f"argument {dest}: invalid choice: " + did_you_mean(value, choices, "")[len("unknown  "):]
        self.exit(EXIT_INPUT_ERROR, f"{self.prog}: error: {message} (`{self.prog} --help` lists the options)\n")

    def format_help(self) -> str:
        if self.prog != "schedrl":
            return super().format_help()
        listed = [name for _, names in GROUPS for name in names]
        groups = [*GROUPS, ("more tools", tuple(n for n in SUBCOMMANDS if n not in listed))]
        width = max(len(n) for n in SUBCOMMANDS) + 2
        lines = [self.format_usage().rstrip(), "", self.description or "", "",
                 f"New here? {GETTING_STARTED} goes from install to a trained policy judged against the heuristics.",
                 "`schedrl COMMAND --help` lists a command's options."]
        for title, names in groups:
            names = [n for n in names if n in SUBCOMMANDS]
            if names:
                lines += ["", f"{title}:"] + [f"  {n:<{width}}{SUBCOMMANDS[n][1]}" for n in names]
        lines += ["", "options:", "  -h, --help  show this help message and exit",
                  "  --version   show the version and exit"]
        return "\n".join(lines) + "\n"

SEED_LIMIT = 2 ** 32
"""Seeds are 0 .. 2**32 - 1: what numpy's legacy seeding, Ray and every RNG schedrl seeds accept alike."""
AT_LEAST_ONE = frozenset({
    "iterations", "jobs", "sequences", "eval_sequences", "eval_jobs", "checkpoint_every", "envs_per_runner",
    "validate_every", "trial_cpus", "validation_jobs", "windows", "window_jobs", "nodes", "procs", "batch_size",
    "minibatch_size", "epochs", "sequence_length", "hidden", "cycles", "every", "slots", "res_slot", "simu_len",
    "candidates", "decisions_per_update", "check_jobs", "top", "depth", "bf_interval", "bf_resolution", "bf_window",
    "bf_max_job_test"})
"""Integer options that count something there must be at least one of; every other integer option is >= 0."""


COUNT_LIMIT = 2 ** 31
"""Every other integer option (a count, a position, a size) is below this: what the compiled simulator and the
generators hold in a C integer, and more than any trace or machine has."""


def _bounds(action) -> tuple[int, int | None, str]:
    if action.dest == "seed" or action.dest.endswith("_seed"):
        return 0, SEED_LIMIT, "a seed"
    return (1 if action.dest in AT_LEAST_ONE else 0), COUNT_LIMIT, "an integer"


def _options(parser: argparse.ArgumentParser, positionals: bool = False):
    """Every option action of `parser` and its subcommands (and, `positionals`, every positional argument)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from _options(child, positionals)
        elif action.option_strings or (positionals and action.dest != argparse.SUPPRESS):
            yield action


def argument_inputs(parser: argparse.ArgumentParser, args: argparse.Namespace, explicit) -> list:
    """Every existing path named by an argument given on the command line (`schedrl.outputs.named_paths`), by the
    option that named it: what no output of the command may be (`schedrl.outputs.reading`)."""
    from schedrl.outputs import named_paths

    found, seen = [], set()
    for action in _options(parser, positionals=True):
        if action.dest in seen or not hasattr(args, action.dest) or action.dest in ("command", "argv", "explicit"):
            continue
        if action.option_strings and action.dest not in explicit:
            continue
        seen.add(action.dest)
        name = action.option_strings[-1] if action.option_strings else (action.metavar or action.dest)
        found += named_paths(str(name), getattr(args, action.dest))
    return found


def check_integers(parser: argparse.ArgumentParser, args: argparse.Namespace, explicit) -> None:
    """Every integer option within its bounds, checked when the command line is read, before any work, in one line
    naming the option: seeds (`--seed`, `--*-seed`) 0 .. 2**32 - 1, counts in `AT_LEAST_ONE` 1 .. 2**31 - 1, every
    other integer option 0 .. 2**31 - 1."""
    for action in _options(parser):
        value = getattr(args, action.dest, None)
        if isinstance(action.type, Integer) and action.dest in explicit and isinstance(value, int):
            problem = action.type.problem(value)  # an option that states its own range
            if problem:
                raise UsageError(f"{action.option_strings[-1]} {problem}")
            continue
        if action.type is not int or action.dest not in explicit or isinstance(value, bool) \
                or not isinstance(value, int):
            continue
        low, high, what = _bounds(action)
        if value < low or (high is not None and value >= high):
            bound = f">= {low}" if value < low else f"{what} between {low} and {high - 1}"
            raise UsageError(f"{action.option_strings[-1]} must be {bound}, got {value}")


def check_together(parser: argparse.ArgumentParser, args: argparse.Namespace, explicit) -> None:
    """The option pairs the command declared apart (`schedrl.cli.options.apart`, `needs`), given on the command line
    together (or one without the other it needs): one line, before any work."""
    dests: dict[str, set[str]] = {}
    for action in _options(parser):
        for option in action.option_strings:
            dests.setdefault(option, set()).add(action.dest)
    given = lambda option: bool(dests.get(option, set()) & explicit)  # noqa: E731
    for kind, option, others, why in getattr(args, "option_rules", None) or ():
        if not given(option):
            continue
        if kind == "apart" and any(given(o) for o in others):
            raise UsageError(f"{option} cannot be given with {', '.join(o for o in others if given(o))}: {why}")
        if kind == "needs" and not given(others[0]):
            raise UsageError(f"{option} is an option of {others[0]}" + (f": {why}" if why else ""))


def refuse_empty(parser: argparse.ArgumentParser, args: argparse.Namespace, explicit) -> None:
    """A string option given on the command line with an empty value (`--scenarios ""`) is refused in one line, as
    `a,,b` is: an empty value never means "all" or "the default"."""
    for action in _options(parser):
        if action.dest not in explicit:
            continue
        value = getattr(args, action.dest, None)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and not v.strip() for v in values):
            raise UsageError(f"{action.option_strings[-1]} is empty: give a value, or leave the option out")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = Parser(prog="schedrl", description="Reinforcement-learning batch-job schedulers for HPC, judged against "
                                                "the classic heuristics.")
    parser.add_argument("--version", action="version", version=f"schedrl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text)
            continue
        importlib.import_module(module).add_parser(sub, name, help_text)
    return finite_options(parser)  # every float option refuses nan and inf


def explicit_dests(parser: argparse.ArgumentParser, argv: list[str]) -> frozenset[str]:
    """The option destinations given on the command line (abbreviations and `--opt=value` included): `argv`
    parsed again with every default replaced by a marker. Precedence everywhere: explicit options, then
    `--scenario`, then a checkpoint's run record, then the defaults."""
    marker = object()
    saved: list[tuple[argparse.Action, object]] = []

    def walk(p: argparse.ArgumentParser) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in dict.fromkeys(action.choices.values()):
                    walk(child)
            elif action.dest != argparse.SUPPRESS and action.option_strings:
                saved.append((action, action.default))
                # append actions copy their default: None, not the marker, keeps that working
                action.default = None if isinstance(action, argparse._AppendAction) else marker

    walk(parser)
    try:
        again = parser.parse_args(argv)
    finally:
        for action, default in saved:
            action.default = default
    given = {a.dest for a, _ in saved
             if getattr(again, a.dest, marker) is not marker and getattr(again, a.dest, None) is not None}
    return frozenset(given)


PLOTS_CLAIMED_BY_COMMAND = {"leaderboard"}
"""Commands that check their `--plot` with their other outputs (`schedrl.outputs.claim`)."""


def _claim_plot(args: argparse.Namespace):
    """A command's `--plot FILE` checked before it runs (`schedrl.outputs`: kind, directory, a format matplotlib
    writes, not replacing a file schedrl did not write unless --force); the claim, or None without --plot."""
    from schedrl.outputs import Out, claim

    if not getattr(args, "plot", None) or args.command in PLOTS_CLAIMED_BY_COMMAND:
        return None
    return claim(args.command, [Out("--plot", Path(args.plot), plot=True)], force=getattr(args, "force", False))


def main(argv: list[str] | None = None) -> int:
    from schedrl.bounded import TooLarge
    from schedrl.outputs import OutputError, reading
    from schedrl.paths import PathVariableError
    from schedrl.workload.errors import TraceError

    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    if argv and argv[0] in FORWARDED:
        from schedrl.outputs import argv_paths, reading

        forwarded = importlib.import_module(FORWARDED[argv[0]])
        try:
            with reading(argv_paths(argv[1:])):  # its own parser: every path its arguments name is an input
                return int(forwarded.main(argv[1:]) or 0)
        except KeyboardInterrupt:
            print(f"schedrl {argv[0]}: interrupted", file=sys.stderr)
            return 130
    parser = build_parser(command if command in SUBCOMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_INPUT_ERROR
    args.argv = argv[argv.index(args.command) + 1:]  # the subcommand's own arguments, as given
    args.explicit = explicit_dests(parser, argv)  # what --scenario and a run record must not override
    try:
        check_integers(parser, args, args.explicit)  # counts and seeds at their edges, before any work
        check_together(parser, args, args.explicit)  # no option silently dropped for another
        refuse_empty(parser, args, args.explicit)
        with reading(argument_inputs(parser, args, args.explicit)):  # no output over any of them
            figure = _claim_plot(args)
            status = int(args.run(args) or 0)
        if figure is not None and Path(args.plot).expanduser().is_file():
            figure.record(args.plot)  # the figure is this command's: a rerun may replace it
        return status
    except (TraceError, UsageError, OutputError, PathVariableError, TooLarge, FileNotFoundError) as e:
        print(f"schedrl {args.command}: error: {e}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except PermissionError as e:  # a file or directory the command may not write or read, found only at the write
        print(f"schedrl {args.command}: error: {e.filename or e}: permission denied", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except KeyboardInterrupt:
        print(f"schedrl {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # output piped into `head` and closed early: not an error; silence the flush at exit
        sys.stdout = open(os.devnull, "w")
        return 0


if __name__ == "__main__":
    # re-import so exception classes are the package's, not this __main__ module's copies
    from schedrl.cli.main import main as _main

    sys.exit(_main())
