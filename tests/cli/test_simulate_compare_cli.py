"""`schedrl simulate` and `schedrl compare` in-process: their numbers against the same runs made with the
library directly, every output format, plots, seeded sequences, and one-line input errors (exit status 2)."""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from schedrl.heuristics import get_heuristic
from schedrl.metrics import Metrics, summarize
from schedrl.sim import SimConfig, Simulator
from schedrl.workload.catalog import load_trace
from schedrl.workload.cleaning import CleaningRules
from schedrl.workload.sampling import sequence
from schedrl.workload.workload import Workload
from cli_process import cli

JOBS = 128
STARTS = [0, 300, 900]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# the 18-field SWF job line of TINY's first job; line 4 of the malformed file drops its last field
GOOD_LINE = "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1"


@pytest.fixture(scope="module")
def workload() -> Workload:
    """The embedded `default` trace, cleaned as the CLI cleans it without --cleaning/--preset."""
    return load_trace("default", CleaningRules.preset("default"))


def library_metrics(workload: Workload, policy: str, start: int, jobs: int = JOBS, **config) -> Metrics:
    """The reference: one heuristic on one sequence, run through the library without the CLI."""
    schedule = get_heuristic(policy).run(Simulator(sequence(workload, start, jobs), SimConfig(**config)))
    return summarize(schedule)


def cli_json(capsys, *args: str) -> dict:
    status, out, err = cli(capsys, *args, "--json")
    assert status == 0, err
    return json.loads(out)


COMPARE = ("compare", "--trace", "default", "--policies", "fcfs,sjf,f1", "--backfill", "none,easy",
           "--starts", ",".join(map(str, STARTS)), "--jobs", str(JOBS), "--no-progress")


# ---------------------------------------------------------------------------------------------- simulate

@pytest.mark.parametrize("policy,backfill,discipline,start", [
    ("sjf", "easy", "pick-and-wait", 100),
    ("f1", "none", "list", 700),
    ("wfp3", "conservative", "list", 1500),
])
def test_simulate_json_equals_the_library_run_of_the_same_policy_and_config(capsys, workload, policy, backfill,
                                                                             discipline, start):
    data = cli_json(capsys, "simulate", "--trace", "default", "--policy", policy, "--backfill", backfill,
                    "--discipline", discipline, "--start", str(start), "--jobs", str(JOBS))
    ref = library_metrics(workload, policy, start, backfill=backfill, discipline=discipline)
    # the options matter: the default config gives other numbers on the same sequence
    assert ref.avg_bsld != library_metrics(workload, policy, start).avg_bsld
    assert data["policy"] == policy and data["trace"] == "default" and data["start"] == start
    assert data["config"]["backfill"] == backfill and data["config"]["discipline"] == discipline
    assert data["config"]["kill_at_limit"] is True and data["config"]["window"] == 0
    assert data["jobs"] == ref.jobs == JOBS
    assert data["killed"] == ref.killed
    for key in ("avg_bsld", "avg_wait", "avg_turnaround", "avg_slowdown", "max_wait", "utilization"):
        assert data[key] == pytest.approx(getattr(ref, key), rel=1e-12), key


def test_simulate_without_jobs_runs_to_the_end_of_the_trace(capsys, workload):
    start = len(workload) - JOBS
    data = cli_json(capsys, "simulate", "--trace", "default", "--policy", "fcfs", "--start", str(start))
    ref = library_metrics(workload, "fcfs", start)
    assert data["jobs"] == JOBS
    assert data["avg_bsld"] == pytest.approx(ref.avg_bsld, rel=1e-12)


def test_simulate_text_names_the_policy_and_writes_a_gantt_png(capsys, workload, tmp_path):
    png = tmp_path / "gantt.png"
    status, out, err = cli(capsys, "simulate", "--trace", "default", "--policy", "unicep", "--backfill", "easy",
                           "--start", "300", "--jobs", str(JOBS), "--plot", str(png))
    assert status == 0, err
    ref = library_metrics(workload, "unicep", 300, backfill="easy")
    first = out.splitlines()[0]
    assert first.startswith(f"unicep on default jobs [300, {300 + JOBS})") and "backfill easy" in first
    values = dict(line.split() for line in out.splitlines()[1:] if len(line.split()) == 2)
    assert float(values["avg_bsld"]) == pytest.approx(ref.avg_bsld, abs=5e-5)
    assert float(values["avg_wait"]) == pytest.approx(ref.avg_wait, abs=5e-5)
    assert int(values["killed"]) == ref.killed
    assert f"gantt chart written to {png}" in out
    data = png.read_bytes()
    assert len(data) > len(PNG_MAGIC) and data.startswith(PNG_MAGIC)


