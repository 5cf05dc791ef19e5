"""The committed leaderboard: the README's summary and docs/leaderboard.md are what docs/leaderboard.json renders
(fast), and a rerun of the board reproduces the JSON (slow: every scenario, every zoo policy)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from schedrl.eval import leaderboard as lb

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = json.loads((REPO / "docs" / "leaderboard.json").read_text())


def test_the_readme_summary_is_rendered_from_the_committed_json():
    text = (REPO / "README.md").read_text()
    start, end = text.index(lb.README_MARK[0]), text.index(lb.README_MARK[1]) + len(lb.README_MARK[1])
    assert text[start:end] == lb.readme_block(PUBLISHED)


def test_the_docs_table_is_rendered_from_the_committed_json():
    assert (REPO / "docs" / "leaderboard.md").read_text() == lb.docs_page(PUBLISHED)


def test_render_rewrites_the_pages_from_the_json_without_scoring(tmp_path):
    from schedrl.cli.main import main

    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text((REPO / "README.md").read_text())
    (tmp_path / "docs" / "leaderboard.json").write_text((REPO / "docs" / "leaderboard.json").read_text())
    assert main(["leaderboard", "--render", str(tmp_path)]) == 0
    for page in ("README.md", "docs/leaderboard.md", "docs/zoo.md", "docs/leaderboard.json"):
        assert (tmp_path / page).read_text() == (REPO / page).read_text(), page
    assert (tmp_path / "docs" / "leaderboard.png").stat().st_size > 10_000


def test_the_zoo_page_is_rendered_from_the_manifest_and_the_committed_json():
    assert (REPO / "docs" / "zoo.md").read_text() == lb.zoo_page(PUBLISHED)


def test_each_agent_page_names_its_zoo_policies():
    from schedrl.zoo.manifest import entries, rules

    pages = {"rlscheduler": "rlscheduler", "linear": "linear", "inspector": "inspector", "rl-backfill": "rl-backfill",
             "dras-pg": "dras", "dras-dql": "dras", "decima-pg": "dras", "mrsch": "mrsch", "mrsch-scalar": "mrsch",
             "rlschert": "rlschert", "deeprm": "rlschert", "tuned": "tuned-rule"}
    for entry in entries() + rules():
        page = REPO / "docs" / "agents" / f"{pages[entry.fields['agent']]}.md"
        text = page.read_text()
        section = text[text.index("## Zoo policies"):]
        section = section[:section.index("\n## ", 3)]
        assert f"`{entry.name}`" in section, f"{page.name}'s Zoo policies section does not name {entry.name}"


def test_the_committed_board_covers_every_standard_scenario_and_zoo_policy():
    from schedrl.scenarios import standard
    from schedrl.zoo.manifest import entries, rules

    boards = {b["scenario"]: b for b in PUBLISHED["scenarios"]}
    assert set(boards) == set(standard()) and not PUBLISHED["skipped"]
    for b in boards.values():
        assert b["sha256"] == standard()[b["scenario"]].sha256()
    for entry in entries() + rules():
        scenario = entry.fields["scenario"]["name"]
        own = {r["method"]: r for r in boards[scenario]["rows"]}
        assert entry.name in own and own[entry.name]["trained"] == "here", entry.name
        for b in boards.values():  # on every scenario: a row, or listed with why it cannot run (never dropped)
            listed = [r["method"] for r in b["rows"]] + [n["method"] for n in b["not_run"] + b["failed"]]
            assert listed.count(entry.name) == 1, (entry.name, b["scenario"])
    assert all(n["why"] for b in boards.values() for n in b["not_run"])


def test_every_row_says_what_it_could_detect_and_the_matrix_is_corrected():
    boards = PUBLISHED["scenarios"]
    assert PUBLISHED["correction"]["method"] == "Benjamini-Hochberg" and PUBLISHED["correction"]["comparisons"] > 50
    for b in boards:
        assert b["power"]["independent"] == b["sequences"]["independent"]
        assert b["power"]["underpowered"] == (b["sequences"]["independent"] < 10)
        for r in b["rows"]:
            if "vs_reference" in r:
                c = r["vs_reference"]
                assert c["mde_pct"] > 0 and c["ci95_pct"][0] > -100, (b["scenario"], r["method"])
                assert (c["verdict"] == "too few windows for a verdict") == (b["sequences"]["independent"] < 6)
            if r["kind"] != "heuristic" and "vs_reference" in r:
                assert r["vs_reference"]["verdict_corrected"] in ("better", "worse", "not distinguishable", "the same",
                                                                  "too few windows for a verdict")
    assert [b["scenario"] for b in boards if b["power"]["underpowered"]] == ["lublin1-paper", "lublin1-bf-paper",
                                                                            "dras-theta"]
    text = (REPO / "docs" / "leaderboard.md").read_text()
    assert text.startswith("# Leaderboard\n\nEvery standard scenario's")  # a reader's page, not instructions first


@pytest.mark.slow
@pytest.mark.integration
def test_a_rerun_reproduces_the_committed_board():
    from schedrl.scenarios import standard

    again = lb.stable(lb.leaderboard(list(standard().values()), lb.zoo_entrants()))
    assert [b["scenario"] for b in again["scenarios"]] == [b["scenario"] for b in PUBLISHED["scenarios"]]
    for new, old in zip(again["scenarios"], PUBLISHED["scenarios"]):
        assert new["sequences"] == old["sequences"] and new["reference"] == old["reference"]
        assert [r["method"] for r in new["rows"]] == [r["method"] for r in old["rows"]]
        for a, b in zip(new["rows"], old["rows"]):
            assert np.allclose(a["per_sequence"], b["per_sequence"], rtol=1e-9, atol=0), a["method"]
