"""A subcommand whose arguments all go to another module's `main(argv)` (`schedrl.cli.main.FORWARDED`): listed in
`schedrl --help`; `schedrl NAME ...` itself is dispatched by `schedrl.cli.main.main` before any parsing here."""

from __future__ import annotations

import argparse
import importlib


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text, add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER, help=f"`schedrl {name} --help` lists them")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import FORWARDED

    return int(importlib.import_module(FORWARDED[args.command]).main(list(args.rest)) or 0)
