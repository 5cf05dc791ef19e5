"""`schedrl zoo list|show`: the trained policies shipped with schedrl (use one as `zoo:NAME`)."""

from __future__ import annotations

import argparse
import json


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text + ". A zoo policy is `zoo:NAME` wherever a "
                              "checkpoint is accepted (evaluate, compare --policies, simulate --policy); it loads "
                              "without ray. `schedrl export CKPT --out DIR --add` adds one.")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the zoo's policies, one line each")
    ls.add_argument("--json", action="store_true", help="the manifest's entries as JSON")
    ls.set_defaults(run=run_list)
    show = sub.add_parser("show", help="one policy's model card")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--json", action="store_true", help="its policy.json (name, card, architecture, weights) without the run record")
    show.set_defaults(run=run_show)
    return p


def _entries():
    from schedrl.cli.main import UsageError
    from schedrl.zoo import manifest
    from schedrl.zoo.store import ZooError

    try:
        return manifest.entries()
    except ZooError as e:
        raise UsageError(str(e)) from None


def run_list(args: argparse.Namespace) -> int:
    from schedrl.zoo import manifest
    from schedrl.zoo.card import NONE

    found = _entries()
    if args.json:
        print(json.dumps({e.name: e.fields for e in found}, indent=2))
        return 0
    if not found:
        print(f"the zoo is empty ({manifest.manifest_path()}); `schedrl export CKPT --out DIR --add` adds a policy")
        return 0
    head = ("name", "agent", "scenario", "trace", "machine", "validation", "weights")
    rows = []
    for e in found:
        f = e.fields
        scenario = f["scenario"] if isinstance(f["scenario"], str) else f["scenario"]["name"]
        machine = ", ".join(f"{k} {v:g}" for k, v in f["machine"].items())
        rows.append((e.name, f["agent"], scenario, f["trace"]["name"], machine,
                     NONE if f["validation_score"] is None else f"{f['metric']} {f['validation_score']:.4g}",
                     f"{f['weights']['bytes'] / 1024:.1f} KB {f['weights']['precision']}"))
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for row in [head] + rows:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    return 0


def run_show(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.zoo import manifest
    from schedrl.zoo.card import markdown
    from schedrl.zoo.store import ZooError

    try:
        exported = manifest.find(args.name)
    except ZooError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps({k: v for k, v in exported.data.items() if k != "record"}, indent=2))
    else:
        print(markdown(exported))
        fields = next(e.fields for e in manifest.entries() if e.name == args.name)
        if fields.get("seeds"):
            print("\n".join(["## Seeds", ""] + manifest.seed_rows(fields)))
    return 0
