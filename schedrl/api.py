"""schedrl from Python: `schedrl.load_policy` and `schedrl.compare` (docs/guides/python-api.md).

`import schedrl` imports neither this module's dependencies nor torch nor ray: `schedrl.load_policy` and
`schedrl.compare` are looked up on first use (`schedrl.__getattr__`).
"""

from __future__ import annotations

import argparse

from schedrl.eval.loaded import Policy, load_policy

OUTPUTS = frozenset({"json", "csv", "markdown", "plot", "force", "help"})
"""`schedrl compare`'s options about printing and files: from Python the table is the value returned."""


def _compare_parser() -> argparse.ArgumentParser:
    """`schedrl compare`'s own parser, raising ValueError where the command would print its error line."""
    from schedrl.cli.main import build_parser

    parser = build_parser("compare")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["compare"]

    def error(message: str):
        raise ValueError(f"schedrl.compare: {message}")

    sub.error = error
    return sub


def compare(*, policies=None, **options):
    """`schedrl compare` from Python: the same table (a `schedrl.eval.compare.Comparison`: `to_text()`,
    `to_markdown()`, `to_dict()`, `mean(backfill, policy)`, `comparisons()`), computed by the command's own code.

    Keyword arguments are the command's options with `_` for `-` (`trace="default"`, `scenario="lublin1"`,
    `sequences=10`, `jobs=1024`, `seed=1`, `backfill="none"`, `metric="bsld"`, `no_kill=True`, ...): unset ones take
    the command's defaults, and a scenario's values give way to the ones given, as on the command line. `policies`
    is a list of names (`f1`, `zoo:NAME`, `tuned:FILE`, `checkpoint:PATH`) and/or objects with `pick(sim)`
    (`schedrl.load_policy`'s, your own), or a comma-separated string. A bad option or value is a ValueError."""
    from schedrl.cli.compare import table
    from schedrl.cli.main import check_integers, explicit_dests, refuse_empty
    from schedrl.eval.compare import policy_names

    parser = _compare_parser()
    dests = {a.dest: a for a in parser._actions if a.option_strings and a.dest not in OUTPUTS}
    unknown = sorted(set(options) - set(dests))
    if unknown:
        import difflib

        hints = [f"{k} (did you mean {close[0]}?)" if (close := difflib.get_close_matches(k, dests, n=1)) else k
                 for k in unknown]
        raise TypeError(f"schedrl.compare: unknown option {', '.join(hints)}; the options: {', '.join(sorted(dests))}")
    argv = []
    for key, value in options.items():
        flag = dests[key].option_strings[-1]
        if isinstance(dests[key], (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            argv += [flag] if value else []
        elif value is not None:
            argv += [flag, ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)]
    objects = None
    if policies is not None:
        listed = [p.strip() for p in policies.split(",")] if isinstance(policies, str) else list(policies)
        objects = listed if any(not isinstance(p, str) for p in listed) else None
        argv += ["--policies", ",".join(policy_names(listed))]
    args = parser.parse_args(argv)
    args.command, args.argv = "compare", argv
    args.explicit = explicit_dests(parser, argv)
    args.json = args.csv = args.markdown = False
    args.plot = None
    args.policy_objects = objects
    check_integers(parser, args, args.explicit)
    refuse_empty(parser, args, args.explicit)
    return table(args)


__all__ = ["Policy", "compare", "load_policy"]
