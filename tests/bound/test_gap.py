"""The share of the reference-to-optimum gap a method closes, published only where the bound is closed."""

from __future__ import annotations

import pytest

from schedrl.bound.gap import board_shares, gap_shares, share


def test_share_is_zero_at_the_reference_one_at_the_optimum_negative_when_worse():
    assert share(100.0, 100.0, 20.0) == 0.0
    assert share(100.0, 20.0, 20.0) == 1.0
    assert share(100.0, 60.0, 20.0) == 0.5
    assert share(100.0, 120.0, 20.0) == -0.25
    assert share(20.0, 30.0, 20.0) is None  # the reference is the best found: nothing to close


def test_shares_are_published_only_within_ten_percent():
    closed = gap_shares(upper=1.10, lower=1.00, reference=3.0, means={"F1": 3.0, "SJF": 2.05})
    assert closed["status"] == "closed" and closed["gap"] == pytest.approx(0.1 / 1.1)
    assert closed["methods"]["SJF"]["share"] == pytest.approx(0.5)
    assert closed["methods"]["F1"]["shown"] == "0.0%"
    opened = gap_shares(upper=1.20, lower=1.00, reference=3.0, means={"F1": 3.0})
    assert opened["status"] == "open" and opened["methods"]["F1"]["share"] is None
    assert (opened["upper"], opened["lower"]) == (1.20, 1.00)


def test_the_board_reads_only_a_bound_of_its_own_windows():
    entry = {"name": "x", "part": "evaluation", "sequences": {"subsample": False},
             "summary": {"upper": 1.0, "lower": 0.95}}
    assert board_shares({"x": entry}, "x", 2.0, {"F1": 1.5})["methods"]["F1"]["share"] == pytest.approx(0.5)
    assert board_shares({"x": entry}, "y", 2.0, {"F1": 1.5}) is None
    sub = {**entry, "sequences": {"subsample": True}}
    assert board_shares({"x": sub}, "x", 2.0, {"F1": 1.5}) is None


def test_the_board_reads_the_committed_bound_of_the_same_definition_and_windows(tmp_path):
    import json

    from schedrl.bound.gap import committed_floor

    class Scenario:
        name = "x"

        def sha256(self):
            return "abc"

    entry = {"name": "x", "sha256": "abc", "part": "evaluation", "sequences": {"subsample": False},
             "summary": {"upper": 1.0, "lower": 0.95}, "windows": [{"start": 5}, {"start": 9}]}
    path = tmp_path / "bounds.json"
    path.write_text(json.dumps([entry]))
    floor = committed_floor(Scenario(), 2.0, {"F1": 2.0, "SJF": 1.5}, starts=[5, 9], path=path)
    assert floor["status"] == "closed" and floor["methods"]["SJF"]["share"] == 0.5
    assert committed_floor(Scenario(), 2.0, {"F1": 2.0}, starts=[5], path=path) is None  # other windows
    path.write_text(json.dumps([{**entry, "sha256": "changed"}]))
    assert committed_floor(Scenario(), 2.0, {"F1": 2.0}, starts=[5, 9], path=path) is None
    assert committed_floor(Scenario(), 2.0, {"F1": 2.0}, path=tmp_path / "absent.json") is None


def test_the_windows_the_bound_closes_are_scored_on_their_own():
    from schedrl.bound.gap import board_closed_windows, closed_windows

    entry = {"windows": [{"start": 1, "upper": 1.0, "lower": 0.99, "gap": 0.01},
                         {"start": 2, "upper": 10.0, "lower": 1.0, "gap": 0.9},
                         {"start": 3, "upper": 2.0, "lower": 1.9, "gap": 0.05}]}
    per_window = {"F1": [3.0, 50.0, 5.0], "P": [2.0, 40.0, 3.5]}
    c = closed_windows(entry, per_window, "F1")
    assert (c["windows"], c["of"], c["upper"], c["status"]) == (2, 3, 1.5, "closed")
    assert c["methods"]["P"]["share"] == pytest.approx((4.0 - 2.75) / (4.0 - 1.5))
    board = {"scenarios": [{"scenario": "x", "reference": "F1", "sequences": {"ids": [1, 2, 3]},
                            "rows": [{"method": k, "per_sequence": v} for k, v in per_window.items()]}]}
    assert board_closed_windows({"x": {"name": "x", **entry}}, board, "x")["methods"]["P"]["share"] == \
        c["methods"]["P"]["share"]
    board["scenarios"][0]["sequences"]["ids"] = [1, 2, 4]
    assert board_closed_windows({"x": {"name": "x", **entry}}, board, "x") is None
    assert closed_windows({"windows": [entry["windows"][1]]}, per_window, "F1") == {"windows": 0}


def test_the_boards_line():
    from schedrl.bound.gap import optimum_line

    assert optimum_line(gap_shares(1.2, 1.0, 3.0, {"F1": 3.0})) == (
        "Offline optimum (`schedrl bound`, docs/bounds.json): between 1 and 1.2 (gap 16.7%); open at 10%: no "
        "method's share of the gap to it is published.")
    assert optimum_line(gap_shares(1.1, 1.0, 3.0, {"F1": 3.0, "SJF": 2.05})).endswith(
        "(gap 9.1%); share of the reference's gap to it closed: F1 0.0%, SJF 50.0%.")


