"""The Python code the guides show runs: every ```python block of docs/guides/ is executed as a script (in this
process, from a scratch directory), except a block preceded by `<!-- not run: REASON -->`, which names why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # runs the documented snippets

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted((REPO / "docs" / "guides").glob("*.md"))
BLOCK = re.compile(r"(<!-- not run: (?P<reason>[^>]*) -->\n)?```python\n(?P<code>.*?)^```", re.S | re.M)


def snippets() -> list[tuple[str, int, str, str | None]]:
    return [(page.name, i, m.group("code"), m.group("reason"))
            for page in PAGES for i, m in enumerate(BLOCK.finditer(page.read_text()))]


SNIPPETS = snippets()


def test_the_snippets_are_found():
    pages = {name for name, *_ in SNIPPETS}
    assert {"add-a-heuristic.md", "envs-from-python.md"} <= pages, pages
    assert all(reason is None or reason.strip() for *_, reason in SNIPPETS)


@pytest.mark.parametrize(("page", "index", "code", "reason"), SNIPPETS, ids=[f"{p}#{i}" for p, i, _, _ in SNIPPETS])
def test_every_snippet_runs(page, index, code, reason, tmp_path, monkeypatch, capsys):
    if reason is not None:
        pytest.skip(f"{page} block {index}: {reason}")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"docs/guides/{page}#{index}", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.strip(), "the snippet printed nothing"
