"""What a newcomer meets on the command line: `schedrl --help` grouped by task with a pointer to getting started and
no paper jargon, help that shows the real defaults, "did you mean" for misspelled names, and one error line (not the
usage block) for a missing option."""
from __future__ import annotations

import argparse
import re

import pytest

from cli_process import run_cli
from schedrl.cli.main import GROUPS, SUBCOMMANDS, build_parser


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """`schedrl ARGS` in this process (`cli_process.run_cli`): status, stdout, stderr."""
    result = run_cli(*args)
    return result.returncode, result.stdout, result.stderr


def one_error_line(status: int, err: str) -> str:
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one error line, got {len(lines)}:\n{err}"
    assert "error:" in lines[0] and "usage:" not in err
    return lines[0]


def test_help_groups_the_commands_by_task_and_points_at_getting_started(capsys):
    status, out, _ = cli(capsys, "--help")
    assert status == 0
    assert "docs/guides/getting-started.md" in out
    for title, _ in GROUPS:
        assert f"\n{title}:\n" in out, title
    listed = re.findall(r"^  ([a-z][\w-]*)  +\S", out, re.M)
    assert sorted(listed) == sorted(SUBCOMMANDS), "every command listed once, under a group"
    groups = re.split(r"\n(?=[a-z][a-z ]*:\n)", out)
    assert len(groups) >= len(GROUPS) + 1


# what a one-line description must not lean on: the papers' table and figure numbers, and our own jargon
JARGON = re.compile(r"\bTable\s+[0-9IVX]+\b|\bFig\.|\bdecision class\b|perfect-knowledge bound|'s heuristics\b")


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_one_line_descriptions_say_what_the_command_does(name):
    text = SUBCOMMANDS[name][1]
    assert not JARGON.search(text), f"schedrl {name}: {text}"
    assert len(text) <= 110, f"schedrl {name}: {len(text)} characters for one line"


def test_a_misspelled_agent_gets_a_did_you_mean(capsys):
    line = one_error_line(*cli(capsys, "train", "rlschedular", "--out", "x")[::2])
    assert "unknown agent 'rlschedular' (did you mean rlscheduler?)" in line
    line = one_error_line(*cli(capsys, "trian")[::2])
    assert "unknown command 'trian' (did you mean train?)" in line


def test_a_misspelled_policy_gets_a_did_you_mean(capsys):
    status, _, err = cli(capsys, "simulate", "--trace", "default", "--policy", "sjff", "--jobs", "64")
    line = one_error_line(status, err)
    assert "unknown policy 'sjff' (did you mean sjf?)" in line


def test_a_missing_out_is_one_line(capsys):
    line = one_error_line(*cli(capsys, "train", "rlscheduler", "--time-budget", "1m")[::2])
    assert line.startswith("schedrl train rlscheduler: error: the following arguments are required: --out"), line


def test_an_option_value_keeps_argparses_words_with_a_hint(capsys):
    line = one_error_line(*cli(capsys, "simulate", "--trace", "default", "--backfill", "esy")[::2])
    assert "argument --backfill: invalid choice: 'esy' (did you mean easy?)" in line


def subparser(parser: argparse.ArgumentParser, *names: str) -> argparse.ArgumentParser:
    for name in names:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def agents() -> list[str]:
    train = subparser(build_parser("train"), "train")
    return sorted(next(a for a in train._actions if isinstance(a, argparse._SubParsersAction)).choices)


@pytest.mark.parametrize("agent", agents())
def test_train_help_shows_real_defaults_and_no_internal_names(agent):
    text = subparser(build_parser("train"), "train", agent).format_help()
    flat = " ".join(text.split())
    assert "machine_defaults" not in flat
    assert "(paper:" not in flat, "the paper's value is a note beside the default, never in place of it"
    if "--paper-defaults" not in {o for a in subparser(build_parser("train"), "train", agent)._actions
                                  for o in a.option_strings}:
        assert "paper-defaults" not in flat, f"`train {agent} --help` mentions an option it refuses"


def test_rlscheduler_help_shows_the_default_this_machine_gets():
    import os

    from schedrl.agents.rlscheduler.agent import machine_defaults

    sized = machine_defaults(os.cpu_count() or 1)
    flat = " ".join(subparser(build_parser("train"), "train", "rlscheduler").format_help().split())
    assert f"update passes per iteration (default {sized['--epochs']}; the paper used 80" in flat
    assert f"(default {sized['--batch-size']}; the paper used 100 x 256)" in flat
    assert f"default {sized['--num-env-runners']} on this machine" in flat


def test_zoo_list_prints_scores_as_people_read_them(capsys):
    status, out, err = cli(capsys, "zoo", "list")
    assert status == 0, err
    assert not re.search(r"\d\.\d+e[+-]\d", out), out
    assert re.search(r"\b(bsld|wait|slowdown) \d{1,3}(,\d{3})*\.\d\d\b", out), out
