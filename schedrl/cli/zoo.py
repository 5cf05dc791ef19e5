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
    rule = sub.add_parser("add-rule", help="keep a tuned rule (`schedrl tuned fit --scenario NAME --out FILE`) in the "
                          "zoo, so `zoo:NAME` and the leaderboard find it")
    rule.add_argument("file", metavar="FILE", help="the rule's JSON file")
    rule.add_argument("--name", required=True, help="its zoo name (lowercase letters, digits, '.', '_', '-')")
    rule.add_argument("--command", dest="fit_command", help="the command that fitted it, for the manifest (default: `schedrl tuned fit "
                      "--scenario S --budget B --seed N --out FILE` from what the file records)")
    rule.add_argument("--replace", action="store_true", help="replace a tuned rule of the same name")
    rule.set_defaults(run=run_add_rule)
    conv = sub.add_parser("convert", help="rewrite exported policies stored as weights.pt (read until schedrl "
                          "0.2.0) as weights.safetensors, the tensors bit-identical")
    conv.add_argument("directories", nargs="*", metavar="DIR",
                      help="exported policy directories (default: every policy of the zoo, its manifest updated)")
    conv.set_defaults(run=run_convert)
    return p


def run_convert(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.zoo import manifest
    from schedrl.zoo.store import ZooError, convert

    try:
        if not args.directories:
            done = manifest.convert_zoo(log=print)
            print(f"{len(done)} zoo policies converted to safetensors ({manifest.manifest_path()} updated)")
            return 0
        for directory in args.directories:
            exported, converted = convert(directory)
            print(f"{exported.directory}: " + (f"converted to {exported.weights_file.name}, tensors bit-identical"
                                                if converted else f"already {exported.weights_file.name}"))
    except (ZooError, OSError) as e:
        raise UsageError(str(e)) from None
    return 0


def run_add_rule(args: argparse.Namespace) -> int:
    from pathlib import Path

    from schedrl.cli.main import UsageError
    from schedrl.bounded import read_bounded
    from schedrl.zoo import manifest
    from schedrl.zoo.store import ZooError

    command = args.fit_command
    if command is None:
        try:
            record = json.loads(read_bounded(Path(args.file), "a tuned-rule file"))
            budget = float(record["budget_s"])
            command = (f"schedrl tuned fit --scenario {record['scenario']['name']} --budget "
                       f"{f'{budget / 60:g}m' if budget % 60 == 0 else f'{budget:g}s'} --seed {record['seed']} "
                       f"--out {Path(args.file).name}")
        except (OSError, ValueError, KeyError, TypeError):
            command = None  # add_rule says what is wrong with the file
    try:
        entry = manifest.add_rule(args.file, args.name, command or "unknown", replace=args.replace)
    except ZooError as e:
        raise UsageError(str(e)) from None
    print(f"added the tuned rule to the zoo as zoo:{args.name} ({entry.root / entry.fields['file']}, "
          f"{entry.fields['bytes']:,} bytes); fitted by: {entry.fields['command']}")
    return 0


def _entries():
    from schedrl.cli.main import UsageError
    from schedrl.zoo import manifest
    from schedrl.zoo.store import ZooError

    try:
        return manifest.entries(), manifest.rules()
    except ZooError as e:
        raise UsageError(str(e)) from None


def readable(value: float) -> str:
    """A score as people read it: 34,316.70, 219.21, 0.9823 (never 3.432e+04)."""
    if value != value:  # nan
        return "-"
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4f}"


def run_list(args: argparse.Namespace) -> int:
    from schedrl.zoo import manifest
    from schedrl.zoo.card import NONE

    found, rules = _entries()
    if args.json:
        print(json.dumps({e.name: e.fields for e in found + rules}, indent=2))
        return 0
    if not found and not rules:
        print(f"the zoo is empty ({manifest.manifest_path()}); `schedrl export CKPT --out DIR --add` adds a policy")
        return 0
    head = ("name", "agent", "scenario", "trace", "machine", "validation", "weights")
    rows = []
    for e in found:
        f = e.fields
        scenario = f["scenario"] if isinstance(f["scenario"], str) else f["scenario"]["name"]
        machine = ", ".join(f"{k} {v:g}" for k, v in f["machine"].items())
        rows.append((e.name, f["agent"], scenario, f["trace"]["name"], machine,
                     NONE if f["validation_score"] is None else f"{f['metric']} {readable(f['validation_score'])}",
                     f"{f['weights']['bytes'] / 1024:.1f} KB {f['weights']['precision']}"))
    for e in rules:  # tuned rules (`schedrl tuned fit --scenario`): a JSON file of coefficients
        f = e.fields
        rows.append((e.name, "tuned", f["scenario"]["name"], f["trace"]["name"], NONE,
                     NONE if f["validation_score"] is None else f"{f['metric']} {readable(f['validation_score'])}",
                     f"{f['bytes'] / 1024:.1f} KB json"))
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
        rule = manifest.rule_file(args.name)
        if rule is not None:
            return _show_rule(args, rule)
        exported = manifest.find(args.name)
    except ZooError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps({k: v for k, v in exported.data.items() if k != "record"}, indent=2))
    else:
        print(markdown(exported))
        _print_distilled(exported)
        fields = next(e.fields for e in manifest.entries() if e.name == args.name)
        if fields.get("seeds"):
            print("\n".join(["## Seeds", ""] + manifest.seed_rows(fields)))
    return 0


def _print_distilled(exported) -> None:
    """A distilled policy's readable model (`schedrl distill`), where its agent makes one (`Distillable`)."""
    from schedrl.agents import get_agent
    from schedrl.agents.base import Distillable
    from schedrl.cli.main import UsageError

    agent = get_agent(exported.record["agent"])
    if isinstance(agent, Distillable):
        try:
            text = agent.distilled_text(exported)
        except ValueError as e:
            raise UsageError(str(e)) from None
        if text:
            print(text)


def _show_rule(args: argparse.Namespace, path) -> int:
    """A tuned rule of the zoo: its file as JSON (--json), else what it is, how it was fitted and its coefficients."""
    from schedrl.heuristics.tuned import load_rule
    from schedrl.zoo import manifest

    fields = next(e.fields for e in manifest.rules() if e.name == args.name)
    if args.json:
        print(path.read_text().rstrip())
        return 0
    rule = load_rule(path)
    validation = rule.record.get("validation") or {}
    lines = [f"# {args.name}", "",
             f"A priority rule linear in the jobs' log features (`schedrl tuned fit`), fitted on scenario "
             f"`{fields['scenario']['name']}` (trace {fields['trace']['name']}, metric {fields['metric']}).", "",
             f"- command: `{fields['command']}`", f"- seed: {fields['seed']}",
             f"- budget: {fields['budget']['seconds']:,.0f} s" if fields["budget"].get("seconds") else "- budget: -",
             f"- validation: {fields['metric']} {readable(validation.get('score', float('nan')))} "
             f"(F1 {readable(validation.get('f1', float('nan')))}) on {len(validation.get('starts', []))} sequences of "
             f"{validation.get('jobs', '?')} jobs",
             f"- file: {path} ({fields['bytes']:,} bytes, sha256 {fields['sha256'][:12]}...)", "",
             "| term | weight | scale |", "|---|--:|--:|"]
    record = rule.to_dict()
    for term, weight, scale in zip(record["features"], record["weights"], record["normalisation"]["scales"]):
        lines.append(f"| `{term}` | {weight:+.4f} | {scale:g} |")
    print("\n".join(lines))
    return 0
