"""`schedrl dtsim ...`: the discrete-time cluster of DeepRM/RLSchert (`python -m schedrl.dtsim`)."""

from __future__ import annotations

import argparse


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text, add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER, help="`fidelity [--sequences 16] [--seed 0] [--kill] ...`")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.dtsim.__main__ import main

    return main(list(args.rest))
