"""`schedrl export CKPT --out DIR`: a checkpoint of any agent as an exported policy (tensors only, no ray to load)."""

from __future__ import annotations

import argparse

from schedrl.cli.options import needs
from schedrl.outputs import add_force


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    from schedrl.agents.checkpoint import CHECK_JOBS

    p = subparsers.add_parser(name, help=help_text, description=help_text + ". The directory holds weights.safetensors (the "
                              "network's tensors, no pickle), policy.json (run record, "
                              "architecture, card, the weights' sha256) and README.md (the model card). The export "
                              "must make the checkpoint's decisions on whole episodes (the run's validation sequences "
                              "and two more, see --check-jobs), or it fails.")
    p.add_argument("checkpoint", metavar="CKPT", help="checkpoint directory written by `schedrl train` or `schedrl tune`")
    p.add_argument("--out", required=True, metavar="DIR", help="directory to write the exported policy to")
    p.add_argument("--name", help="the policy's name (default: the --out directory's name)")
    p.add_argument("--precision", choices=("auto", "fp32", "fp16"), default="auto",
                   help="weights' precision: auto (default) stores fp16 when it changes no decision on those "
                        "episodes, else fp32")
    p.add_argument("--check-jobs", type=int, default=CHECK_JOBS, metavar="N",
                   help="jobs of each of the two extra episodes the export is checked on, beside the run's validation "
                        f"sequences (default {CHECK_JOBS}; event-simulator agents)")
    p.add_argument("--add", action="store_true",
                   help="also copy it into the zoo (schedrl/zoo/policies/NAME, or $SCHEDRL_ZOO_DIR) and record it in "
                        "its manifest.json, so `zoo:NAME` finds it")
    p.add_argument("--replace", action="store_true", help="with --add: replace a zoo policy of the same name")
    add_force(p, "--out's files")
    needs(p, "--replace", "--add", "it replaces a zoo policy of the same name when adding")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from schedrl.agents.checkpoint import CheckpointError, export_policy
    from schedrl.cli.main import UsageError
    from schedrl.outputs import In, Out, writing
    from schedrl.zoo import manifest
    from schedrl.zoo.store import CARD_FILE, POLICY_FILE, WEIGHTS_FILE, ZooError

    name = args.name or Path(args.out).expanduser().resolve().name
    if args.check_jobs < 2:
        raise UsageError(f"--check-jobs must be >= 2, got {args.check_jobs}")
    if args.add and not manifest.NAME_PATTERN.fullmatch(name):
        raise UsageError(f"--name {name!r}: a zoo name is lowercase letters, digits, '.', '_' and '-'")
    if args.add:  # before the export's work: a name the zoo has (a tuned rule's, or a policy's without --replace)
        try:
            manifest.check_new(name, replace=args.replace)
        except ZooError as e:
            raise UsageError(str(e)) from None
    out = Out("--out", Path(args.out), "dir", writes=(POLICY_FILE, WEIGHTS_FILE, CARD_FILE), signature=(POLICY_FILE,))
    try:
        with writing("export", [out], [In("CKPT", Path(args.checkpoint))], force=args.force):
            exported = export_policy(args.checkpoint, args.out, name, args.precision, args.check_jobs,
                                     log=lambda text: print(f"schedrl {text}", file=sys.stderr, flush=True))
        weights = exported.data["weights"]
        print(f"exported {name} to {exported.directory}: {weights['file']} {weights['bytes']:,} bytes "
              f"({weights['parameters']:,} parameters, {weights['precision']}), validation "
              f"{exported.card['validation']['metric']} {exported.card['validation']['score']:.4g}")
        if args.add:
            entry = manifest.add(exported.directory, name, replace=args.replace)
            print(f"added to the zoo as zoo:{name} ({entry.directory})")
    except (CheckpointError, ZooError, ValueError) as e:
        raise UsageError(str(e)) from None
    return 0
