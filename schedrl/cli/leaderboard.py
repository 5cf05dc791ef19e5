"""`schedrl leaderboard`: every scenario's heuristics and policies on its evaluation sequences, one table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from schedrl.cli.options import apart
from schedrl.outputs import add_force

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
    add_force(p, "its output files (with --render: pages edited since schedrl wrote them)")
    apart(p, "--render", ("--out", "--plot", "--publish", "--scenarios", "--policies", "--no-entry-points",
                          "--sequences", "--seed", "--json", "--summary"),
          "--render re-renders a checkout's pages from its docs/leaderboard.json, scoring nothing and writing nothing "
          "else")
    apart(p, "--publish", ("--scenarios", "--sequences", "--seed", "--policies"),
          "--publish writes the standard board (every standard scenario on its own sequences, the project's methods)")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from schedrl.cli.main import UsageError
    from schedrl.cli.options import parse_list
    from schedrl.eval import leaderboard as lb
    from schedrl.outputs import Out, claim
    from schedrl.scenarios import get_scenario, standard

    say = lambda m: print(f"schedrl leaderboard: {m}", file=sys.stderr, flush=True)  # noqa: E731
    if args.render:
        try:
            lb.rerender(args.render, say, force=args.force)
        except ValueError as e:
            raise UsageError(str(e)) from None
        return 0
    outputs = claim("leaderboard", [o for o in (
        args.out and Out("--out", Path(args.out), "dir", writes=lb.OUT_FILES, signature=("leaderboard.json",)),
        args.plot and Out("--plot", Path(args.plot), plot=True),
        args.publish and Out("--publish", Path(args.publish), "dir", signature=(lb.PUBLISHED[0],), mark=False)) if o],
        force=args.force)
    try:
        if args.publish:
            lb.check_publish(args.publish)
            if not args.force:
                lb.check_edits(args.publish)  # before the scoring: an edit the digests already show
        scenarios = ([get_scenario(n) for n in parse_list(args.scenarios, what="scenario", option="--scenarios")]
                     if args.scenarios else list(standard().values()))
        # the committed board holds the project's methods only: no entry points with --publish
        entrants = lb.entrants(parse_list(args.policies, what="policy", option="--policies") if args.policies else (),
                               not args.no_entry_points and not args.publish)
        if args.sequences is not None and args.sequences < 1:
            raise UsageError("--sequences must be >= 1")
        result = lb.leaderboard(scenarios, entrants, sequences=args.sequences, seed=args.seed, progress=say,
                                skipped=lambda name, why: say(f"{name}: skipped: {why}"), warn=say)
        lb.deliver(result, outputs, say, args.out, args.plot, args.publish, force=args.force)
    except UsageError:
        raise
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(lb.text(result, args.json, args.summary), end="")
    return 0
