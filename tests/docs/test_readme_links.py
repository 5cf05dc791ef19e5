"""The README's relative links point at files of the repository (GitHub renders them; the site is built from docs/, so
its own links are checked by `mkdocs build --strict` in CI), and its length stays that of an overview."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def test_every_relative_link_of_the_readme_exists():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(relative) >= 20, relative
    missing = [link for link in relative if not (REPO / link).exists()]
    assert not missing, missing


def test_the_readme_is_an_overview():
    # rendered from docs/leaderboard.json: the summary and the plain answer above it
    own = re.sub(r"<!-- leaderboard(:[a-z]+|):start -->.*?<!-- leaderboard\1:end -->", "", README, flags=re.S)
    words = len(own.split())
    assert words <= 1200, f"README has {words} words outside the leaderboard block; the manual is docs/"
    for line in own.splitlines():
        if line.startswith("|"):
            assert len(line) <= 200, f"a README table cell runs long: {line[:80]}..."
