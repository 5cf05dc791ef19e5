"""Issue 9's adversarial inputs (items 1, 6, 8, 9, 11), each as a named case through `schedrl`."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from harness import assert_clean_outcome, run_cli

from schedrl.duration import parse_duration
from schedrl.eval.compare import MAX_SEQUENCES, choose_starts
from schedrl.workload.catalog import load_trace
from schedrl.workload.sampling import random_starts

GOOD = "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1"


def trace(tmp_path, body: str, head: str = "; MaxProcs: 4\n", raw: bytes | None = None):
    path = tmp_path / "adv.swf"
    path.write_bytes(raw if raw is not None else (head + body).encode())
    return path


def jobs(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def line(job_id: int, submit: int = 0, run: int = 10, extra: str = "") -> str:
    return f"{job_id} {submit} 0 {run} 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1{extra}"


CASES = {
    # item 1: a job that ends before time 0
    "submit-plus-run-negative": (jobs(line(1, 0), line(6, -1000, 100)), r"dropped\s+1\s+submit time negative"),
    # item 8: report what the line has, not "-1 (unknown)"
    "run-time-minus-50": (jobs(line(1), line(2, run=-50)), r"dropped\s+1\s+run time negative \(e\.g\. -50\): invalid"),
    "duplicate-job-ids": (jobs(line(1), line(1, 5)), r"noted\s+1\s+job id already used by an earlier job"),
    "maxprocs-lots": ("; MaxProcs: lots\n" + jobs(line(1)), r"note: header `MaxProcs: lots` is not a positive number"),
    "maxprocs-zero": ("; MaxProcs: 0\n" + jobs(line(1)), r"note: header `MaxProcs: 0` is not a positive number"),
    # issue 10: a 19th column
    "priority-column": (jobs(line(1, extra=" 1"), line(2, 5, extra=" 0")), r"extra column   priority: 2 distinct"),
}


@pytest.mark.parametrize("body, expected", CASES.values(), ids=CASES.keys())
def test_traces_info_reports_what_the_file_has(tmp_path, body, expected):
    head = "" if body.startswith(";") else "; MaxProcs: 4\n"
    status, out, err = run_cli("traces", "info", str(trace(tmp_path, body, head)))
    assert status == 0, err
    assert re.search(expected, out), out
    status, out, err = run_cli("simulate", "--trace", str(trace(tmp_path, body, head)), "--json")
    assert status == 0 and json.loads(out)["jobs"] >= 1, err


REFUSED = {
    "utf8-bom-is-fine-but-binary-is-named": (b"\x00\x01" + GOOD.encode(), r"binary content \(byte 0x00\)"),
    "utf16": (("; MaxProcs: 4\n" + GOOD + "\n").encode("utf-16"), r"UTF-16 encoded text"),
    "extra-column-on-one-line-only": (jobs(line(1), line(2, extra=" 1")).encode(),
                                      r"adv.swf:2: expected 18 whitespace-separated fields, found 19"),
    "short-line": (jobs(line(1), "2 0 0 10").encode(), r"adv.swf:2: expected 18 whitespace-separated fields, found 4"),
}


@pytest.mark.parametrize("raw, expected", REFUSED.values(), ids=REFUSED.keys())
@pytest.mark.parametrize("command", [["traces", "info"], ["simulate", "--trace"]], ids=["info", "simulate"])
def test_unreadable_files_are_refused_in_one_line(tmp_path, raw, expected, command):
    argv = (*command, str(trace(tmp_path, "", raw=raw)))
    status, out, err = run_cli(*argv)
    assert_clean_outcome(status, out, err, argv)
    assert status == 2 and re.search(expected, err), err


def test_a_bom_is_skipped(tmp_path):
    status, out, err = run_cli("traces", "info", str(trace(tmp_path, "", raw=b"\xef\xbb\xbf; MaxProcs: 4\n" +
                                                                          GOOD.encode() + b"\n")))
    assert status == 0 and "note: the file starts with a UTF-8 byte-order mark: skipped" in out, err


# item 6: evaluation starts


@pytest.fixture(scope="module")
def default_trace():
    return load_trace("default")


def test_starts_are_distinct_and_keep_a_seed_s_draws_when_those_were_distinct(default_trace):
    n = len(default_trace)
    plain = random_starts(n, 64, 10, np.random.default_rng(1)).tolist()
    assert len(set(plain)) == 10
    assert choose_starts(default_trace, 64, 10, 1) == plain  # published tables keep their sequences
    many = choose_starts(default_trace, n - 10, 11, 0)  # 11 distinct windows exist: all of them
    assert sorted(many) == list(range(11))


def test_fewer_distinct_sequences_than_asked_are_used_and_said(default_trace):
    # `--eval-jobs 50000` on a 40,000-job trace reaches here as two sequences of the whole trace
    said = []
    assert choose_starts(default_trace, len(default_trace), 2, 7, warn=said.append) == [0]
    assert said == [f"'default' ({len(default_trace)} jobs) holds only 1 distinct sequence of "
                    f"{len(default_trace)} jobs; using 1 instead of 2"]


def test_absurd_sequence_counts_and_repeated_given_starts(default_trace):
    with pytest.raises(ValueError, match=rf"--sequences 100000 is more than {MAX_SEQUENCES} sequences"):
        choose_starts(default_trace, 2000, 100_000, 0)
    with pytest.raises(ValueError, match=r"a sequence of 50000 jobs is longer than 'default' \(40000 jobs\)"):
        choose_starts(default_trace, 50000, 2, 0)
    said = []
    assert choose_starts(default_trace, 64, 3, 0, [5, 5, 9], warn=said.append) == [5, 5, 9]
    assert said == ["start 5 given more than once: the same sequence is evaluated several times"]


# item 11: durations and lists


@pytest.mark.parametrize("value, seconds", [("90s", 90), ("20m", 1200), ("1.5h", 5400), ("2d", 172800), (90, 90),
                                            (2.5, 2.5), (None, None)])
def test_durations_with_units_and_yaml_numbers(value, seconds):
    assert parse_duration(value, "time_budget") == seconds


def test_a_duration_string_without_unit_is_refused_with_a_hint():
    with pytest.raises(ValueError, match=r"--time-budget 5 has no unit: write 5s, 5m or 5h \(seconds, minutes, hours\)"):
        parse_duration("5", "--time-budget")
    assert parse_duration("5", "x", bare_seconds=True) == 5
    for bad in ("0s", "-5m", "soon", True):
        with pytest.raises(ValueError):
            parse_duration(bad, "--time-budget")


def test_a_trailing_comma_in_a_policy_list_is_refused(tmp_path):
    argv = ("compare", "--trace", "default", "--policies", "fcfs,", "--starts", "0", "--jobs", "64", "--no-progress")
    status, out, err = run_cli(*argv)
    assert_clean_outcome(status, out, err, argv)
    assert "policy list 'fcfs,' in --policies has an empty entry: remove the stray comma" in err


# item 9: walltime kills


def test_a_lanl_cm5_like_trace_warns_about_walltime_kills(tmp_path):
    body = jobs(*(line(i, 10 * i, run=10 if i % 3 else 500) for i in range(1, 31)))
    status, out, err = run_cli("simulate", "--trace", str(trace(tmp_path, body)))
    assert status == 0 and "warning: 33.3% of the jobs (10 of 30)" in err and "--no-kill" in err
