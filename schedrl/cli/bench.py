"""`schedrl bench`: the checkout's benchmarks (`benchmarks/run_all.py`), which print their numbers."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

RUN_ALL = Path(__file__).resolve().parents[2] / "benchmarks" / "run_all.py"


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="load, sim, policy, scaling, agents, dtsim, train (default: all)")
    p.add_argument("--quick", action="store_true", help="tiny budgets: check that each benchmark runs")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError

    if not RUN_ALL.is_file():
        raise UsageError(f"{RUN_ALL} not found: the benchmarks live in a source checkout "
                         "(git clone, then pip install -e .)")
    return subprocess.call([sys.executable, str(RUN_ALL), *args.names, *(["--quick"] if args.quick else [])])
