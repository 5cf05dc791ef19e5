"""`schedrl distill POLICY`: a trained inspector's decisions as a decision tree an admin can read (and a zoo policy)."""

from __future__ import annotations

import argparse

from schedrl.outputs import add_force


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text + ". DAgger on the policy's training zone: "
                              "the policy labels the decisions (accept or reject its base rule's proposal) at the "
                              "states the tree visits, and a tree of at most --depth levels is fitted (CART, Gini). "
                              "Prints the tree as if/else lines in the features' units; with --out, exports it as a "
                              "policy (policy.json holds the readable tree, weights.safetensors its numbers), which "
                              "runs wherever the policy does: `zoo:NAME` with --add.")
    p.add_argument("policy", metavar="POLICY", help="the inspector to distil: zoo:NAME, an exported policy's directory "
                                                    "or a checkpoint")
    p.add_argument("--depth", type=int, default=6, help="the tree's largest depth (default 6)")
    p.add_argument("--rounds", type=int, default=4, help="DAgger rounds: 1 labels the policy's own states only "
                                                         "(default 4)")
    p.add_argument("--windows", type=int, default=8, help="training windows scheduled per round (default 8)")
    p.add_argument("--jobs", type=int, default=None, help="jobs per window (default: the policy's training episodes' "
                                                          "length)")
    p.add_argument("--seed", type=int, default=0, help="seed of the windows' draw (default 0)")
    p.add_argument("--out", metavar="DIR", help="export the tree as a policy to DIR")
    p.add_argument("--name", help="the exported policy's name (default: the --out directory's name)")
    p.add_argument("--add", action="store_true", help="with --out: also add it to the zoo as zoo:NAME")
    p.add_argument("--replace", action="store_true", help="with --add: replace a zoo policy of the same name")
    add_force(p, "--out's files")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from schedrl.agents.checkpoint import CheckpointError
    from schedrl.cli.main import UsageError
    from schedrl.outputs import In, Out, writing
    from schedrl.zoo import manifest
    from schedrl.zoo.store import CARD_FILE, POLICY_FILE, WEIGHTS_FILE, ZooError

    from schedrl.agents.inspector.distill import run_cli
    from schedrl.agents.inspector.tree import TreeError

    if (args.add or args.name or args.replace) and not args.out:
        raise UsageError("--add, --name and --replace need --out DIR (where the tree is exported)")
    if args.replace and not args.add:
        raise UsageError("--replace applies with --add only")
    if args.jobs is not None and args.jobs < 2:
        raise UsageError(f"--jobs must be >= 2; got {args.jobs}")
    name = args.name or (Path(args.out).expanduser().resolve().name if args.out else None)
    try:
        if args.add:
            if not manifest.NAME_PATTERN.fullmatch(name):
                raise UsageError(f"--name {name!r}: a zoo name is lowercase letters, digits, '.', '_' and '-'")
            manifest.check_new(name, replace=args.replace)
        call = lambda: run_cli(args.policy, args.depth, args.rounds, args.windows, args.jobs,  # noqa: E731
                               args.seed, args.out, name, args.add, args.replace, args.argv)
        if not args.out:
            return call()
        out = Out("--out", Path(args.out), "dir", writes=(POLICY_FILE, WEIGHTS_FILE, CARD_FILE),
                  signature=(POLICY_FILE,))
        inputs = [In("POLICY", Path(args.policy))] if not args.policy.startswith("zoo:") else []
        with writing("distill", [out], inputs, force=args.force):
            return call()
    except (TreeError, CheckpointError, ZooError) as e:
        raise UsageError(str(e)) from None
