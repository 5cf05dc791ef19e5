"""`schedrl recipes list|show`: the named training recipes (`schedrl train AGENT --recipe NAME`)."""

from __future__ import annotations

import argparse
import json


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text + ". `schedrl train AGENT --recipe NAME` "
                              "puts a recipe's options before the ones given, which override them.")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the recipes, one line each")
    ls.add_argument("--json", action="store_true", help="name, version, agent, summary and command of each")
    ls.set_defaults(run=run_list)
    show = sub.add_parser("show", help="one recipe: the command it expands to and the result it gave, with its source")
    show.add_argument("name", metavar="NAME")
    show.set_defaults(run=run_show)
    return p


def _recipes():
    from schedrl.cli.main import UsageError
    from schedrl.training.recipe import RecipeError, recipes

    try:
        return recipes()
    except RecipeError as e:
        raise UsageError(str(e)) from None


def run_list(args: argparse.Namespace) -> int:
    found = _recipes()
    if args.json:
        print(json.dumps([{"name": r.name, "version": r.version, "agent": r.agent, "summary": r.summary,
                           "command": r.command()} for r in found.values()], indent=2))
        return 0
    width = max((len(n) for n in found), default=4)
    for recipe in found.values():
        print(f"{recipe.name:<{width}}  v{recipe.version}  train {recipe.agent}: {recipe.summary}")
        print(f"{'':<{width}}  expands to: {recipe.command()}")
    print("\n`schedrl recipes show NAME`: the result each gave, with its source")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.training.recipe import RecipeError, get_recipe

    _recipes()
    try:
        recipe = get_recipe(args.name)
        lines = recipe.result_lines()
    except RecipeError as e:
        raise UsageError(str(e)) from None
    print(f"{recipe.name} (version {recipe.version}, {recipe.path.name}): {recipe.summary}")
    print(f"expands to: {recipe.command()} [your options, which override these]")
    for line in lines:
        print(line)
    return 0
