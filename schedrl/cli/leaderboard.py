"""`schedrl leaderboard`: every scenario's heuristics and policies on its evaluation sequences, one table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from schedrl.outputs import add_force

OUT_FILES = ("leaderboard.json", "leaderboard.md", "leaderboard.png", "leaderboard_bars.png")
"""What `--out DIR` writes."""

def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text + ". Each method is paired with the "
                              "scenario's reference heuristic (fixed in its definition, chosen on validation "
                              "sequences): difference, 95% interval, better/worse counts, minimum detectable "
                              "effect, verdict (and, for policies, corrected by Benjamini-Hochberg over the policies "
                              "x scenarios matrix). Every zoo policy and tuned rule runs on every scenario it can "
                              "(trained here or transfer); the others are listed with why.")
    p.add_argument("--scenarios", metavar="LIST", help="comma-separated scenario names or files (default: every "
                                                       "standard scenario)")
    p.add_argument("--policies", metavar="LIST", default=None,
                   help="outside policies, comma-separated MODULE:CALLABLE, each make(scenario) -> policy or None "
                        "(also every entry point of the group schedrl.policies)")
    p.add_argument("--no-entry-points", action="store_true", help="leave out the schedrl.policies entry points")
    p.add_argument("--sequences", type=int, default=None,
                   help="redraw this many evaluation sequences per scenario (default: each scenario's own)")
    p.add_argument("--seed", type=int, default=None, help="redraw the evaluation sequences with this seed")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="the full result as JSON")
    fmt.add_argument("--summary", action="store_true", help="one line per scenario (the README's table)")
    p.add_argument("--out", metavar="DIR", help="also write leaderboard.json, leaderboard.md, leaderboard.png (the "
                                                "policies x scenarios matrix) and leaderboard_bars.png there")
    p.add_argument("--plot", metavar="PNG", help="the figure: each scenario's methods relative to its reference")
    p.add_argument("--publish", metavar="REPO", help="write the committed results into a checkout: "
                   "docs/leaderboard.json, docs/leaderboard.md, docs/leaderboard.png (the matrix), "
                   "docs/leaderboard_bars.png, docs/zoo.md and the README's summary "
                   "(every standard scenario, their own sequences: no --scenarios, --sequences, --seed or --policies)")
    p.add_argument("--render", metavar="REPO", help="re-render the committed pages of a checkout (docs/leaderboard.md, "
                   "both figures, docs/zoo.md, the README's summary) from its docs/leaderboard.json without scoring "
                   "anything: after a change to the zoo's manifest or to the rendering, not to what is scored")
    add_force(p)
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.cli.options import parse_list
    from schedrl.eval import leaderboard as lb
    from schedrl.outputs import Out, claim
    from schedrl.scenarios import get_scenario, standard

    if args.render:
        root = Path(args.render)
        try:
            result = lb.corrected(json.loads((root / lb.PUBLISHED[0]).read_text()))
            for path in lb.publish(result, root):
                print(f"schedrl leaderboard: wrote {path}", file=sys.stderr)
        except (OSError, ValueError, KeyError) as e:
            raise UsageError(f"--render {root}: {e}") from None
        return 0
    if args.publish and (args.scenarios or args.sequences or args.seed is not None or args.policies):
        raise UsageError("--publish writes the standard board: drop --scenarios, --sequences, --seed and --policies")
    outputs = claim("leaderboard", [o for o in (
        args.out and Out("--out", Path(args.out), "dir", writes=OUT_FILES, signature=("leaderboard.json",)),
        args.plot and Out("--plot", Path(args.plot), plot=True),
        args.publish and Out("--publish", Path(args.publish), "dir", signature=(lb.PUBLISHED[0],), mark=False)) if o],
        force=args.force)
    if args.publish:
        try:
            lb.check_publish(args.publish)
        except ValueError as e:
            raise UsageError(str(e)) from None
    try:
        scenarios = ([get_scenario(n) for n in parse_list(args.scenarios, what="scenario", option="--scenarios")]
                     if args.scenarios else list(standard().values()))
        entrants = [lb.outside(spec) for spec in parse_list(args.policies, what="policy", option="--policies")] \
            if args.policies else []
    except ValueError as e:
        raise UsageError(str(e)) from None
    entrants = lb.zoo_entrants() + entrants
    if not args.no_entry_points and not args.publish:  # the committed board holds the project's methods only
        entrants += lb.entry_points()
    for flag in ("sequences",):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise UsageError(f"--{flag} must be >= 1")
    say = lambda m: print(f"schedrl leaderboard: {m}", file=sys.stderr, flush=True)  # noqa: E731
    try:
        result = lb.leaderboard(scenarios, entrants, sequences=args.sequences, seed=args.seed, progress=say,
                                skipped=lambda name, why: say(f"{name}: skipped: {why}"),
                                warn=lambda line: print(f"schedrl leaderboard: {line}", file=sys.stderr, flush=True))
    except ValueError as e:
        raise UsageError(str(e)) from None
    for b in result["scenarios"]:
        for f in b["failed"]:
            say(f"{b['scenario']}: {f['method']} failed: {f['error']}")
    outputs.prepare()
    if args.out:
        out = Path(args.out)
        outputs.write(out / "leaderboard.json", json.dumps(result, indent=1) + "\n")
        outputs.write(out / "leaderboard.md", lb.to_markdown(result))
        lb.plot_matrix(result, out / "leaderboard.png")
        outputs.record(out / "leaderboard.png")
        lb.plot(result, out / "leaderboard_bars.png")
        outputs.record(out / "leaderboard_bars.png")
        say(f"wrote {out / 'leaderboard.json'}, leaderboard.md, leaderboard.png (the policies x scenarios matrix) and "
            f"leaderboard_bars.png")
    if args.plot:
        lb.plot(result, args.plot)
        outputs.record(args.plot)
    if args.publish:
        if result["skipped"]:
            raise UsageError(f"--publish needs every scenario's data; skipped: "
                             f"{', '.join(s['scenario'] for s in result['skipped'])}")
        try:
            for path in lb.publish(result, args.publish):
                say(f"wrote {path}")
        except ValueError as e:
            raise UsageError(str(e)) from None
    print(json.dumps(result, indent=1) if args.json else lb.summary_markdown(result) if args.summary
          else lb.to_markdown(result), end="" if not args.json else "\n")
    return 0
