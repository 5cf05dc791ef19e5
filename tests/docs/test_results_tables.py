"""Every number on a user page comes from one place.

A results table on the README or a docs page outside docs/experiments/ is either rendered from docs/leaderboard.json
(between `<!-- leaderboard...:start -->` and `...:end -->` markers, or a page `schedrl leaderboard --publish` writes
whole), or names, row by row, its protocol and the dated experiment entry (or the test) that produced it: a
`protocol` column and a `log` column whose link resolves to a dated entry of docs/experiments/.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1].parent
DOCS = REPO / "docs"

RENDERED = {DOCS / "leaderboard.md", DOCS / "zoo.md"}
"""Pages `schedrl leaderboard --publish` writes whole from docs/leaderboard.json and the zoo's manifest."""

MARKED = re.compile(r"<!-- leaderboard(?::[a-z0-9,-]+)?:start -->.*?<!-- leaderboard(?::[a-z0-9,-]+)?:end -->", re.S)

RESULT = re.compile(r"(?<![\w.])[−+-]?\d[\d,]*\.\d\d(?!\d)|\b\d\.\d+x\b|[−+-]\d+(?:\.\d+)?%")
"""A measured value: a mean to two decimals, a ratio (0.919x) or a signed percentage."""

NOT_RESULTS = re.compile(r"\b(options?|default|field|key|part|published|term|setting|parameter|flag|sacct record|learner)\b",
                         re.I)
"""Tables that describe (options and their defaults, fields, parts of an implementation), whatever their numbers."""


def pages() -> list[Path]:
    found = [REPO / "README.md", *DOCS.rglob("*.md")]
    return sorted(p for p in found if "experiments" not in p.relative_to(REPO).parts and p not in RENDERED)


def tables(text: str):
    """(line number, header cells, rows as cell lists) of every Markdown table outside code blocks and markers."""
    text = MARKED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines, fence, i = text.split("\n"), False, 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fence = not fence
        elif (not fence and line.startswith("|") and i + 1 < len(lines)
              and re.fullmatch(r"\|[\s|:\-]+\|?", lines[i + 1].strip())):
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            yield i + 1, cells(line), [cells(r) for r in lines[i + 2:j]], line
            i = j
            continue
        i += 1


def cells(row: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))]


def entry_exists(page: Path, target: str) -> bool:
    from tests.docs.test_agent_pages import anchors

    file, _, anchor = target.partition("#")
    path = (page.parent / file).resolve()
    return (DOCS / "experiments").resolve() in path.parents and path.is_file() \
        and re.match(r"\d{4}-\d{2}-\d{2}-", anchor) is not None and anchor in anchors(path)


def problems(page: Path) -> list[str]:
    found = []
    for number, header, rows, raw in tables(page.read_text()):
        if NOT_RESULTS.search(raw):
            continue
        results = [r for r in rows if any(RESULT.search(c) for c in r)]
        if not results:
            continue
        where = f"{page.relative_to(REPO)}:{number}"
        names = [h.lower() for h in header]
        if "protocol" not in names or "log" not in names:
            found.append(f"{where}: a results table without `protocol` and `log` columns ({raw[:80]})")
            continue
        proto, log = names.index("protocol"), names.index("log")
        for row in results:
            if len(row) != len(header):
                found.append(f"{where}: a row with {len(row)} cells under {len(header)} columns: {row[0][:60]}")
                continue
            if row[proto] in ("", "–", "-"):
                found.append(f"{where}: no protocol: {row[0][:60]}")
            links = re.findall(r"\]\(([^)\s]+)\)", row[log])
            tests = [t for t in re.findall(r"`(tests/[\w/.-]+\.py)`", row[log]) if (REPO / t).is_file()]
            if not tests and not any(entry_exists(page, t) for t in links):
                found.append(f"{where}: no dated experiment entry (or test) behind: {row[0][:60]}")
    return found


@pytest.mark.parametrize("page", pages(), ids=[str(p.relative_to(REPO)) for p in pages()])
def test_a_results_table_is_rendered_or_names_its_protocol_and_entry(page):
    found = problems(page)
    assert not found, "\n".join(found)


def test_the_check_catches_a_bare_results_table():
    text = ("| result | ours |\n|---|---|\n| held-out bsld | 181.59 vs F1 219.21 |\n\n"
            "| result | ours | protocol | log |\n|---|---|---|---|\n| x | 0.919x | `lublin1` | – |\n\n"
            "| option | default |\n|---|---|\n| `--lr` | 0.01 |\n\n"
            "<!-- leaderboard:start -->\n| scenario | x |\n|---|---|\n| a | 0.919x |\n<!-- leaderboard:end -->\n")

    class Probe(type(REPO)):  # the text at an agent page's place, so that its relative links resolve the same
        def read_text(self, *args, **kwargs):
            return text

    found = problems(Probe(DOCS / "agents" / "probe.md"))
    assert len(found) == 2, found
    assert "without `protocol` and `log`" in found[0] and "no dated experiment entry" in found[1]
