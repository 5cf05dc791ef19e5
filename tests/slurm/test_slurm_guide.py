"""docs/slurm.md's adapter guide says what the code does: its commands parse with today's CLI, and the squeue and
sinfo formats, the mechanism's messages and the slurm.conf it asks for are the code's."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from schedrl.cli.main import build_parser
from schedrl.slurm.client import SINFO_FORMAT, SQUEUE_FORMAT
from schedrl.slurm.mechanism import MechanismError, priority_spread

GUIDE = (Path(__file__).resolve().parents[2] / "docs" / "slurm.md").read_text()


def commands() -> list[list[str]]:
    blocks = [b.split("\n", 1)[1] for b in GUIDE.split("```")[1::2] if b.startswith("bash")]
    found = []
    for line in "\n".join(blocks).replace("\\\n", " ").splitlines():
        match = re.search(r"\bschedrl (.*)$", line)
        if match:
            found.append(shlex.split(match.group(1).split(" #")[0]))
    return found


COMMANDS = commands()


def test_the_guide_has_every_slurm_action():
    assert {c[1] for c in COMMANDS if c[0] == "slurm"} == {"run", "report", "reset", "replay", "explain"}
    assert {c[0] for c in COMMANDS} >= {"traces", "compare", "tuned", "train", "evaluate", "slurm"}


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c)[:60] for c in COMMANDS])
def test_every_command_of_the_guide_parses(args):
    assert build_parser(args[0]).parse_args(args).command == args[0]


def test_the_formats_and_settings_shown_are_the_codes():
    assert f"--format='{SQUEUE_FORMAT}'" in GUIDE and f"--format='{SINFO_FORMAT}'" in GUIDE
    assert "PriorityType=priority/multifactor" in GUIDE
    with pytest.raises(MechanismError, match="set PriorityType=priority/multifactor"):
        priority_spread({"PriorityType": "priority/basic"})
