"""The leaderboard: baselines and outside policies on a scenario's evaluation sequences, paired with its reference."""

from __future__ import annotations

import json

import numpy as np
import pytest

from schedrl.cli.main import main
from schedrl.eval import leaderboard as lb
from schedrl.eval import paired
from schedrl.scenarios import Scenario, standard


def small(name: str = "default", **changes) -> Scenario:
    return standard()[name].overridden(sequences=4, jobs=256, **changes)


def test_an_outside_policy_is_scored_like_the_same_heuristic_and_a_broken_one_is_a_failed_row():
    entrants = [lb.outside("leaderboard_policies:sjf_again"), lb.outside("leaderboard_policies:broken"),
                lb.outside("leaderboard_policies:not_here")]
    b = lb.board(small(), entrants)
    rows = {r["method"]: r for r in b["rows"]}
    assert rows["sjf_again"]["per_sequence"] == rows["SJF"]["per_sequence"]
    assert rows["sjf_again"]["kind"] == "outside" and "vs_second_best" in rows["sjf_again"]
    assert [f["method"] for f in b["failed"]] == ["broken"] and "cannot be built" in b["failed"][0]["error"]
    assert "not_here" not in rows
    assert rows["F1"]["ratio_to_reference"] == 1.0 and "vs_reference" not in rows["F1"]


def test_the_reference_comes_from_the_definition_never_from_the_evaluation_sequences():
    s = Scenario.from_dict({**small().to_dict(), "reference": "WFP3"})
    b = lb.board(s)
    assert b["reference"] == "WFP3"
    assert all(r["vs_reference"]["baseline"] == "WFP3" for r in b["rows"] if r["method"] != "WFP3")


def test_overlapping_windows_count_only_the_disjoint_ones_in_the_interval():
    s = standard()["default"].overridden(sequences=12, jobs=2048)  # 9,000-job zone: 4 disjoint 2,048-job windows
    b = lb.board(s)
    assert b["sequences"]["overlapping"] and b["sequences"]["independent"] == 4
    row = next(r for r in b["rows"] if r["method"] == "SJF")
    values = {r["method"]: r["per_sequence"] for r in b["rows"]}
    naive = paired.against(values, "SJF", "F1", "bsld")
    honest = row["vs_reference"]
    width = lambda c: c["ci95_pct"][1] - c["ci95_pct"][0]  # noqa: E731
    assert honest["independent"] == 4 and width(honest) > width(naive)


def test_paired_against_without_an_interval_needs_every_sequence_to_agree():
    values = {"a": [1.0, 3.0], "b": [2.0, 2.0]}
    c = paired.against(values, "a", "b", "bsld", independent=1)
    assert c["ci95_pct"] is None and c["verdict"] == "not distinguishable"
    c = paired.against({"a": [1.0, 1.5], "b": [2.0, 2.0]}, "a", "b", "bsld", independent=1)
    assert c["verdict"] == "better"


def test_cli_writes_json_markdown_and_figure_and_redraws_with_seed(capsys, tmp_path):
    assert main(["leaderboard", "--scenarios", "default", "--sequences", "3", "--seed", "5", "--no-entry-points",
                 "--policies", "leaderboard_policies:sjf_again,leaderboard_policies:broken", "--out",
                 str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    data = json.loads((tmp_path / "leaderboard.json").read_text())
    assert (tmp_path / "leaderboard.png").stat().st_size > 1000
    assert (tmp_path / "leaderboard.md").read_text() == out == lb.to_markdown(data)
    assert "broken failed: RuntimeError" in err
    (board,) = data["scenarios"]
    assert len(board["sequences"]["ids"]) == 3
    assert board["sequences"]["ids"] != lb.board(standard()["default"].overridden(sequences=3))["sequences"]["ids"]
    assert "sjf_again" in lb.summary_markdown(data)


@pytest.mark.parametrize("args, message", [
    (["--policies", "nomodule_xyz:make"], r"--policies nomodule_xyz:make: cannot load it \(ModuleNotFoundError"),
    (["--policies", "justaname"], r"an outside policy is MODULE:CALLABLE"),
    (["--scenarios", "lubin1"], r"did you mean 'lublin1'"),
])
def test_bad_input_is_one_error_line(capsys, args, message):
    import re

    assert main(["leaderboard", "--no-entry-points", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(message, err[0]), err


def test_the_figure_and_summary_render_every_scenario(tmp_path):
    result = lb.leaderboard([small(), small("default", backfill="easy")])
    lb.plot(result, tmp_path / "f.png")
    assert (tmp_path / "f.png").exists()
    assert lb.summary_markdown(result).count("| default |") == 2
    assert np.isfinite([r["mean"] for b in result["scenarios"] for r in b["rows"]]).all()
