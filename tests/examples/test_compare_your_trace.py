"""`examples/compare_your_trace.py`: an SWF file read and cleaned as the command line reads it, and its comparison the
same as `schedrl compare --trace FILE ...` gives."""

from __future__ import annotations

import json

import pytest

from example_scripts import load_example

ARGS = ["--backfill", "none,easy", "--sequences", "3", "--jobs", "256", "--seed", "1"]


@pytest.fixture(scope="module")
def example():
    return load_example("compare_your_trace")


def test_the_stand_in_trace_is_cleaned_of_its_two_log_lines(example, tmp_path):
    from schedrl.workload.catalog import load_trace

    workload = load_trace(example.write_stand_in(tmp_path / "trace.swf"))
    assert (workload.report.jobs_in, workload.report.jobs_out) == (2002, 2000)
    assert {a.action for a in workload.report.actions} == {"dropped"}
    assert 2001 not in workload.job_id and 2002 not in workload.job_id


def test_the_example_compares_as_the_command_line_does(example, tmp_path, capsys):
    from schedrl.cli.main import main as schedrl

    path = example.write_stand_in(tmp_path / "mine.swf")
    result = example.main([str(path), *ARGS])
    printed = capsys.readouterr().out
    assert "kept 2000 of 2002 jobs" in printed and result.to_text() in printed
    assert schedrl(["compare", "--trace", str(path), *ARGS, "--json", "--no-progress"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["starts"] == result.starts and cli["jobs"] == 256
    assert {(r["backfill"], r["policy"]): r["per_sequence"] for r in cli["results"]} == result.values
    # the heuristics differ on this trace (the table says something) and backfilling lowers FCFS's slowdown
    assert len({result.mean("none", p) for p in result.policies}) == 5
    assert result.mean("easy", "fcfs") < result.mean("none", "fcfs")