# ---------------------------------------------------------------------------------------------- compare

def test_compare_json_per_sequence_values_and_means_equal_the_library(capsys, workload):
    data = cli_json(capsys, *COMPARE)
    assert data["trace"] == "default" and data["metric"] == "bsld"
    assert data["starts"] == STARTS and data["jobs"] == JOBS
    assert [(r["backfill"], r["policy"]) for r in data["results"]] == [
        (b, p) for b in ("none", "easy") for p in ("fcfs", "sjf", "f1")]
    for row in data["results"]:
        expected = [library_metrics(workload, row["policy"], s, backfill=row["backfill"]).avg_bsld for s in STARTS]
        assert row["per_sequence"] == pytest.approx(expected, rel=1e-12), (row["backfill"], row["policy"])
        assert row["mean"] == pytest.approx(statistics.fmean(expected), rel=1e-12)
    # backfilling is not a no-op here: EASY improves FCFS on these sequences
    cell = {(r["backfill"], r["policy"]): r["mean"] for r in data["results"]}
    assert cell[("easy", "fcfs")] < cell[("none", "fcfs")]


def test_compare_discipline_option_reaches_every_run(capsys, workload):
    data = cli_json(capsys, "compare", "--trace", "default", "--policies", "f1", "--backfill", "none",
                    "--discipline", "list", "--starts", "700", "--jobs", str(JOBS))
    assert data["config"]["discipline"] == "list"
    ref = library_metrics(workload, "f1", 700, discipline="list").avg_bsld
    assert ref != library_metrics(workload, "f1", 700).avg_bsld
    assert data["results"][0]["per_sequence"] == pytest.approx([ref], rel=1e-12)


def test_compare_random_sequences_are_deterministic_in_the_seed(capsys, workload):
    args = ("compare", "--trace", "default", "--policies", "fcfs,sjf", "--backfill", "easy",
            "--sequences", "4", "--jobs", str(JOBS), "--no-progress")
    first = cli_json(capsys, *args, "--seed", "7")
    again = cli_json(capsys, *args, "--seed", "7")
    other = cli_json(capsys, *args, "--seed", "8")
    assert first == again
    assert len(first["starts"]) == len(other["starts"]) == 4
    assert first["starts"] != other["starts"]
    for starts in (first["starts"], other["starts"]):
        assert all(0 <= s <= len(workload) - JOBS for s in starts)
    for row in first["results"]:
        expected = [library_metrics(workload, row["policy"], s, backfill="easy").avg_bsld for s in first["starts"]]
        assert row["per_sequence"] == pytest.approx(expected, rel=1e-12)


def test_compare_csv_and_markdown_carry_the_json_means(capsys):
    data = cli_json(capsys, *COMPARE)
    means = {(r["backfill"], r["policy"]): r["mean"] for r in data["results"]}
    per_seq = {(r["backfill"], r["policy"]): r["per_sequence"] for r in data["results"]}

    status, out, err = cli(capsys, *COMPARE, "--csv")
    assert status == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["backfill", "policy", "mean"] + [f"seq{s}" for s in STARTS]
    assert {(r["backfill"], r["policy"]) for r in rows} == set(means) and len(rows) == len(means)
    for r in rows:
        key = (r["backfill"], r["policy"])
        assert float(r["mean"]) == pytest.approx(means[key], rel=1e-5)  # printed with 6 significant digits
        assert [float(r[f"seq{s}"]) for s in STARTS] == pytest.approx(per_seq[key], rel=1e-5)

    status, out, err = cli(capsys, *COMPARE, "--markdown")
    assert status == 0, err
    table = [[c.strip() for c in line.strip().strip("|").split("|")] for line in out.strip().splitlines()]
    assert table[0] == ["backfill", "FCFS", "SJF", "F1"]
    assert set("".join(table[1])) <= set("-")
    assert [r[0] for r in table[2:]] == ["none", "easy"]
    for r in table[2:]:
        row_means = {p: means[(r[0], p)] for p in ("fcfs", "sjf", "f1")}
        best = min(row_means, key=row_means.get)  # bsld: lower is better
        for p, cellv in zip(("fcfs", "sjf", "f1"), r[1:]):
            assert cellv.rstrip("*") == f"{row_means[p]:.2f}"
            assert cellv.endswith("*") == (p == best), (r[0], p, cellv)


