"""The commands of the pages tests/docs/test_doc_commands.py does not cover parse with today's CLI: the cluster guide
(commands inside `ray job submit ... --` and the container), the agent pages and experiment logs, the sweep-file
reference, the Docker guide and the Slurm allocation script. The README's and the guides' commands, and running
them, are tests/docs/test_doc_commands.py's.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from schedrl.cli.main import SUBCOMMANDS, build_parser

REPO = Path(__file__).resolve().parents[1]


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
