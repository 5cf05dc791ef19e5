"""The README's "Using it" commands: every one parses with today's CLI, and the cheap ones run.

The two quick-start commands are run elsewhere (`.ci/run` is the test command; the main job has a
smoke test in tests/algorithms). Commands that download, or train for minutes, are only parsed here;
their code paths run with tiny budgets in the CLI tests.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from schedrl.cli.main import SUBCOMMANDS, build_parser
from shared_traces import shared_trace

REPO = Path(__file__).resolve().parents[1]

# commands run for real: (prefix, real traces they need, run from the repository rather than a scratch dir)
CHEAP = {
    "traces list": ((), False),
    "traces info SDSC-SP2": (("SDSC-SP2-1998-4.2-cln.swf.gz",), False),
    "traces generate": ((), False),
    "simulate": ((), False),
    "scenarios": ((), False),
    "compare --scenario default": ((), False),
    "leaderboard --scenarios default": ((), False),
    "compare --trace lublin_256 --policies fcfs": (("lublin_256.swf.gz",), False),
    "tune tune_configs/rlscheduler_lr_entropy.yaml --dry-run": ((), True),
    "bench": None,  # `schedrl bench` itself runs for minutes; tests/test_benchmarks.py runs it --quick
}


def usage_commands() -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    block = text[text.index("## Using it"):]
    block = block[block.index("```bash") + len("```bash"):]
    block = block[:block.index("```")]
    commands = []
    for line in block.splitlines():
        line = line.split(" #")[0].strip()
        if line.startswith("schedrl "):
            commands.append(shlex.split(line)[1:])
    return commands


COMMANDS = usage_commands()


def test_the_block_is_found_and_covers_every_subcommand():
    from schedrl.cli.main import SUBCOMMANDS

    assert len(COMMANDS) >= 15
    assert {c[0] for c in COMMANDS} == set(SUBCOMMANDS)


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c)[:60] for c in COMMANDS])
def test_every_usage_command_parses(args):
    parsed = build_parser(args[0]).parse_args(args)  # argparse exits (failing the test) on a stale option
    assert parsed.command == args[0]
    for arg in args:
        if arg.startswith("tune_configs/"):
            assert (REPO / arg).is_file(), arg


def cheap(args: list[str]):
    line = " ".join(args)
    return next(((prefix, spec) for prefix, spec in CHEAP.items() if line.startswith(prefix)), (None, None))


RUNNABLE = [c for c in COMMANDS if cheap(c)[1] is not None]


@pytest.mark.parametrize("args", RUNNABLE, ids=[" ".join(c)[:60] for c in RUNNABLE])
def test_cheap_usage_commands_run(args, tmp_path):
    _, (traces, from_repo) = cheap(args)
    for name in traces:
        shared_trace(name)
    proc = subprocess.run([sys.executable, "-m", "schedrl", *args], capture_output=True, text=True, timeout=300,
                          cwd=REPO if from_repo else tmp_path, env={**os.environ, "RAY_BACKEND_LOG_LEVEL": "fatal"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.strip()
    for option in ("--out", "--plot"):
        if option in args and not from_repo:
            assert (tmp_path / args[args.index(option) + 1]).is_file(), option


DOCS = ["docs/cluster.md", *(f"docs/{kind}/{name}.md" for kind in ("agents", "experiments")
                              for name in ("rlscheduler", "dras", "mrsch", "rlschert", "tuned-rule")),
        "docs/agents/linear.md",
        "tune_configs/README.md", "docker/README.md",
        "examples/slurm/ray_cluster.sbatch"]


def code_lines(doc: str) -> list[str]:
    """Lines of a doc's code (fenced blocks of Markdown, non-comment lines of a script), continuations joined."""
    text = (REPO / doc).read_text()
    if doc.endswith(".md"):
        text = "\n".join(block.split("\n", 1)[1] for block in text.split("```")[1::2] if "\n" in block)
    else:
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return text.replace("\\\n", " ").splitlines()


# a subcommand followed by a space or the line's end (`schedrl evaluate: ...` is output, not a command)
COMMAND = re.compile(r"(?:^|\s--\s+|schedrl:cpu\s+)(schedrl\s+(?:" + "|".join(SUBCOMMANDS) + r")(?=\s|$).*)")


def documented_commands() -> list[tuple[str, list[str]]]:
    """`schedrl ...` commands in the docs' code, run directly, after `ray job submit ... --` or in the
    image; placeholders (`<file>`, `...`) skipped, `[optional]` parts dropped, shell variables filled in."""
    found = []
    for doc in DOCS:
        for line in code_lines(doc):
            match = COMMAND.search(line.strip())
            if not match or "error:" in line:
                continue
            command = match.group(1).split(" #")[0].strip()
            if "<" in command or "..." in command:
                continue
            command = re.sub(r"\[[^]]*\]", "", command).replace("${SLURM_JOB_ID}", "1").replace("$USER", "me")
            found.append((doc, shlex.split(command)[1:]))
    return found


DOCUMENTED = documented_commands()


def test_documented_commands_are_found():
    docs = {doc for doc, _ in DOCUMENTED}
    assert docs == set(DOCS), docs
    assert {args[0] for _, args in DOCUMENTED} >= {"train", "tune", "compare"}


@pytest.mark.parametrize(("doc", "args"), DOCUMENTED, ids=[f"{d}: {' '.join(a)[:50]}" for d, a in DOCUMENTED])
def test_every_documented_command_parses(doc, args):
    parsed = build_parser(args[0]).parse_args(args)
    assert parsed.command == args[0]
    for arg in args:
        if arg.startswith("tune_configs/"):
            assert (REPO / arg).is_file(), f"{doc}: {arg}"