def test_compare_text_table_and_bar_chart(capsys, tmp_path):
    png = tmp_path / "bars.png"
    status, out, err = cli(capsys, *COMPARE, "--plot", str(png))
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"avg bsld on default: mean over {len(STARTS)} sequences of {JOBS} jobs")
    assert lines[1].split() == ["backfill", "FCFS", "SJF", "F1"]
    assert [line.split()[0] for line in lines[3:]] == ["none", "easy"]
    data = png.read_bytes()
    assert len(data) > len(PNG_MAGIC) and data.startswith(PNG_MAGIC)


def test_compare_metric_option_changes_the_reported_metric(capsys, workload):
    bsld = cli_json(capsys, *COMPARE)
    wait = cli_json(capsys, *COMPARE, "--metric", "wait")
    assert wait["metric"] == "wait"
    for row, bsld_row in zip(wait["results"], bsld["results"]):
        expected = [library_metrics(workload, row["policy"], s, backfill=row["backfill"]).avg_wait for s in STARTS]
        assert row["per_sequence"] == pytest.approx(expected, rel=1e-12)
        assert row["per_sequence"] != pytest.approx(bsld_row["per_sequence"])
    status, out, err = cli(capsys, *COMPARE, "--metric", "wait")
    assert status == 0, err
    assert out.startswith("avg wait on default")


def test_compare_util_metric_reports_one_resource_of_an_augmented_trace(capsys, workload):
    """`--metric util:bb` on an S4-augmented trace: each sequence's burst-buffer busy fraction as the library
    computes it, higher is better, printed in percent; a resource the trace lacks is one input error."""
    args = ("compare", "--trace", "default", "--augment", "S4", "--policies", "fcfs,sjf", "--backfill", "easy",
            "--discipline", "list", "--window", "10", "--starts", "0,900", "--jobs", str(JOBS), "--no-progress")
    found = cli_json(capsys, *args, "--metric", "util:bb")
    for row in found["results"]:
        assert len(row["per_sequence"]) == 2 and all(0.0 < v <= 1.0 for v in row["per_sequence"])
    procs = cli_json(capsys, *args, "--metric", "util:procs")
    plain = cli_json(capsys, *args, "--metric", "utilization")  # resource 0 is what `utilization` reports
    assert [r["per_sequence"] for r in procs["results"]] == [r["per_sequence"] for r in plain["results"]]
    assert [r["per_sequence"] for r in procs["results"]] != [r["per_sequence"] for r in found["results"]]
    status, out, err = cli(capsys, *args, "--metric", "util:bb")
    assert status == 0, err
    best = max(found["results"], key=lambda r: r["mean"])
    assert out.startswith("bb utilisation on default+S4")
    assert f"{100 * best['mean']:.1f}%*" in out  # the highest utilisation is the best
    status, _, err = cli(capsys, *args, "--metric", "util:power")
    assert_input_error(status, err, r"--metric util:power: default\+S4 has no resource 'power' \(its resources: "
                                    r"procs, bb;")


# ---------------------------------------------------------------------------------------------- input errors

def assert_input_error(status: int, err: str, pattern: str, argparse_usage: bool = False) -> None:
    """Exit status 2 and one `error:` line matching pattern; argparse's own rejections print a usage first."""
    assert status == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    errors = [line for line in lines if "error:" in line]
    assert len(errors) == 1, err
    if not argparse_usage:
        assert len(lines) == 1, err
    assert re.search(pattern, errors[0]), errors[0]


@pytest.fixture
def malformed_swf(tmp_path) -> Path:
    """Two comment lines, two good jobs, then a job line with 17 fields on line 5."""
    path = tmp_path / "malformed.swf"
    short = GOOD_LINE.replace("1 ", "3 ", 1).rsplit(" ", 1)[0]
    assert len(short.split()) == 17
    path.write_text(f"; Version: 2.2\n; MaxProcs: 8\n{GOOD_LINE}\n{GOOD_LINE.replace('1 ', '2 ', 1)}\n{short}\n")
    return path


