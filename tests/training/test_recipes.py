"""Training recipes (schedrl/training/recipe.py, `schedrl recipes`, `train AGENT --recipe`): every shipped recipe
parses as its agent's options, its result is its source's (quotes verbatim, leaderboard rows read), explicit options
override it, and `train AGENT --help` is short with `--help-all` for the rest."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from cli_process import run_cli

from schedrl.cli.main import build_parser, explicit_dests
from schedrl.cli.train import with_recipe
from schedrl.training.recipe import REPO, RecipeError, get_recipe, read, recipes

RECIPES = recipes()


def test_recipes_are_shipped():
    assert {"teacher", "rlscheduler-2core"} <= set(RECIPES)


def parsed(*argv: str):
    parser = build_parser("train")
    args = parser.parse_args(["train", *argv])
    args.explicit = explicit_dests(parser, ["train", *argv])
    args.argv = list(argv)
    return args


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_recipe_is_its_agent_s_options(name):
    recipe = RECIPES[name]
    args = with_recipe(parsed(recipe.agent, "--recipe", name, "--out", "runs/x"))
    for key, value in recipe.options:
        dest = key.replace("-", "_")
        assert dest in args.explicit
        assert str(getattr(args, dest)) == str(value) or getattr(args, dest) == pytest.approx(float(value))


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_result_is_its_source_s(name):
    """A result restates its source: each quote is in the source page verbatim; a leaderboard row exists."""
    recipe = RECIPES[name]
    source = recipe.result["source"].split("#")[0]
    text = (REPO / source).read_text()
    for quote in recipe.result.get("quotes", ()):
        assert quote in text, f"{name}: {quote!r} is not in {source}"
    if "leaderboard" in recipe.result:
        assert recipe.result_lines()[1].startswith(f"gave: {recipe.result['leaderboard']['policy']} ")
    anchor = recipe.result["source"].partition("#")[2]
    if anchor:  # the section the result comes from, by its heading's anchor
        headings = ["-".join("".join(c for c in line.lstrip("#").strip().lower() if c.isalnum() or c in " -").split())
                    for line in text.splitlines() if line.startswith("#")]
        assert anchor in headings, f"{name}: no heading #{anchor} in {source}"


def test_the_teacher_recipe_is_the_campaign_s_options_with_no_ppo():
    """The campaign's options, its "no PPO" (`--lr 1e-8 --iterations 1`) spelled `--no-ppo` (issue 55), each round's
    fit under the capped default of `--teacher-fit-decisions` (the campaign fit on all it gathered)."""
    page = (REPO / "docs/experiments/inspector-teacher.md").read_text()
    campaign = page.split("## 2026-11-28")[1].split("```bash")[1].split("```")[0].replace("\\\n", " ")
    args = " ".join(get_recipe("teacher").arguments())
    assert args.endswith(" --no-ppo") and "--teacher-fit-decisions" not in args and "--lr" not in args
    assert args.replace(" --no-ppo", " --lr 1e-8 --iterations 1") in " ".join(campaign.split())


def test_the_teacher_recipe_s_result_is_the_run_of_its_own_command():
    """Its result was measured with the recipe as shipped: the command it names is in its source entry's commands."""
    recipe = get_recipe("teacher")
    source, _, anchor = recipe.result["source"].partition("#")
    page = (REPO / source).read_text()
    heading = next(line for line in page.splitlines() if line.startswith("## ") and
                   "-".join("".join(c for c in line[3:].lower() if c.isalnum() or c in " -").split()) == anchor)
    entry = page.split(heading)[1].split("\n## ")[0]
    blocks = re.findall(r"```bash\n(.*?)```", entry, re.S)
    commands = " ".join(" ".join(block.replace("\\\n", " ").split()) for block in blocks)
    command = " ".join(recipe.result["command"].split())
    assert command.startswith("schedrl train inspector --recipe teacher ") and command in commands, command


def test_the_rlscheduler_recipe_is_the_zoo_policy_s_command():
    manifest = json.loads((REPO / "schedrl/zoo/manifest.json").read_text())
    command = shlex.split(manifest["policies"]["rlscheduler-lublin1-s0"]["command"])
    for key, value in get_recipe("rlscheduler-2core").options:
        i = command.index(f"--{key}")
        assert command[i + 1] == str(value), key


