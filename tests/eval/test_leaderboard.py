"""The leaderboard: baselines and outside policies on a scenario's evaluation sequences, paired with its reference."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shared_traces import SHARED_DATA, shared_trace

from schedrl.cli.main import main
from schedrl.dtsim.jobs import VASP_FILENAME
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
    d = standard()["default"].to_dict()  # 12,000-job zone: 5 disjoint 2,048-job windows
    s = Scenario.from_dict({**d, "evaluation": {"count": 12, "jobs": 2048, "seed": 0, "placement": "overlapping"}})
    b = lb.board(s)
    assert b["sequences"]["overlapping"] and b["sequences"]["independent"] == 5
    assert b["power"]["underpowered"] and "Underpowered: 5 independent windows of the 10" in lb.power_line(b)
    row = next(r for r in b["rows"] if r["method"] == "SJF")
    values = {r["method"]: r["per_sequence"] for r in b["rows"]}
    naive = paired.against(values, "SJF", "F1", "bsld")
    honest = row["vs_reference"]
    width = lambda c: c["ci95_pct"][1] - c["ci95_pct"][0]  # noqa: E731
    assert honest["independent"] == 5 and width(honest) > width(naive)
    assert honest["mde_pct"] > naive["mde_pct"] > 0


def test_paired_against_without_an_interval_gives_no_verdict():
    values = {"a": [1.0, 3.0], "b": [2.0, 2.0]}
    c = paired.against(values, "a", "b", "bsld", independent=1)
    assert c["ci95_pct"] is None and c["verdict"] == "too few windows for a verdict"
    c = paired.against({"a": [1.0, 1.5], "b": [2.0, 2.0]}, "a", "b", "bsld", independent=1)
    assert c["verdict"] == "too few windows for a verdict" and c["better"] == 2


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
    assert "sjf_again" in lb.matrix(data)[0] and "| default | bsld | F1 | 3 (" in lb.summary_markdown(data)


def test_scipy_quantiles_reproduce_the_old_table_within_its_rounding():
    old = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)
    assert all(abs(paired.t975(df) - v) < 5e-4 for df, v in enumerate(old, 1))
    assert paired.t975(43) > 1.96  # past 30 degrees of freedom: t's quantile, not the normal one


def test_the_corrections_adjust_and_keep_missing_p_values():
    assert lb.holm([0.01, 0.04, None, 0.03]) == pytest.approx([0.03, 0.06, None, 0.06])
    assert lb.benjamini_hochberg([0.01, 0.04, None, 0.03]) == pytest.approx([0.03, 0.04, None, 0.04])
    assert lb.benjamini_hochberg([0.001, 0.2, 0.03, 0.5]) == pytest.approx([0.004, 0.2 * 4 / 3, 0.06, 0.5])
    assert lb.holm([]) == lb.benjamini_hochberg([]) == []
    c = paired.against({"a": [1.0, 2.0, 3.0, 4.5, 2.0, 2.5], "b": [2.0, 3.1, 4.0, 5.0, 2.2, 3.0]}, "a", "b", "bsld")
    assert lb.p_value(c) == c["p"] <= 0.05 and c["verdict"] == "better"  # the bootstrap's: its interval excludes 1
    assert lb.p_value(paired.against({"a": [1.0], "b": [2.0]}, "a", "b", "bsld")) is None  # one window: no test


def test_a_verdict_that_survives_alone_can_fall_to_the_matrix_correction():
    one = {"method": "p", "kind": "zoo", "vs_reference": {"verdict": "better", "ci95_pct": [-9.0, -0.5], "p": 0.02,
                                                          "difference_pct": -4.75, "sequences": 10, "independent": 10}}
    noise = [{"method": f"q{i}", "kind": "zoo", "vs_reference": {"verdict": "not distinguishable", "p": 0.5 + i / 50,
                                                                 "ci95_pct": [-5.0, 5.0], "difference_pct": 0.0,
                                                                 "sequences": 10, "independent": 10}}
             for i in range(19)]
    result = lb.corrected({"scenarios": [{"rows": [one] + noise}]})
    assert one["vs_reference"]["verdict_corrected"] == "not distinguishable"
    assert one["vs_reference"]["p_corrected"] == pytest.approx(0.4)  # 20 x 0.02 / 1
    assert result["correction"] == {"method": "Benjamini-Hochberg", "comparisons": 20, "level": 0.05}


def test_zoo_policies_run_where_their_decisions_fit_and_say_why_elsewhere():
    from schedrl.heuristics import get_heuristic

    class Rule:
        """A stand-in with a tuned rule's shape: no agent record, so it runs on every trace scenario."""

        def pick(self, sim):
            return get_heuristic("sjf", 0).pick(sim)

    rule = lb.Entrant("rule", "tuned", lambda s: lb._runnable(Rule(), s),
                      trained_on={"name": "default", "sha256": "x"})
    b = lb.board(small(), [rule])
    row = next(r for r in b["rows"] if r["method"] == "rule")
    assert row["trained"] == "here" and row["trained_on"]["name"] == "default"
    assert lb.trained_here(rule, standard()["lublin1-paper"]) is False
    assert lb.trained_here(lb.Entrant("x", "zoo", None, trained_on={"name": "lublin1"}), standard()["lublin1-paper"])
    outside = lb.board(small(), [lb.outside("leaderboard_policies:not_here")])
    assert [n["method"] for n in outside["not_run"]] == ["not_here"]  # listed, never dropped in silence
    shared_trace(VASP_FILENAME, SHARED_DATA)  # the generated scenario's jobs live in ../shared/data (not in a clone)
    gen = lb.board(standard()["rlschert-vasp"].overridden(sequences=1), [rule])
    assert gen["not_run"] == [{"method": "rule", "kind": "tuned", "why": "a tuned rule is a priority of the event "
                               "simulator's jobs; this scenario is generated on the discrete-time cluster"}]


def test_too_many_windows_for_the_zone_is_one_error_line_with_the_numbers(capsys):
    assert main(["leaderboard", "--no-entry-points", "--scenarios", "default", "--sequences", "12"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "12 disjoint windows of 1,024 jobs need 12,288 jobs; it holds 12,000" in err[0], err


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


def test_restated_recomputes_every_comparison_from_the_per_sequence_values():
    import copy

    result = lb.corrected({"scenarios": [lb.board(small(), [lb.outside("leaderboard_policies:sjf_again")])],
                           "skipped": []})
    stored = json.loads(json.dumps(lb.stable(result)))
    assert lb.restated(copy.deepcopy(stored)) == stored  # deterministic: the bootstrap is seeded
    stale = copy.deepcopy(stored)
    row = next(r for r in stale["scenarios"][0]["rows"] if r["method"] == "sjf_again")
    row["vs_reference"]["ci95_pct"], row["vs_reference"]["verdict"] = [-300.0, 900.0], "not distinguishable"
    assert lb.restated(stale) == stored
    assert stored["statistics"]["min_windows"] == paired.MIN_WINDOWS
