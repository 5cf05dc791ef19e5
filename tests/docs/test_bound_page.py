"""docs/experiments/bound.md shows the committed bounds as `python -m schedrl.bound.gap` renders them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from schedrl.bound.gap import floor_table

REPO = Path(__file__).resolve().parents[2]


def test_the_bound_page_table_is_the_committed_json():
    path = REPO / "docs" / "bounds.json"
    if not path.is_file():
        pytest.skip("no docs/bounds.json committed")
    page = (REPO / "docs" / "experiments" / "bound.md").read_text()
    shown = re.search(r"<!-- bound:table:start -->\n(.*?)<!-- bound:table:end -->", page, re.S).group(1)
    assert shown == floor_table(json.loads(path.read_text()))


def test_the_readme_answer_is_the_committed_bound():
    from schedrl.bound.gap import read_bounds, readme_answer

    path, board = REPO / "docs" / "bounds.json", REPO / "docs" / "leaderboard.json"
    if not path.is_file() or not board.is_file():
        pytest.skip("no docs/bounds.json or docs/leaderboard.json committed")
    said = re.search(r"\*\*How far from perfect\?\*\* (.*?)\n\n", (REPO / "README.md").read_text(), re.S)
    assert said is not None, "README's **How far from perfect?** paragraph is missing"
    assert " ".join(said.group(1).split()) == readme_answer(read_bounds(path), json.loads(board.read_text()))