def test_unknown_policy_is_an_input_error(capsys):
    status, _, err = cli(capsys, "simulate", "--trace", "default", "--policy", "nosuch", "--jobs", str(JOBS))
    assert_input_error(status, err, r"^schedrl simulate: error: unknown policy 'nosuch'")
    status, _, err = cli(capsys, "compare", "--trace", "default", "--policies", "fcfs,nosuch", "--starts", "0",
                         "--jobs", str(JOBS))
    assert_input_error(status, err, r"^schedrl compare: error: unknown policy 'nosuch'")


def test_unknown_backfill_is_an_input_error(capsys):
    status, _, err = cli(capsys, "compare", "--trace", "default", "--backfill", "none,bogus", "--starts", "0",
                         "--jobs", str(JOBS))
    assert_input_error(status, err, r"^schedrl compare: error: unknown backfill strategy bogus; choose from none, easy")
    status, _, err = cli(capsys, "simulate", "--trace", "default", "--backfill", "bogus", "--jobs", str(JOBS))
    assert_input_error(status, err, r"^schedrl simulate: error: argument --backfill: invalid choice: 'bogus'",
                       argparse_usage=True)


def test_unknown_metric_and_empty_sequence_count_are_input_errors(capsys):
    status, _, err = cli(capsys, "compare", "--trace", "default", "--metric", "speed", "--starts", "0")
    assert_input_error(status, err, r"unknown metric 'speed'; choose from bsld, wait")
    # no sequences would average over nothing (a table of nan), so it is refused
    status, out, err = cli(capsys, "compare", "--trace", "default", "--sequences", "0", "--jobs", str(JOBS))
    assert_input_error(status, err, r"--sequences must be >= 1, got 0")
    assert out == ""


def test_start_beyond_the_trace_is_an_input_error(capsys, workload):
    n = len(workload)
    late = n - JOBS // 2
    past = rf"sequence \[{late}, {late + JOBS}\) runs past the end of 'default' \({n} jobs\); start must be <= {n - JOBS}"
    status, _, err = cli(capsys, "simulate", "--trace", "default", "--start", str(late), "--jobs", str(JOBS))
    assert_input_error(status, err, past)
    status, _, err = cli(capsys, "compare", "--trace", "default", "--starts", f"0,{late}", "--jobs", str(JOBS))
    assert_input_error(status, err, past)
    # without --jobs the sequence runs to the end: a start at or past it is named as such
    status, _, err = cli(capsys, "simulate", "--trace", "default", "--start", str(n))
    assert_input_error(status, err, rf"--start {n} is outside 'default' \({n} jobs\)")


def test_invalid_simulator_option_is_an_input_error(capsys):
    status, _, err = cli(capsys, "simulate", "--trace", "default", "--discipline", "list", "--window", "-1",
                         "--jobs", str(JOBS))
    assert_input_error(status, err, r"^schedrl simulate: error: .*window must be >= 0, got -1")


@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_missing_trace_file_is_an_input_error(capsys, tmp_path, command):
    absent = tmp_path / "absent.swf"
    status, _, err = cli(capsys, command, "--trace", str(absent), "--jobs", "1")
    assert_input_error(status, err, rf"^schedrl {command}: error: {re.escape(str(absent))}: no such file")


@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_malformed_swf_error_names_the_file_and_line(capsys, malformed_swf, command):
    status, _, err = cli(capsys, command, "--trace", str(malformed_swf), "--jobs", "1")
    assert_input_error(status, err, rf"^schedrl {command}: error: {re.escape(str(malformed_swf))}:5: "
                                    r"expected 18 whitespace-separated fields, found 17$")


