"""`schedrl bound` on the command line: a tiny trace bounded to its optimum, the saved schedules, and one `error:` line
for each bad input (a job wider than the machine, a time limit of 0, a window too large for the memory)."""

from __future__ import annotations

import json

import pytest

from cli_process import cli

pytest.importorskip("ortools")
pytest.importorskip("highspy")


def one_error(status: int, err: str, text: str) -> None:
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("schedrl bound: error: ") and text in lines[0], lines[0]


def swf(tmp_path, rows, procs=4):
    path = tmp_path / "tiny.swf"
    lines = [f"{i + 1} {s} 0 {r} {p} -1 -1 {p} {q} -1 1 1 1 1 1 1 -1 -1" for i, (s, r, q, p) in enumerate(rows)]
    path.write_text(f"; MaxProcs: {procs}\n; MaxNodes: {procs}\n" + "\n".join(lines) + "\n")
    return path


ROWS = [(0, 30, 40, 3), (1, 20, 30, 2), (2, 5, 10, 2), (3, 40, 50, 1), (5, 8, 10, 4), (6, 12, 20, 1)]


def test_a_tiny_trace_is_bounded_to_its_optimum_and_its_schedules_saved(capsys, tmp_path):
    path = swf(tmp_path, ROWS)
    status, out, err = cli(capsys, "bound", "--trace", str(path), "--starts", "0", "--jobs", "6", "--time-limit", "10",
                           "--workers", "1", "--json", "--out", str(tmp_path / "b.json"),
                           "--schedules", str(tmp_path / "s"))
    assert status == 0, err
    (result,) = json.loads(out)
    (w,) = result["windows"]
    assert w["status"] == "OPTIMAL" and w["gap"] == pytest.approx(0.0, abs=1e-12)
    assert w["upper"] <= min(w["warm"].values())
    assert "window 1/1 (start 0, 6 jobs): best found" in err
    assert json.loads((tmp_path / "b.json").read_text())[0]["windows"][0]["upper"] == w["upper"]
    rows = (tmp_path / "s" / "tiny.swf" / "window-0.csv").read_text().splitlines()
    assert rows[1] == "job_id,submit,start,end" and len(rows) == 2 + len(ROWS)


def test_a_job_wider_than_the_machine_is_one_error_line(capsys, tmp_path):
    path = swf(tmp_path, [*ROWS[:-1], (6, 12, 20, 4)], procs=4)
    path.write_text(path.read_text().replace("12 4 -1 -1 4", "12 9 -1 -1 9"))
    status, _, err = cli(capsys, "bound", "--trace", str(path), "--starts", "0", "--jobs", "6", "--cleaning", "none")
    one_error(status, err, "requests 9 procs, more than the machine's 4")


@pytest.mark.parametrize("limit, message", [("0", "--time-limit must be a positive number of seconds"),
                                            ("-1", "--time-limit must be a positive number of seconds"),
                                            ("nan", "argument --time-limit: must be a finite number")])
def test_a_time_limit_that_is_not_positive_is_one_error_line(capsys, tmp_path, limit, message):
    status, _, err = cli(capsys, "bound", "--trace", str(swf(tmp_path, ROWS)), "--starts", "0", "--jobs", "6",
                         "--time-limit", limit)
    one_error(status, err, message)


def test_a_window_too_large_for_the_memory_is_one_error_line(capsys, tmp_path, monkeypatch):
    from schedrl.bound import windows

    monkeypatch.setattr(windows, "BYTES_PER_JOB", 2**50)
    status, _, err = cli(capsys, "bound", "--trace", str(swf(tmp_path, ROWS)), "--starts", "0", "--jobs", "6")
    one_error(status, err, "a window of 6 jobs needs about")


def test_windows_outside_the_trace_and_missing_options_are_one_error_line(capsys, tmp_path):
    path = str(swf(tmp_path, ROWS))
    status, _, err = cli(capsys, "bound", "--trace", path, "--starts", "3", "--jobs", "6")
    one_error(status, err, "--starts 3: a window of 6 jobs must lie in the trace's 6 jobs")
    status, _, err = cli(capsys, "bound", "--trace", path)
    one_error(status, err, "--trace needs --starts")
    status, _, err = cli(capsys, "bound")
    one_error(status, err, "give --scenario NAME")
    status, _, err = cli(capsys, "bound", "--scenario", "rlschert-vasp", "--sequences", "1")
    one_error(status, err, "runs on the discrete-time cluster")