def test_an_open_bound_publishes_the_shares_on_its_closed_windows_alone(tmp_path):
    import json

    from schedrl.bound.gap import committed_floor, optimum_line

    class Scenario:
        name = "x"

        def sha256(self):
            return "abc"

    windows = [{"start": 5, "upper": 2.0, "lower": 1.9, "gap": 0.05}, {"start": 9, "upper": 10.0, "lower": 1.0,
                                                                        "gap": 0.9}]
    entry = {"name": "x", "sha256": "abc", "part": "evaluation", "sequences": {"subsample": False},
             "summary": {"upper": 6.0, "lower": 1.45}, "windows": windows}
    path = tmp_path / "bounds.json"
    path.write_text(json.dumps([entry]))
    per_window = {"F1": [4.0, 50.0], "SJF": [3.0, 40.0]}
    means = {k: sum(v) / 2 for k, v in per_window.items()}
    floor = committed_floor(Scenario(), means["F1"], means, starts=[5, 9], path=path, per_window=per_window,
                            reference_label="F1")
    assert floor["status"] == "open" and floor["methods"]["SJF"]["share"] is None
    sub = floor["subset"]
    assert (sub["windows"], sub["of"], sub["upper"], sub["lower"]) == (1, 2, 2.0, 1.9)
    assert sub["methods"]["SJF"]["share"] == pytest.approx(0.5)  # (4 - 3) / (4 - 2) on the closed window
    line = optimum_line(floor)
    assert "open at 10%" in line and line.endswith("share of the reference's gap to it closed there: F1 0.0%, "
                                                   "SJF 50.0%.")
    assert "On the 1 of its 2 windows whose own gap is within 10% alone" in line
    # without the board's per-window values, or with no window within 10%, there is no subset
    assert "subset" not in committed_floor(Scenario(), means["F1"], means, starts=[5, 9], path=path)
    path.write_text(json.dumps([{**entry, "windows": [windows[1], {**windows[1], "start": 5}][::-1]}]))
    assert "subset" not in committed_floor(Scenario(), means["F1"], means, starts=[5, 9], path=path,
                                           per_window=per_window, reference_label="F1")


def test_the_plain_answer_says_open_or_places_the_reference():
    from schedrl.bound.gap import plain_answer

    entry = {"name": "default", "metric": "bsld", "reference": "F1", "methods": {"F1": 246.0},
             "summary": {"upper": 2.0, "lower": 1.2, "gap": 0.4, "closed": False}}
    assert plain_answer(entry) == (
        "Not yet known to within 10%: on `default`'s windows the offline optimum's mean bounded slowdown lies between "
        "1.2 (proven) and 2 (the best schedule found), a gap of 40%, so F1's 246 is at least 123 times the optimum "
        "([the offline bound](docs/reference/bound.md)).")
    closed = {**entry, "summary": {"upper": 2.0, "lower": 1.9, "gap": 0.05, "closed": True}}
    assert plain_answer(closed, best=("P", 124.0)) == (
        "Within 5%: on `default`'s windows the offline optimum's mean bounded slowdown lies between 1.9 (proven) and 2 "
        "(the best schedule found), so F1's 246 is 123 to 129 times the optimum, and P closes 50.0% of F1's gap to it "
        "([the offline bound](docs/reference/bound.md)).")


def test_the_readme_answer_adds_each_closed_scenario_with_its_best_policy_not_a_baseline():
    from schedrl.bound.gap import best_policy, readme_answer

    open_ = {"name": "default", "metric": "bsld", "reference": "F1", "methods": {"F1": 246.0},
             "summary": {"upper": 2.0, "lower": 1.2, "gap": 0.4, "closed": False}}
    closed = {"name": "hpc2n", "metric": "bsld", "reference": "F1", "methods": {"F1": 100.0, "SJF": 10.0},
              "summary": {"upper": 1.0, "lower": 0.99, "gap": 0.01, "closed": True}}
    board = {"scenarios": [{"scenario": "hpc2n", "optimum": {"methods": {
        "SJF": {"value": 10.0, "share": 0.91}, "P": {"value": 50.5, "share": 0.5},
        "Q": {"value": 60.4, "share": 0.4}, "R": {"value": 70.0, "share": None}}}}]}
    assert best_policy(board, closed) == ("P", 50.5)  # SJF is a baseline of the bound: not a policy
    assert best_policy({"scenarios": []}, closed) is None
    said = readme_answer({"default": open_, "hpc2n": closed}, board)
    assert said.startswith("Not yet known to within 10%: on `default`'s windows")
    assert "Within 1%: on `hpc2n`'s windows" in said and "P closes 50.0% of F1's gap to it" in said
    assert "hpc2n" not in readme_answer({"default": open_, "hpc2n": {**closed, "summary": {
        **closed["summary"], "gap": 0.2, "closed": False}}}, board)
