"""`schedrl select RUN_DIR`: choose a run's checkpoint on validation sequences, optionally evaluate it."""

from __future__ import annotations

import argparse


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("run_dir", metavar="RUN_DIR", help="the --out directory of a `schedrl train` run")
    p.add_argument("--sequences", type=int, default=10,
                   help="validation sequences (default 10; more cost time and choose less by luck)")
    p.add_argument("--jobs", type=int, default=1024,
                   help="jobs per validation sequence of event-simulator agents (default 1024; rlschert and deeprm "
                        "keep the run's sequence length)")
    p.add_argument("--seed", type=int, default=30_000,
                   help="seed of the validation starts or sequence seeds (default 30000; training validates on "
                        "10000+, evaluates on 20000+)")
    p.add_argument("--every", type=int, default=1, metavar="K", help="score every K-th checkpoint and the last (default 1)")
    p.add_argument("--evaluate", action="store_true",
                   help="then compare the chosen checkpoint with the heuristics on the run's evaluation sequences")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from schedrl.cli.main import UsageError
    from schedrl.eval.select import SELECTION_FILE, select_checkpoint

    try:
        selection = select_checkpoint(args.run_dir, args.sequences, args.jobs, args.seed, args.every,
                                      log=lambda text: print(text, file=sys.stderr, flush=True))
    except ValueError as e:
        raise UsageError(str(e)) from None
    best = selection.best
    print(f"best checkpoint by validation {selection.metric} ({selection.scores[best]:.2f}): {best}")
    print(f"scores written to {Path(args.run_dir) / SELECTION_FILE}")
    if args.evaluate:
        evaluation = Path(args.run_dir) / "evaluation.json"
        if not evaluation.is_file():
            raise UsageError(f"{evaluation} not found: --evaluate reuses the evaluation sequences of a finished run")
        held_out = json.loads(evaluation.read_text())
        from schedrl.cli.main import main

        return main(["evaluate", best, "--starts", ",".join(map(str, held_out["starts"])),
                     "--jobs", str(held_out["jobs"])])
    return 0
