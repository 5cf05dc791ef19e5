"""Outside policies on the leaderboard are never mistaken for built-in ones.

`labelled` gives every entrant of a board (`schedrl.eval.leaderboard.Entrant`) a label no other method has: an
outside policy (`--policies module:callable`, a `schedrl.policies` entry point) whose short label would shadow a
heuristic (any case: `F1`), a scenario's baseline (`F1+EASY`), a zoo policy or another outside policy is labelled by
its source instead (`make (mypkg.rules:make)`), which contains a `:` no built-in name has; the same source given twice
is refused. `contained` runs the user's code so that a `sys.exit()` inside it is an exception like any other: the
board reports a failed row and goes on. (A pick that is not an integer job index is refused by the simulator itself,
`schedrl.sim.simulator.job_index`.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Callable


class OutsideExit(RuntimeError):
    """An outside policy called `sys.exit()` (or raised SystemExit): a failed row, not the end of the board."""


def contained(call: Callable[[], Any]) -> Any:
    """`call()`, with a SystemExit from the user's code turned into `OutsideExit` (KeyboardInterrupt still stops)."""
    try:
        return call()
    except SystemExit as e:
        raise OutsideExit(f"it called sys.exit({e.code!r})").with_traceback(e.__traceback__) from None


def reserved_labels(scenarios: Iterable[Any]) -> set[str]:
    """Labels an outside policy may not take (lowercased): every heuristic's name and every scenario's baselines."""
    from schedrl.heuristics import HEURISTICS

    names = {h.lower() for h in HEURISTICS}
    for scenario in scenarios:
        names |= {label.lower() for label in scenario.labels()}
    return names


def labelled(entrants: Iterable[Any], reserved: set[str]) -> list[Any]:
    """The entrants with labels unique among themselves and apart from `reserved` (see the module's docstring);
    ValueError (one line) when one outside source is given twice."""
    entrants = list(entrants)
    counts = Counter(e.label.lower() for e in entrants)
    taken = set(reserved) | {e.label.lower() for e in entrants if e.kind != "outside"}
    out = []
    for e in entrants:
        if e.kind == "outside" and (e.label.lower() in taken or counts[e.label.lower()] > 1):
            e = replace(e, label=f"{e.label} ({getattr(e, 'source', '') or 'outside'})")
        out.append(e)
    seen: dict[str, Any] = {}
    for e in out:
        key = e.label
        if key in seen:
            raise ValueError(f"--policies: {e.label!r} is given twice (or two methods share that label); give each "
                             "outside policy once")
        seen[key] = e
    return out