@pytest.mark.integration  # the entry point as a subprocess
def test_malformed_swf_from_the_command_line_prints_no_traceback(malformed_swf):
    proc = subprocess.run([sys.executable, "-m", "schedrl", "simulate", "--trace", str(malformed_swf)],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout == ""
    assert_input_error(proc.returncode, proc.stderr, rf"{re.escape(str(malformed_swf))}:5: expected 18")


# --- issue 9: adversarial input as named regressions ------------------------------------------------


def test_a_job_ending_before_time_zero_is_cleaned_away_and_simulated(capsys, tmp_path):
    # issue 9 item 1: `6 -1000 0 100 ...` used to pass cleaning and crash the metrics with a traceback
    lines = [GOOD_LINE.replace("1 0 0 10", f"{i} {10 * i} 0 10", 1) for i in range(1, 6)]
    lines.append("6 -1000 0 100 1 -1 -1 1 200 -1 1 1 1 1 1 1 -1 -1")
    path = tmp_path / "neg.swf"
    path.write_text("; MaxProcs: 4\n" + "\n".join(lines) + "\n")
    status, out, err = cli(capsys, "traces", "info", str(path))
    assert status == 0, err
    assert re.search(r"dropped\s+1\s+submit time negative \(e\.g\. -1000\) \(e\.g\. lines 7\)", out), out
    status, out, err = cli(capsys, "simulate", "--trace", str(path), "--json")
    assert status == 0 and json.loads(out)["jobs"] == 5, err
    # kept without cleaning, the simulator refuses it with the rule to use, in one line
    status, _, err = cli(capsys, "simulate", "--trace", str(path), "--cleaning", "none")
    assert_input_error(status, err, r"negative submit time \(-1000\): clean the trace \(cleaning rule negative_submit")


@pytest.mark.parametrize("policies", ["fcfs,", ",fcfs", "fcfs,,sjf", " , "])
def test_an_empty_policy_list_entry_is_refused(capsys, policies):
    status, out, err = cli(capsys, "compare", "--trace", "default", "--policies", policies, "--starts", "0",
                           "--jobs", str(JOBS))
    assert_input_error(status, err, r"^schedrl compare: error: (policy list .* in --policies has an empty entry: "
                                    r"remove the stray comma|empty policy list in --policies)$")
    assert out == ""
    status, _, err = cli(capsys, "compare", "--trace", "default", "--starts", "0,", "--jobs", str(JOBS))
    assert_input_error(status, err, r"start list '0,' in --starts has an empty entry")


def test_compare_draws_distinct_starts_and_says_when_fewer_exist(capsys, workload):
    # issue 9 item 6: five sequences of the whole default trace used to be [0, 0, 0, 0, 0]
    n = len(workload)
    result = cli_json(capsys, "compare", "--trace", "default", "--policies", "fcfs", "--sequences", "5",
                      "--jobs", str(n), "--no-progress")
    assert result["starts"] == [0]
    status, out, err = cli(capsys, "compare", "--trace", "default", "--policies", "fcfs", "--sequences", "5",
                           "--jobs", str(n - 2), "--no-progress", "--json")
    assert status == 0 and sorted(json.loads(out)["starts"]) == [0, 1, 2]
    assert f"warning: 'default' ({n} jobs) holds only 3 distinct sequences of {n - 2} jobs; using all 3 instead of 5" in err
    status, out, err = cli(capsys, "compare", "--trace", "default", "--sequences", "100000", "--jobs", "2000")
    assert_input_error(status, err, r"--sequences 100000 is more than 10000 sequences")
    assert out == ""


def test_many_walltime_kills_are_warned_about_with_the_way_out(capsys, tmp_path):
    # issue 9 item 9: LANL-CM5 loses a third of its jobs to the walltime kill; say so on stderr
    lines = [f"{i} {10 * i} 0 {100 if i % 3 else 500} 1 -1 -1 1 200 -1 1 1 1 1 1 1 -1 -1" for i in range(1, 31)]
    path = tmp_path / "kills.swf"
    path.write_text("; MaxProcs: 4\n" + "\n".join(lines) + "\n")
    status, out, err = cli(capsys, "simulate", "--trace", str(path), "--json")
    assert status == 0 and json.loads(out)["killed"] == 10
    assert ("warning: 33.3% of the jobs (10 of 30) run longer than their requested time and are killed at it "
            "(walltime kill, on by default): this changes every metric; pass --no-kill") in err
    status, _, err = cli(capsys, "compare", "--trace", str(path), "--policies", "fcfs", "--starts", "0,5",
                         "--jobs", "20", "--no-progress")
    assert status == 0 and "warning: 32.5% of the jobs (13 of 40)" in err  # over both sequences
    for command in (["simulate"], ["compare", "--starts", "0", "--jobs", "20", "--no-progress"]):
        status, _, err = cli(capsys, *command, "--trace", str(path), "--no-kill")
        assert status == 0 and "warning" not in err
    status, _, err = cli(capsys, "simulate", "--trace", "default", "--jobs", str(JOBS))
    assert status == 0 and "warning" not in err  # the default trace has perfect estimates
