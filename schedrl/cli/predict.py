"""`schedrl predict train|eval`: the SWF remaining-runtime predictor (`python -m schedrl.predict`)."""

from __future__ import annotations

import argparse


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text, add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER, help="`train --trace NAME --out FILE` or `eval --model FILE`")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.predict.__main__ import main

    return main(list(args.rest))