def test_a_deterministic_limit_gives_the_same_bounds_twice(capsys, tmp_path):
    path = str(swf(tmp_path, ROWS * 1))
    runs = []
    for _ in range(2):
        status, out, err = cli(capsys, "bound", "--trace", path, "--starts", "0", "--jobs", "6", "--work", "2",
                               "--json")
        assert status == 0, err
        runs.append([(w["upper"], w["lower"], w["status"]) for w in json.loads(out)[0]["windows"]])
    assert runs[0] == runs[1] and json.loads(out)[0]["work"] == 2.0
    status, _, err = cli(capsys, "bound", "--trace", path, "--starts", "0", "--jobs", "6", "--work", "0")
    one_error(status, err, "--work must be a positive number of work units")


def test_a_policy_warm_starts_the_window_and_a_bad_one_is_one_error_line(capsys, tmp_path):
    path = str(swf(tmp_path, ROWS))
    status, out, err = cli(capsys, "bound", "--trace", path, "--starts", "0", "--jobs", "6", "--time-limit", "5",
                           "--workers", "1", "--policy", "wfp3-rlscheduler", "--json")
    assert status == 0, err
    warm = json.loads(out)[0]["windows"][0]["warm"]
    assert any("wfp3-rlscheduler" in label.lower() for label in warm), list(warm)
    status, _, err = cli(capsys, "bound", "--trace", path, "--starts", "0", "--jobs", "6", "--policy", "nope")
    one_error(status, err, "--policy nope:")


def test_the_relaxations_slots_are_chosen_on_the_command_line(capsys, tmp_path):
    path = swf(tmp_path, ROWS)
    args = ("bound", "--trace", str(path), "--starts", "0", "--jobs", "6", "--time-limit", "5", "--workers", "1",
            "--json")
    status, out, err = cli(capsys, *args, "--lp-slots", "16")
    assert status == 0, err
    (result,) = json.loads(out)
    assert (result["lagrange_slots"], result["lp_slots"]) == (128, 16)
    assert {"cuts", "lp"} <= set(result["windows"][0]["lowers"])
    status, out, err = cli(capsys, *args, "--lagrange-slots", "0")
    assert status == 0, err
    assert not {"cuts", "lagrange", "lp"} & set(json.loads(out)[0]["windows"][0]["lowers"])
    status, _, err = cli(capsys, *args, "--lagrange-slots", "-1")
    one_error(status, err, "--lagrange-slots")
    status, out, err = cli(capsys, *args, "--cut-rounds", "0")
    assert status == 0, err
    assert json.loads(out)[0]["cut_rounds"] == 0 and "cuts" in json.loads(out)[0]["windows"][0]["lowers"]
    status, _, err = cli(capsys, *args, "--cut-rounds", "-1")
    one_error(status, err, "--cut-rounds")


@pytest.mark.parametrize("share", ["1", "-0.1", "nan"])
def test_a_local_search_share_outside_zero_to_one_is_one_error_line(capsys, tmp_path, share):
    status, _, err = cli(capsys, "bound", "--trace", str(swf(tmp_path, ROWS)), "--starts", "0", "--jobs", "6",
                         "--lns", share)
    one_error(status, err, "--lns")


def test_a_long_time_limit_prints_each_phase_of_each_window_and_a_short_one_only_the_window(capsys, tmp_path):
    # from PHASE_LINES (60 s) on, a window's phases say what they did as they go; the tiny window is solved within a
    # second either way (the local search solves it whole, CP-SAT proves it)
    path = swf(tmp_path, ROWS)
    args = ("bound", "--trace", str(path), "--starts", "0", "--jobs", "6", "--workers", "1")
    status, _, err = cli(capsys, *args, "--time-limit", "60")
    assert status == 0, err
    phases = [line for line in err.splitlines() if line.startswith(f"schedrl bound: {path}: window 1/1: ")]
    assert any(": window 1/1: lns: " in line for line in phases), err
    assert any(": window 1/1: cp-sat optimal" in line for line in phases), err
    status, _, err = cli(capsys, *args, "--time-limit", "10")
    assert status == 0 and ": window 1/1: lns:" not in err and "window 1/1 (start 0, 6 jobs): best found" in err
