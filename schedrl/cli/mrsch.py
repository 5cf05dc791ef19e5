"""`schedrl mrsch ...`: MRSch tools (`python -m schedrl.agents.mrsch.goals`)."""

from __future__ import annotations

import argparse


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text, add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER, help="`goals CKPT [--augments S3,S5] [--plot PNG] ...`")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.agents.mrsch.goals import main

    return main(list(args.rest))
