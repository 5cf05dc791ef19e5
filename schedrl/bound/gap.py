"""The share of the reference-to-optimum gap a method closes, where the bound says where the optimum is.

On a window set, the reference (the scenario's best heuristic on validation) has mean R, a method mean M, and the
offline bound's two sides mean U (the best schedules found) and L (the proven lower bounds). The optimum's mean lies
in [L, U]. A method's share is (R - M) / (R - U): 0 at the reference, 1 at the best schedule found, negative where it
is worse than the reference. Measured against U, not the unknown optimum, the share is exact only where U is close to
it: it is published only where the bound's gap (U - L) / U is at most `GAP_CLOSED` (10%) on that window set; elsewhere
the row is "open" and gives both sides. (Both metrics the bound solves, bsld and wait, are lower-better.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

GAP_CLOSED = 0.10
"""Shares are published only where (best found - lower bound) / best found is at most this (issue 56)."""


def share(reference: float, value: float, optimum: float) -> float | None:
    """(reference - value) / (reference - optimum): the share of the reference's distance to the optimum that `value`
    closes; None where the reference is the optimum (nothing to close)."""
    room = reference - optimum
    return None if room <= 0 else (reference - value) / room


def gap_shares(upper: float, lower: float, reference: float | None, means: Mapping[str, float],
               threshold: float = GAP_CLOSED) -> dict[str, Any]:
    """Each method's share of the gap (`share` against `upper`), published where the bound is closed, else None with
    status `open` (both sides given). `means`: label -> the method's mean on the bound's window set."""
    gap = (upper - lower) / upper if upper > 0 else 0.0
    closed = gap <= threshold
    methods = {}
    for label, value in means.items():
        s = share(reference, value, upper) if (closed and reference is not None) else None
        methods[label] = {"value": float(value), "share": s,
                          "shown": None if s is None else (f"{100 * s:.1f}%")}
    return {"status": "closed" if closed else "open", "upper": float(upper), "lower": float(lower), "gap": gap,
            "reference": reference, "methods": methods}


def shares(result: Mapping[str, Any], threshold: float = GAP_CLOSED) -> dict[str, Any]:
    """`gap_shares` of one `schedrl bound` result (a scenario's entry in its JSON): its methods' means on its windows,
    its reference's among them."""
    means = result.get("methods") or {}
    reference = means.get(result.get("reference")) if result.get("reference") else None
    s = result["summary"]
    return {"reference_label": result.get("reference"), **gap_shares(s["upper"], s["lower"], reference, means,
                                                                     threshold)}


def read_bounds(path: str | Path) -> dict[str, dict[str, Any]]:
    """scenario name -> its entry of a `schedrl bound --out` file (docs/bounds.json)."""
    entries = json.loads(Path(path).read_text())
    return {e["name"]: e for e in entries}


def board_shares(bounds: Mapping[str, Mapping[str, Any]], scenario: str, reference: float,
                 means: Mapping[str, float]) -> dict[str, Any] | None:
    """For the leaderboard: the shares of `means` (label -> mean on the scenario's evaluation windows, as the board
    scores them) against the scenario's committed bound, or None where it has none or the bound was computed on
    other windows (a subsample, or cut to fewer jobs)."""
    entry = bounds.get(scenario)
    if entry is None or entry.get("part") != "evaluation" or entry.get("sequences", {}).get("subsample"):
        return None
    s = entry["summary"]
    return gap_shares(s["upper"], s["lower"], reference, means)


BOUNDS_FILE = Path(__file__).resolve().parents[2] / "docs" / "bounds.json"
"""The committed bounds of the standard scenarios (`schedrl bound ... --out docs/bounds.json`, docs/reference/bound.md);
absent outside a source checkout."""


def committed_floor(scenario, reference: float, means: Mapping[str, float], starts=None,
                    path: str | Path = BOUNDS_FILE, per_window: Mapping[str, list[float]] | None = None,
                    reference_label: str | None = None) -> dict[str, Any] | None:
    """The leaderboard's floor for `scenario`: `board_shares` against the committed bound, where one exists for this
    very definition (its sha256) on the same windows (`starts`, the board's); None elsewhere. Where the window set is
    open, `per_window` (label -> the method's value on each window, the board's) and `reference_label` add `subset`:
    the shares on the windows within 10% alone (`closed_windows`), where there are any."""
    path = Path(path)
    if not path.is_file():
        return None
    entry = read_bounds(path).get(scenario.name)
    if entry is None or entry.get("sha256") != scenario.sha256():
        return None
    if starts is not None and [int(s) for s in starts] != [w["start"] for w in entry["windows"]]:
        return None
    floor = board_shares({scenario.name: entry}, scenario.name, reference, means)
    if floor is not None and floor["status"] == "open" and per_window and reference_label is not None:
        subset = closed_windows(entry, per_window, reference_label)
        if subset["windows"]:
            floor["subset"] = subset
    return floor


def optimum_line(floor: Mapping[str, Any]) -> str:
    """The leaderboard's line for a scenario's `committed_floor`: both sides, and the shares where the bound is
    closed."""
    head = (f"Offline optimum (`schedrl bound`, docs/bounds.json): between {floor['lower']:,.4g} and "
            f"{floor['upper']:,.4g} (gap {100 * floor['gap']:.1f}%)")
    if floor["status"] == "open":
        line = head + "; open at 10%: no method's share of the gap to it is published."
        sub = floor.get("subset")
        if sub:
            cells = [f"{label} {row['shown']}" for label, row in sub["methods"].items() if row["shown"] is not None]
            line += (f" On the {sub['windows']} of its {sub['of']} windows whose own gap is within 10% alone (the "
                     f"bound chooses them: they lean to the lighter windows, so this says nothing of the others): "
                     f"between {sub['lower']:,.4g} and {sub['upper']:,.4g} (gap {100 * sub['gap']:.1f}%); share of "
                     f"the reference's gap to it closed there: " + ", ".join(cells) + ".")
        return line
    cells = [f"{label} {row['shown']}" for label, row in floor["methods"].items() if row["shown"] is not None]
    return head + "; share of the reference's gap to it closed: " + ", ".join(cells) + "."


def _method(means: Mapping[str, float], rule: str) -> str | None:
    """The label of `rule` among a bound's methods (`F1`, `F1+EASY`), or None."""
    return next((label for label in means if label.split("+")[0].upper() == rule.upper()), None)


def floor_table(entries, rules=("F1", "SJF")) -> str:
    """The committed bounds as the markdown table of docs/experiments/bound.md: per scenario its windows, how many were
    solved or closed, the mean reference, best found and proven lower bound (and by how much it beats the trivial
    one), the gap, the seconds per window, and the share of the gap `rules` close (or "open" with both sides)."""
    head = ("| scenario | metric | windows (jobs) | solved / within 10% | reference | best found | lower bound "
            "(over trivial) | gap | s per window | " + " | ".join(f"{r} closes" for r in rules) + " |")
    lines = [head, "|" + "---|" * (9 + len(rules))]
    for e in entries:
        s, means = e["summary"], e.get("methods") or {}
        t = shares(e)
        ref = means.get(e.get("reference")) if e.get("reference") else None
        cells = []
        for rule in rules:
            label = _method(means, rule)
            if label is None:
                cells.append("-")
            elif t["status"] == "open":
                cells.append("open")
            else:
                cells.append(t["methods"][label]["shown"] or "n/a")
        lines.append(f"| {e['name']} | {e['metric']} | {s['windows']} ({e['sequences']['jobs']}) | {s['solved']} / "
                     f"{s['within']} | {e.get('reference') or '-'} {'-' if ref is None else f'{ref:,.2f}'} | "
                     f"{s['upper']:,.2f} | {s['lower']:,.3f} ({s['over_trivial']:+,.3f}) | {100 * s['gap']:.1f}% "
                     f"({'closed' if s['closed'] else 'open'}) | {s['seconds_per_window']:.1f} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def closed_windows(entry: Mapping[str, Any], per_window: Mapping[str, list[float]], reference: str,
                   threshold: float = GAP_CLOSED) -> dict[str, Any]:
    """`gap_shares` on the windows of a bound entry whose own gap is within `threshold`: per_window is label -> the
    method's value on each of the entry's windows, in order (a leaderboard row's `per_sequence` on the same windows).
    The subset is chosen by the bound, so it leans to the windows the solver could close (the lighter ones): a
    statement about those windows, not about the scenario."""
    keep = [i for i, w in enumerate(entry["windows"]) if w["gap"] <= threshold]
    if not keep:
        return {"windows": 0}
    upper = sum(entry["windows"][i]["upper"] for i in keep) / len(keep)
    lower = sum(entry["windows"][i]["lower"] for i in keep) / len(keep)
    means = {label: sum(v[i] for i in keep) / len(keep) for label, v in per_window.items()}
    return {"windows": len(keep), "of": len(entry["windows"]),
            **gap_shares(upper, lower, means.get(reference), means, threshold)}


def board_closed_windows(bounds: Mapping[str, Any], board: Mapping[str, Any], scenario: str) -> dict[str, Any] | None:
    """`closed_windows` for every row of a committed leaderboard's scenario (docs/leaderboard.json), where its windows
    are the bound's; None elsewhere."""
    entry = bounds.get(scenario)
    result = next((b for b in board.get("scenarios", []) if b["scenario"] == scenario), None)
    if entry is None or result is None or [int(i) for i in result["sequences"]["ids"]] != \
            [w["start"] for w in entry["windows"]]:
        return None
    per_window = {r["method"]: r["per_sequence"] for r in result["rows"]}
    return closed_windows(entry, per_window, result["reference"])


def closed_table(closed: Mapping[str, Any], top: int = 8) -> str:
    """`board_closed_windows` as markdown: the `top` methods by share."""
    rows = sorted(closed["methods"].items(), key=lambda kv: -(kv[1]["share"] if kv[1]["share"] is not None else -1e9))
    lines = [f"{closed['windows']} of {closed['of']} windows within {100 * GAP_CLOSED:.0f}%: best found "
             f"{closed['upper']:,.4f}, lower bound {closed['lower']:,.4f} (gap {100 * closed['gap']:.1f}%)", "",
             "| method | mean | share of the gap it closes |", "|---|---|---|"]
    lines += [f"| {label} | {row['value']:,.3f} | {row['shown'] or 'n/a'} |" for label, row in rows[:top]]
    return "\n".join(lines) + "\n"


METRIC_WORDS = {"bsld": "bounded slowdown", "wait": "wait"}


def plain_answer(entry: Mapping[str, Any], best: tuple[str, float] | None = None) -> str:
    """README's one-sentence answer to "how far from perfect?" from a scenario's committed bound: where the bound is
    closed, how many times the optimum the reference is and the share of that gap `best` (label, its mean on the same
    windows) closes; where it is open, that it is open and by how much, with what the best schedule found already
    says (the reference is at least reference / best found times the optimum)."""
    s, name = entry["summary"], entry["name"]
    ref_label = entry.get("reference")
    ref = (entry.get("methods") or {}).get(ref_label) if ref_label else None
    what = f"on `{name}`'s windows the offline optimum's mean {METRIC_WORDS.get(entry['metric'], entry['metric'])}"
    sides = f"between {s['lower']:,.3g} (proven) and {s['upper']:,.3g} (the best schedule found)"
    link = "([the offline bound](docs/reference/bound.md))"
    if not s["closed"] or ref is None:
        tail = "" if ref is None else (f", so {ref_label}'s {ref:,.3g} is at least {ref / s['upper']:,.0f} times "
                                       f"the optimum")
        return f"Not yet known to within 10%: {what} lies {sides}, a gap of {100 * s['gap']:.0f}%{tail} {link}."
    line = (f"Within {100 * s['gap']:.0f}%: {what} lies {sides}, so {ref_label}'s {ref:,.3g} is "
            f"{ref / s['upper']:,.0f} to {ref / s['lower']:,.0f} times the optimum")
    if best is not None:
        closes = share(ref, best[1], s["upper"])
        if closes is not None:
            line += f", and {best[0]} closes {100 * closes:.1f}% of {ref_label}'s gap to it"
    return line + f" {link}."


def best_policy(board: Mapping[str, Any], entry: Mapping[str, Any]) -> tuple[str, float] | None:
    """The trained or tuned policy (a board row that is none of the bound's baselines) that closes the largest share
    of the reference's gap on a committed leaderboard's scenario (docs/leaderboard.json), as (label, its mean); None
    where the board has no shares for it."""
    result = next((b for b in board.get("scenarios", []) if b["scenario"] == entry["name"]), None)
    optimum = (result or {}).get("optimum") or {}
    rows = [(label, row) for label, row in (optimum.get("methods") or {}).items()
            if label not in (entry.get("methods") or {}) and row.get("share") is not None]
    if not rows:
        return None
    label, row = max(rows, key=lambda kv: kv[1]["share"])
    return label, row["value"]


def readme_answer(bounds: Mapping[str, Mapping[str, Any]], board: Mapping[str, Any], first: str = "default") -> str:
    """README's answer to "how far from perfect?": `plain_answer` for `first`, then for every scenario whose bound is
    closed, with the share of the reference's gap its best trained or tuned policy closes (`best_policy`)."""
    said = [plain_answer(bounds[first])]
    said += [plain_answer(entry, best_policy(board, entry)) for name, entry in bounds.items()
             if name != first and entry["summary"]["closed"]]
    return " ".join(said)


if __name__ == "__main__":
    # python -m schedrl.bound.gap [docs/bounds.json]: the table of docs/experiments/bound.md;
    # python -m schedrl.bound.gap docs/bounds.json docs/leaderboard.json SCENARIO: the board on its closed windows
    import sys

    entries = json.loads(Path(sys.argv[1] if len(sys.argv) > 1 else BOUNDS_FILE).read_text())
    if len(sys.argv) > 3:
        found = board_closed_windows({e["name"]: e for e in entries}, json.loads(Path(sys.argv[2]).read_text()),
                                     sys.argv[3])
        print("no bound on the board's windows" if found is None else closed_table(found), end="")
    else:
        print(floor_table(entries), end="")
