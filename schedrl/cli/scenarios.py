"""`schedrl scenarios list|show|check`: the named setups policies are trained and judged on."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text + ". A scenario is a standard name, "
                              "a YAML file of your own (the shape `show NAME --yaml` prints), or NAME.yaml in a "
                              "directory of $SCHEDRL_SCENARIO_PATH; use it as --scenario in simulate, compare, train "
                              "and evaluate, or `scenario:` in a tune file.")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the standard scenarios (and those in $SCHEDRL_SCENARIO_PATH), one line each")
    ls.add_argument("--json", action="store_true", help="every definition as JSON, with its hash")
    ls.set_defaults(run=run_list)
    show = sub.add_parser("show", help="one scenario in full: workload, semantics, split, sequences, baselines")
    show.add_argument("scenario", metavar="NAME|FILE")
    fmt = show.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="the definition as JSON")
    fmt.add_argument("--yaml", action="store_true", help="the definition as YAML (a starting point for your own)")
    show.add_argument("--sequences", action="store_true",
                      help="also resolve the trace and print the validation and evaluation sequences' starts")
    show.set_defaults(run=run_show)
    check = sub.add_parser("check", help="re-derive each scenario's reference heuristic on its validation sequences "
                                         "(needs the traces)")
    check.add_argument("scenarios", nargs="*", metavar="NAME|FILE", help="default: every standard scenario")
    check.add_argument("--json", action="store_true")
    check.set_defaults(run=run_check)
    return p


def _scenario(text: str):
    from schedrl.cli.main import UsageError
    from schedrl.scenarios import get_scenario

    try:
        return get_scenario(text)
    except ValueError as e:
        raise UsageError(str(e)) from None


def run_list(args: argparse.Namespace) -> int:
    from schedrl.scenarios.registry import load_file, standard, user_files

    found = dict(standard())
    problems = []
    for name, path in user_files().items():
        if name not in found:
            try:
                found[name] = load_file(path, named=True)
            except Exception as e:  # one bad user file does not hide the others
                problems.append(str(e))
    if args.json:
        print(json.dumps([{**s.to_dict(), "sha256": s.sha256()} for s in found.values()], indent=2))
    else:
        rows = [(s.name, s.data_summary(), s.metric, s.reference, ",".join(s.agents) or "any") for s in found.values()]
        head = ("name", "data", "metric", "reference", "agents")
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
        for row in [head] + rows:
            print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    for line in problems:
        print(f"warning: {line}", file=sys.stderr)
    return 0


def run_show(args: argparse.Namespace) -> int:
    s = _scenario(args.scenario)
    if args.json:
        print(json.dumps({**s.to_dict(), "sha256": s.sha256()}, indent=2))
        return 0
    if args.yaml:
        import yaml

        print(f"# scenario {s.name}, definition sha256 {s.sha256()}")
        print(yaml.safe_dump(s.to_dict(), sort_keys=False, allow_unicode=True, width=100).rstrip())
        return 0
    print(s.describe())
    if args.sequences:
        from schedrl.cli.main import UsageError
        from schedrl.scenarios import scoring

        try:
            data = scoring.load(s, note=lambda line: print(f"schedrl: {line}", file=sys.stderr))
            for part in scoring.PARTS:
                seqs = scoring.sequences(s, data, part)
                note = " (overlapping windows)" if seqs.overlapping else ""
                note += f" in trace {seqs.source}" if seqs.source else ""
                print(f"{part} {s.id_kind}{note}: {', '.join(map(str, seqs.ids))}")
        except ValueError as e:
            raise UsageError(str(e)) from None
    return 0


def run_check(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.scenarios import scoring
    from schedrl.scenarios.registry import standard

    chosen = [_scenario(n) for n in args.scenarios] if args.scenarios else list(standard().values())
    out, bad = [], 0
    for s in chosen:
        try:
            scores = scoring.score(s, part="validation",
                                   progress=lambda m: print(f"schedrl: {m}", file=sys.stderr))
        except (ValueError, FileNotFoundError) as e:
            if args.scenarios:
                raise UsageError(f"{s.name}: {e}") from None
            print(f"schedrl scenarios check: {s.name}: skipped: {e}", file=sys.stderr)
            continue
        best, mean = scoring.best_baseline(scores)
        ok = best == s.reference
        bad += not ok
        means = {k: sum(v) / len(v) for k, v in scores.values().items()}
        out.append({"scenario": s.name, "reference": s.reference, "best_on_validation": best, "ok": ok,
                    "means": means})
        if not args.json:
            cells = ", ".join(f"{k} {v:,.2f}" for k, v in means.items())
            print(f"{s.name}: {'ok' if ok else 'MISMATCH'}: best on validation {best} ({mean:,.2f}); "
                  f"reference {s.reference}; {cells}")
    if args.json:
        print(json.dumps(out, indent=2))
    return 1 if bad else 0
