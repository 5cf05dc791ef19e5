"""The output a guide shows is what its commands print today.

A guide shows a command's output in a `text` block right after `<!-- output: schedrl ...; schedrl ... -->` (or
`<!-- output not checked: REASON -->` for a run of minutes). Each such command runs here, and every line shown must
appear in what it printed, in order: a line `...` stands for lines left out, and `...` inside a line for a part left
out (a path, the rest of a long line). So a change of numbers or wording (a scenario redefined, a republished zoo)
fails here until the guide shows the new output.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from schedrl.cli.main import main

REPO = Path(__file__).resolve().parents[2]
PAGES = ["docs/guides/getting-started.md"]
SHOWN = re.compile(r"<!-- output(?:: (?P<commands>[^>]*?)| not checked: (?P<reason>[^>]*?)) -->\n```text\n(?P<text>.*?)^```",
                   re.S | re.M)

pytestmark = pytest.mark.integration  # runs documented commands (a zoo policy on a scenario: a minute)


def shown() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        for match in SHOWN.finditer((REPO / page).read_text()):
            if match.group("commands"):
                found.append((page, match.group("commands").strip(), match.group("text")))
    return found


def matches(shown_text: str, printed: str) -> list[str]:
    """The shown lines not found in `printed`, in order."""
    lines = printed.splitlines()
    at, missing = 0, []
    for line in shown_text.rstrip("\n").splitlines():
        if line.strip() == "...":
            continue
        pattern = re.compile(".*?".join(re.escape(part) for part in line.rstrip().split("...")))
        hit = next((i for i in range(at, len(lines)) if pattern.fullmatch(lines[i].rstrip())
                    or (line.rstrip().endswith("...") and pattern.match(lines[i]))), None)
        if hit is None:
            missing.append(line)
        else:
            at = hit + 1
    return missing


def test_every_shown_output_names_its_commands():
    for page in PAGES:
        text = (REPO / page).read_text()
        blocks = len(re.findall(r"^```text\n", text, re.M))
        marked = len(SHOWN.findall(text))
        assert blocks == marked, f"{page}: {blocks - marked} text blocks without an <!-- output: ... --> marker"


def test_the_matching_sees_a_changed_number():
    printed = "| none | 6027.51 | 251.03 |\nother line\n"
    assert matches("| none | 6027.51 | 251.03 |\n...\n", printed) == []
    assert matches("| none | 6027.51 | 251.04 |\n", printed) == ["| none | 6027.51 | 251.04 |"]
    assert matches("| none | ... |\n", printed) == []


@pytest.mark.parametrize("page,commands,text", shown(), ids=[c for _, c, _ in shown()])
def test_the_shown_output_is_what_the_commands_print(page, commands, text, capsys):
    printed = []
    for command in commands.split(";"):
        argv = shlex.split(command.strip())
        assert argv[0] == "schedrl", command
        status = main(argv[1:])
        out, err = capsys.readouterr()
        assert status == 0, f"{command}: exit {status}\n{err}"
        printed.append(err + out)
    missing = matches(text, "\n".join(printed))
    assert not missing, f"{page}: `{commands}` no longer prints:\n" + "\n".join(missing)