def test_options_given_override_the_recipe_s():
    args = with_recipe(parsed("inspector", "--recipe", "teacher", "--teacher-depth", "3", "--out", "runs/x"))
    assert args.teacher_depth == 3 and args.teacher == "hindsight" and args.teacher_rounds == 40
    assert "--recipe" not in args.argv and args.argv[0] == "inspector" and args.argv[-3:] == ["3", "--out", "runs/x"]


def test_a_recipe_of_another_agent_or_none_is_one_line():
    out = run_cli("train", "rlscheduler", "--recipe", "teacher", "--out", "runs/x")
    assert out.returncode == 2 and "recipe 'teacher' is for `schedrl train inspector`, not rlscheduler" in out.stderr
    out = run_cli("train", "inspector", "--recipe", "teachr", "--out", "runs/x")
    assert out.returncode == 2 and "(did you mean teacher?)" in out.stderr and len(out.stderr.splitlines()) == 1


def test_recipes_list_and_show():
    listed = run_cli("recipes", "list")
    assert listed.returncode == 0 and "teacher" in listed.stdout and "train inspector" in listed.stdout
    assert "expands to: schedrl train inspector --teacher hindsight" in listed.stdout
    shown = run_cli("recipes", "show", "rlscheduler-2core")
    assert shown.returncode == 0, shown.stderr
    assert "expands to: schedrl train rlscheduler --num-env-runners 0" in shown.stdout
    assert "rlscheduler-lublin1-s0" in shown.stdout and "F1" in shown.stdout and "corrected" in shown.stdout
    assert "source: docs/experiments/inspector-teacher.md" in run_cli("recipes", "show", "teacher").stdout


def test_a_bad_recipe_file_names_the_key(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nversion: 1\nagent: inspector\noptions: {lr: 1e-3}\nresults: {}\n")
    with pytest.raises(RecipeError, match="mine.yaml: unknown key results"):
        read(path)
    path.write_text("name: other\nversion: 1\nagent: inspector\noptions: {lr: 1e-3}\n")
    with pytest.raises(RecipeError, match="name 'other' is not the file's name 'mine'"):
        read(path)
    path.write_text("name: mine\nversion: 1\nagent: inspector\noptions: {teacher-scenarios: [a, b]}\n")
    with pytest.raises(RecipeError, match="options.teacher-scenarios"):
        read(path)


def test_train_help_is_short_and_help_all_is_whole():
    brief = run_cli("train", "inspector", "--help")
    assert brief.returncode == 0 and len(brief.stdout.splitlines()) <= 60
    assert "--help-all" in brief.stdout and "--teacher-floor" in brief.stdout  # named, not described
    whole = run_cli("train", "inspector", "--help-all")
    assert len(whole.stdout.splitlines()) > 150 and "added to each label's weight" in whole.stdout
    assert "added to each label's weight" not in brief.stdout


@pytest.mark.integration  # trains (one tiny iteration on Ray)
def test_a_run_with_a_recipe_records_the_expanded_command(tmp_path, monkeypatch):
    """`train --recipe` trains with the recipe's options under the ones given, and the run record keeps the expanded
    command (so `--resume` needs no recipe file)."""
    monkeypatch.chdir(tmp_path)
    tiny = ["--iterations", "1", "--batch-size", "256", "--minibatch-size", "128", "--epochs", "1",
            "--envs-per-runner", "2", "--sequence-length", "32", "--filter-iterations", "1", "--eval-sequences", "1",
            "--eval-jobs", "64", "--out", "runs/r"]
    out = run_cli("train", "rlscheduler", "--recipe", "rlscheduler-2core", "--scenario", "default", *tiny)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "recipe rlscheduler-2core (version 1): --num-env-runners 0" in out.stderr
    record = json.loads((tmp_path / "runs" / "r" / "schedrl_run.json").read_text())
    expanded = record["train_args"]
    assert "--recipe" not in expanded and expanded[:3] == ["rlscheduler", "--num-env-runners", "0"]
    assert expanded[-len(tiny):] == tiny and record["settings"]["lr"] == pytest.approx(3e-4)
