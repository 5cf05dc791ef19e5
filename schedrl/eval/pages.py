"""The agent pages' "Where it stands today": each page's zoo policies and tuned rules as the committed leaderboard
(docs/leaderboard.json) scores them, rendered between markers of the README's form.

A page marks its block with the agents it covers (the names `schedrl train` takes; `tuned` for the tuned rules)::

    <!-- leaderboard:dras-pg,dras-dql,decima-pg:start -->
    ...rendered, never edited by hand...
    <!-- leaderboard:dras-pg,dras-dql,decima-pg:end -->

The README holds the plain answer to "do the learned schedulers win?" between `<!-- leaderboard:answer:start -->`
and `<!-- leaderboard:answer:end -->`, rendered from the same board (`answer`).

`schedrl leaderboard --publish ROOT` rewrites every such block from the board it publishes; `python -m
schedrl.eval.pages [ROOT]` rewrites them from the committed docs/leaderboard.json alone, and tests/docs checks that
the pages match it.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

BLOCK = re.compile(r"<!-- leaderboard:(?P<agents>(?!answer:)[a-z0-9,-]+):start -->\n.*?"
                   r"<!-- leaderboard:(?P=agents):end -->", re.S)
PAGES = "docs/agents"


def _agents_of_methods() -> dict[str, str]:
    """Every zoo policy's and tuned rule's name -> the agent that made it (the manifest's)."""
    from schedrl.zoo.manifest import entries, rules

    return {e.name: e.fields["agent"] for e in [*entries(), *rules()]}


def _pct(value: float) -> str:
    return f"{value:+.1f}%".replace("-", "−")


def _versus(c: dict | None) -> str:
    if not c:
        return "–"
    bounds = " [{}, {}]".format(*map(_pct, c["ci95_pct"])) if c.get("ci95_pct") else " [no interval]"
    note = f", over {c['independent']} independent windows" if c.get("independent") not in (None, c["sequences"]) else ""
    mde = f"; smallest detectable {c['mde_pct']:.1f}%" if c.get("mde_pct") is not None else ""
    rank = "; the rank test disagrees" if c.get("rank_test_disagrees") else ""
    diff = "infinite" if c["difference_pct"] is None else _pct(c["difference_pct"])
    return f"{diff}{bounds}{note}, better on {c['better']} of {c['sequences']}{mde}{rank}"


def final(c: dict) -> str | None:
    """A comparison's verdict as the board gives it: corrected for multiple comparisons where it did that."""
    return c.get("verdict_corrected", c.get("verdict_holm", c.get("verdict")))


def verdict(row: dict, correction: str = "") -> str:
    """The row's verdict against the reference, saying when it is corrected for multiple comparisons."""
    c = row.get("vs_reference") or {}
    if c.get("verdict") == "too few windows for a verdict":  # no test was made, so nothing was corrected
        return c["verdict"]
    if "verdict_corrected" in c or "verdict_holm" in c:
        return f"{final(c)} ({correction or 'Holm'}-corrected)"
    return c.get("verdict", "–")


def answer(result: dict) -> str:
    """The README's plain answer to "do the learned schedulers win?", from the board's verdicts."""
    wins, scored, rows, close, worse = [], 0, 0, 0, 0
    for b in result["scenarios"]:
        learned = [r for r in b["rows"] if r.get("kind") != "heuristic"]
        scored += bool(learned)
        for r in learned:
            c = r.get("vs_reference") or {}
            rows += 1
            close += abs(r["ratio_to_reference"] - 1) <= 0.05
            worse += final(c) == "worse"
            if final(c) == "better":
                where = " (transfer)" if r.get("trained") == "transfer" else ""
                wins.append(f"`{r['method']}`{where} on `{b['scenario']}` ({r['ratio_to_reference']:.3f}x "
                            f"{b['reference']})")
    head = "**Do the learned schedulers win?** "
    c = result.get("correction") or {}
    corrected = (f", verdicts corrected for {c['comparisons']} comparisons ({c['method']})"
                 if c.get("method") and c.get("comparisons") else "")
    if not wins:
        return (head + f"Not yet: on none of the {scored} scenarios with a trained policy is one significantly better "
                f"than the best heuristic there (the reference){corrected}; of the {rows} trained policies' rows, {close} are "
                f"within 5% of it either way and {worse} are significantly worse.\n")
    return (head + f"Sometimes: {len(wins)} of the {rows} trained policies' rows are significantly better than the "
            f"best heuristic of their scenario (its reference){corrected}: {'; '.join(wins)}. Of all {rows}, {close} "
            f"are within 5% of the reference either way and {worse} are significantly worse.\n")


README_ANSWER = ("<!-- leaderboard:answer:start -->", "<!-- leaderboard:answer:end -->")
"""The README's plain answer sits between these lines, above the summary (`update_pages`)."""


def block(result: dict, agents: list[str], owners: dict[str, str] | None = None) -> str:
    """The markdown between the markers for `agents`: one row per board row of a policy those agents made."""
    owners = _agents_of_methods() if owners is None else owners
    correction = (result.get("correction") or {}).get("method", "")
    rows = []
    for b in result["scenarios"]:
        reference = next((r for r in b["rows"] if r["method"] == b["reference"]), None)
        for r in b["rows"]:
            if owners.get(r["method"]) not in agents:
                continue
            mean = f"{r['mean']:,.2f}"
            ref = f"{b['reference']} {reference['mean']:,.2f}" if reference else b["reference"]
            held = "" if r.get("held_out", True) else " (not held out)"
            where = {"here": "trained here", "transfer": "transfer"}.get(r.get("trained"), "")
            rows.append(f"| `{r['method']}`{held} | `{b['scenario']}`{', ' + where if where else ''} | "
                        f"{b['metric']} {mean} | {ref} | {r['ratio_to_reference']:.3f}x | "
                        f"{_versus(r.get('vs_reference'))} | {verdict(r, correction)} |")
    text = ("Rendered from docs/leaderboard.json (the [leaderboard](../leaderboard.md)) by `schedrl leaderboard "
            "--publish`: each policy's "
            "mean over its scenario's evaluation sequences, as a ratio to the scenario's reference heuristic, with the "
            "difference (ratio - 1) and its 95% paired bootstrap interval (\"not distinguishable\": the interval holds "
            "0; \"too few windows for a verdict\": under 6 independent windows). The protocol is the scenario's, as "
            "[scenarios](../scenarios.md) defines it.\n\n")
    if not rows:
        return text + "No policy of this agent is on the board yet.\n"
    return (text + "| policy | scenario | mean | reference | x reference | vs reference: diff [95% CI] | verdict |\n"
            "|---|---|--:|---|--:|---|---|\n" + "\n".join(rows) + "\n")


def render(text: str, result: dict, owners: dict[str, str] | None = None) -> str:
    """`text` with every marked block rewritten from `result`."""
    owners = _agents_of_methods() if owners is None else owners

    def fill(match: re.Match) -> str:
        name = match.group("agents")
        return (f"<!-- leaderboard:{name}:start -->\n{block(result, name.split(','), owners)}"
                f"<!-- leaderboard:{name}:end -->")

    return BLOCK.sub(fill, text)


def update_pages(result: dict, root) -> list[Path]:
    """Rewrite the marked blocks of every page under ROOT/docs/agents and the README's answer from `result` (each file
    atomically); returns the files changed."""
    from schedrl.outputs import atomic_write

    owners = _agents_of_methods()
    changed = []
    for path in sorted((Path(root) / PAGES).glob("*.md")):
        text = path.read_text()
        new = render(text, result, owners)
        if new != text:
            atomic_write(path, new)
            changed.append(path)
    readme = Path(root) / "README.md"
    if readme.is_file():
        text = readme.read_text()
        new = render_answer(text, result)
        if new != text:
            atomic_write(readme, new)
            changed.append(readme)
    return changed


def render_answer(text: str, result: dict) -> str:
    """`text` with its answer block (if any) rewritten from `result`."""
    start, end = README_ANSWER
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        return text
    return text[:i] + f"{start}\n{answer(result)}{end}" + text[j + len(end):]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0] if argv else ".")
    board = root / "docs" / "leaderboard.json"
    if not board.is_file():
        print(f"error: {board}: no such file (run from the repository root, or give it)", file=sys.stderr)
        return 2
    for path in update_pages(json.loads(board.read_text()), root):
        print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
