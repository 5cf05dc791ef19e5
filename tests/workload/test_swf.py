"""The SWF reader and writer on tiny hand-written files, messy headers, bad input and the real traces."""

from __future__ import annotations

import gzip
import json
import re
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_traces import SHARED_TRACES, shared_trace
from schedrl.workload import CleaningRules, TraceError, Workload, read_swf, write_swf
from schedrl.workload.fields import FIELD_NAMES, SWF_FIELDS
from schedrl.workload.header import parse_header
from schedrl.workload.swf import read_bytes

# a completed 4-processor job: submitted at 0, waited 10 s, ran 100 s of the 200 s requested
BASE_JOB = dict(job_id=1, submit=0, wait=10, run=100, procs_alloc=4, cpu_avg=-1, mem_used=-1, procs_req=4,
                time_req=200, mem_req=-1, status=1, user=1, group=1, app=1, queue=1, partition=1,
                prev_job=-1, think_time=-1)


def job(**fields) -> str:
    """One SWF job line: BASE_JOB with some fields replaced."""
    values = {**BASE_JOB, **fields}
    return " ".join(str(values[name]) for name in FIELD_NAMES)


def write(tmp_path: Path, name: str, text: str, gz: bool = False) -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode(), mtime=0) if gz else text.encode())
    return path


HEADER = "; Version: 2.2\n; MaxNodes: 16\n; MaxProcs: 16\n"


# --- reading -------------------------------------------------------------------------------------


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_reads_jobs_and_header(tmp_path, gz):
    text = HEADER + job(job_id=1) + "\n" + job(job_id=2, submit=30, run=50, procs_req=8, procs_alloc=8) + "\n"
    wl = read_swf(write(tmp_path, "tiny.swf" + (".gz" if gz else ""), text, gz), use_cache=False)
    assert wl.name == "tiny"
    assert len(wl) == 2
    assert wl.job_id.tolist() == [1, 2]
    assert wl.submit.tolist() == [0, 30]
    assert wl.run.tolist() == [100, 50]
    assert wl.procs_req.tolist() == [4, 8]
    assert (wl.max_procs, wl.max_nodes) == (16, 16)
    assert wl.header.version == "2.2"
    assert all(wl.columns[f.name].dtype == f.dtype for f in SWF_FIELDS)


def test_plain_and_gz_give_the_same_workload_and_checksum(tmp_path):
    text = HEADER + "\n".join(job(job_id=i, submit=10 * i) for i in range(1, 6)) + "\n"
    plain = read_swf(write(tmp_path, "a.swf", text), use_cache=False)
    packed = read_swf(write(tmp_path, "a.swf.gz", text, gz=True), use_cache=False)
    assert plain.sha256 == packed.sha256
    for name in FIELD_NAMES:
        np.testing.assert_array_equal(plain.columns[name], packed.columns[name])


def test_blank_lines_crlf_tabs_comments_between_jobs_and_no_final_newline(tmp_path):
    text = (HEADER + "\n" + job(job_id=1).replace(" ", "\t") + "\r\n\n; a note between jobs\n   "
            + job(job_id=2, submit=5))
    wl = read_swf(write(tmp_path, "odd.swf", text), use_cache=False)
    assert wl.job_id.tolist() == [1, 2]
    assert wl.report.jobs_in == 2


def test_float_fields_keep_fractions(tmp_path):
    wl = read_swf(write(tmp_path, "f.swf", HEADER + job(cpu_avg="12.5", mem_used="1e3") + "\n"), use_cache=False)
    assert wl.cpu_avg.tolist() == [12.5]
    assert wl.mem_used.tolist() == [1000.0]


@pytest.mark.parametrize(
    "header, nodes, procs",
    [
        ("; MaxNodes: 338 (batch partition; 512 total)\n; MaxProcs: 338\n", 338, 338),
        ("; MaxNodes: 184  ( 6,  171,   7)\n; MaxProcs: 1664 (72, 1368, 224)\n", 184, 1664),
        ("; Version: SWF v2\n;MaxNodes: 1524\n; MaxProcs: 1524\n", 1524, 1524),
        ("; MaxNodes: 256\n", 256, 256),
        ("; MaxProcs: 24515\n", 24515, 24515),
        (";   --- SWF file converted from SACCT ---\n; Version: 2.2\n; MaxNodes: 5544\n; MaxProcs: 93312\n", 5544, 93312),
        (";MaxNodes:64\n;MaxProcs:128\n", 64, 128),
    ],
    ids=["annotated-nodes", "per-partition-list", "swf-v2-no-space", "missing-maxprocs", "missing-maxnodes",
         "free-first-line", "no-spaces-at-all"],
)
def test_messy_headers_give_the_machine_size(tmp_path, header, nodes, procs):
    wl = read_swf(write(tmp_path, "h.swf", header + job() + "\n"), use_cache=False)
    assert (wl.max_nodes, wl.max_procs) == (nodes, procs)


def test_header_keeps_raw_text_and_free_comments(tmp_path):
    text = ";   --- converted ---\n;Version: SWF v2\n; MaxNodes: 338 (batch partition; 512 total)\n" \
           "; Note: first\n; Note: second\n" + job() + "\n"
    header = read_swf(write(tmp_path, "h.swf", text), use_cache=False).header
    assert header.version == "SWF v2"
    assert header.max_nodes == 338
    assert header.max_procs is None
    assert header.get_raw("MaxNodes") == "338 (batch partition; 512 total)"
    assert [v for k, v in header.raw if k == "Note"] == ["first", "second"]
    assert header.comments[0] == "   --- converted ---"


def test_header_without_machine_size_is_inferred_and_noted(tmp_path):
    text = "; Version: 2.2\n" + job(procs_req=12, procs_alloc=12) + "\n" + job(job_id=2, procs_req=3) + "\n"
    wl = read_swf(write(tmp_path, "nosize.swf", text), use_cache=False)
    assert (wl.max_procs, wl.max_nodes) == (12, 12)
    assert any("inferred as 12" in note for note in wl.report.notes)


def test_parse_header_first_occurrence_of_a_key_wins():
    header = parse_header(["; MaxProcs: 64", "; MaxProcs: 128", "; Computer: A", "; Computer: B"])
    assert header.max_procs == 64
    assert header.computer == "A"


# --- bad input -----------------------------------------------------------------------------------


def _where(path: Path, line: int | None) -> str:
    return re.escape(f"{path.name}:{line}:") if line is not None else re.escape(path.name)


@pytest.mark.parametrize(
    "text, line, problem",
    [
        (HEADER + job() + "\n" + job(job_id=2) + " 7\n", 5, "expected 18 whitespace-separated fields, found 19"),
        (HEADER + job() + "\n" + " ".join(job().split()[:17]) + "\n", 5, "expected 18 .* found 17"),
        (HEADER + job(run="abc") + "\n", 4, r"field 4 \(run\) is not a number: 'abc'"),
        (HEADER + job() + "\n" + job(submit="12x") + "\n", 5, r"field 2 \(submit\) is not a number: '12x'"),
        (HEADER + job(time_req="nan") + "\n", 4, r"field 9 \(time_req\) is not finite"),
        (HEADER + job(procs_req="4.5") + "\n", 4, r"field 8 \(procs_req\) must be an integer, found 4.5"),
        (HEADER + job() + "\n" + job(status="1.25") + "\n", 5, r"field 11 \(status\) must be an integer"),
    ],
    ids=["too-many-fields", "too-few-fields", "non-numeric", "trailing-garbage", "nan", "non-integer",
         "non-integer-later-line"],
)
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_bad_job_lines_name_file_and_line(tmp_path, text, line, problem, gz):
    path = write(tmp_path, "bad.swf" + (".gz" if gz else ""), text, gz)
    with pytest.raises(TraceError, match=_where(path, line) + " " + problem) as info:
        read_swf(path, use_cache=False)
    assert info.value.line == line


_FULL_GZIP = gzip.compress("".join(job(job_id=i, submit=i) + "\n" for i in range(1, 2000)).encode())
_TRUNCATED_GZIP = _FULL_GZIP[: len(_FULL_GZIP) // 2]


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "empty file"),
        (b"  \n\n", "empty file"),
        (HEADER.encode(), r"no job lines \(only comments or blank lines\)"),
        (_TRUNCATED_GZIP, "truncated or corrupt gzip data"),
        (gzip.compress(b""), "empty file"),
    ],
    ids=["empty", "blank", "only-comments", "truncated-gzip", "empty-gzip"],
)
def test_bad_files_name_the_file(tmp_path, content, problem):
    path = tmp_path / ("bad.swf.gz" if content[:2] == b"\x1f\x8b" else "bad.swf")
    path.write_bytes(content)
    with pytest.raises(TraceError, match=_where(path, None) + ": " + problem):
        read_swf(path, use_cache=False)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(TraceError, match="nothere.swf: no such file"):
        read_bytes(tmp_path / "nothere.swf")
    with pytest.raises(TraceError, match="is a directory"):
        read_bytes(tmp_path)


# --- cleaning ------------------------------------------------------------------------------------

# line numbers of the jobs in CLEANING_TRACE (3 header lines first)
CLEANING_JOBS = [
    (4, job(job_id=1, submit=0)),                                   # fine
    (5, job(job_id=2, submit=10, run=-1, status=5)),                # cancelled before starting
    (6, job(job_id=3, submit=20, run=-1)),                          # unknown run time
    (7, job(job_id=4, submit=30, run=0)),                           # no work
    (8, job(job_id=5, submit=40, procs_req=-1, procs_alloc=8)),     # request missing: use allocation
    (9, job(job_id=6, submit=50, procs_req=-1, procs_alloc=-1)),    # no processor count at all
    (10, job(job_id=7, submit=60, time_req=-1, run=77)),            # no requested time
    (11, job(job_id=8, submit=70, procs_req=64, procs_alloc=64)),   # wider than the 16-processor machine
    (12, job(job_id=9, submit=55)),                                 # submitted before job 7
    (13, job(job_id=10, submit=80, run=300, time_req=200)),         # overran its request
    (14, job(job_id=11, submit=90, procs_req=2, procs_alloc=6)),    # allocated more than requested
]
CLEANING_TRACE = HEADER + "".join(text + "\n" for _, text in CLEANING_JOBS)


@pytest.fixture
def cleaning_trace(tmp_path) -> Path:
    return write(tmp_path, "rules.swf", CLEANING_TRACE)


def _actions(report) -> dict[tuple[str, str], tuple[int, tuple[int, ...]]]:
    out: dict[tuple[str, str], tuple[int, tuple[int, ...]]] = {}
    for a in report.actions:
        count, lines = out.get((a.rule, a.action), (0, ()))
        out[(a.rule, a.action)] = (count + a.count, lines + a.example_lines)
    return out


def test_default_cleaning_report(cleaning_trace):
    wl = read_swf(cleaning_trace, use_cache=False)
    report = wl.report
    assert (report.jobs_in, report.jobs_out, report.dropped) == (11, 6, 5)
    assert _actions(report) == {
        ("drop_cancelled_before_start", "dropped"): (1, (5,)),
        ("drop_nonpositive_runtime", "dropped"): (2, (6, 7)),
        ("procs_from", "repaired"): (1, (8,)),
        ("drop_nonpositive_procs", "dropped"): (1, (9,)),
        ("missing_requested_time", "repaired"): (1, (10,)),
        ("drop_wider_than_machine", "dropped"): (1, (11,)),
        ("sort_by_submit", "reordered"): (1, (12,)),
        ("run_exceeds_request", "noted"): (1, (13,)),
    }
    assert wl.job_id.tolist() == [1, 5, 9, 7, 10, 11]
    assert wl.procs_req.tolist() == [4, 8, 4, 4, 4, 2]
    assert wl.time_req.tolist() == [200, 200, 200, 77, 200, 200]
    assert "kept 6 of 11 jobs (5 dropped)" in report.summary()
    assert json.loads(json.dumps(report.to_dict()))["dropped"] == 5


@pytest.mark.parametrize(
    "change, kept, absent, present",
    [
        (dict(drop_cancelled_before_start=False), 6, "drop_cancelled_before_start", ("drop_nonpositive_runtime", "dropped", 3)),
        (dict(drop_nonpositive_runtime=False), 8, "drop_nonpositive_runtime", None),
        (dict(unknown_runtime_as=10), 7, None, ("unknown_runtime_as", "repaired", 1)),
        (dict(procs_from="max"), 6, None, ("procs_from", "repaired", 2)),
        (dict(drop_nonpositive_procs=False), 7, "drop_nonpositive_procs", None),
        (dict(missing_requested_time="drop"), 5, None, ("missing_requested_time", "dropped", 1)),
        (dict(missing_requested_time=3600), 6, None, ("missing_requested_time", "repaired", 1)),
        (dict(drop_wider_than_machine=False), 7, "drop_wider_than_machine", None),
        (dict(sort_by_submit=False), 6, "sort_by_submit", None),
    ],
    ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) if isinstance(v, dict) else "",
)
def test_each_cleaning_rule_is_switchable(cleaning_trace, change, kept, absent, present):
    report = read_swf(cleaning_trace, replace(CleaningRules(), **change), use_cache=False).report
    assert report.jobs_out == kept
    actions = _actions(report)
    if absent is not None:
        assert absent not in {rule for rule, _ in actions}
    if present is not None:
        rule, action, count = present
        assert actions[(rule, action)][0] == count


def test_unknown_runtime_repair_and_fixed_requested_time_values(cleaning_trace):
    wl = read_swf(cleaning_trace, CleaningRules(unknown_runtime_as=10, missing_requested_time=3600), use_cache=False)
    assert wl.run[wl.job_id == 3].tolist() == [10]
    assert wl.time_req[wl.job_id == 7].tolist() == [3600]


def test_sort_by_submit_off_keeps_file_order(cleaning_trace):
    wl = read_swf(cleaning_trace, CleaningRules(sort_by_submit=False), use_cache=False)
    assert wl.job_id.tolist() == [1, 5, 7, 9, 10, 11]


def test_rlscheduler_preset(cleaning_trace):
    wl = read_swf(cleaning_trace, CleaningRules.rlscheduler(), use_cache=False)
    # cancelled and unknown run times become 10 s; run 0, no procs and too wide are dropped
    assert wl.job_id.tolist() == [1, 2, 3, 5, 7, 9, 10, 11]
    assert wl.run[:3].tolist() == [100, 10, 10]
    assert wl.procs_req[wl.job_id == 11].tolist() == [6]


def test_no_cleaning_keeps_every_job(cleaning_trace):
    wl = read_swf(cleaning_trace, CleaningRules.none(), use_cache=False)
    assert wl.report.jobs_out == wl.report.jobs_in == 11
    assert wl.job_id.tolist() == list(range(1, 12))
    assert {a.action for a in wl.report.actions} <= {"noted", "repaired"}


def test_rules_none_means_no_report(cleaning_trace):
    assert read_swf(cleaning_trace, None, use_cache=False).report is None


def test_no_cleaning_keeps_missing_requests_as_written(tmp_path):
    path = write(tmp_path, "lublin-like.swf", HEADER + job(procs_req=-1, time_req=-1) + "\n")
    wl = read_swf(path, CleaningRules.none(), use_cache=False)
    assert (wl.procs_req.tolist(), wl.time_req.tolist()) == ([-1], [-1])


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")
def test_integer_field_out_of_range_is_an_error(tmp_path):
    path = write(tmp_path, "huge.swf", HEADER + job(submit="1e20") + "\n")
    with pytest.raises(TraceError, match=_where(path, 4)):
        read_swf(path, use_cache=False)


# --- writing and round trips ---------------------------------------------------------------------

_INT = st.integers(-1, 2**40)
_FLOAT = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def workloads(draw) -> Workload:
    n = draw(st.integers(1, 25))
    columns = {}
    for f in SWF_FIELDS:
        element = _FLOAT if f.dtype is np.float64 else _INT
        columns[f.name] = np.array(draw(st.lists(element, min_size=n, max_size=n)), dtype=f.dtype)
    nodes = draw(st.integers(1, 100_000))
    procs = nodes * draw(st.integers(1, 64))
    return Workload(columns, max_procs=procs, max_nodes=nodes, name="random")


@settings(max_examples=60, deadline=None)
@given(wl=workloads(), gz=st.booleans())
def test_write_then_read_is_identity(wl, gz):
    with tempfile.TemporaryDirectory() as tmp:
        path = write_swf(wl, Path(tmp) / ("random.swf.gz" if gz else "random.swf"))
        back = read_swf(path, CleaningRules.none(), use_cache=False)
    assert len(back) == len(wl)
    for name in FIELD_NAMES:
        np.testing.assert_array_equal(back.columns[name], wl.columns[name], err_msg=name)
    assert (back.max_procs, back.max_nodes) == (wl.max_procs, wl.max_nodes)
    assert (back.header.max_procs, back.header.max_nodes) == (wl.max_procs, wl.max_nodes)


def test_written_file_keeps_the_original_header(tmp_path):
    source = read_swf(write(tmp_path, "a.swf", CLEANING_TRACE), None, use_cache=False)
    again = read_swf(write_swf(source, tmp_path / "b.swf.gz"), None, use_cache=False)
    assert again.header.comments == source.header.comments
    assert again.sha256 == source.sha256


# --- cache ---------------------------------------------------------------------------------------


def test_second_load_comes_from_the_cache_and_is_equal(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDRL_CACHE_DIR", str(tmp_path / "cache"))
    path = write(tmp_path, "c.swf.gz", CLEANING_TRACE, gz=True)
    first = read_swf(path)
    entries = list((tmp_path / "cache" / "parsed").glob(f"{first.sha256}.*"))
    assert len(entries) == 1
    second = read_swf(path)
    for name in FIELD_NAMES:
        np.testing.assert_array_equal(first.columns[name], second.columns[name])
    assert second.header == first.header
    assert second.report == first.report
    assert (second.max_procs, second.max_nodes, second.sha256) == (first.max_procs, first.max_nodes, first.sha256)


def test_corrupt_cache_entry_is_reparsed(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDRL_CACHE_DIR", str(tmp_path / "cache"))
    path = write(tmp_path, "c.swf", CLEANING_TRACE)
    first = read_swf(path)
    for entry in (tmp_path / "cache" / "parsed").iterdir():
        entry.write_bytes(b"not an npz")
    again = read_swf(path)
    np.testing.assert_array_equal(again.job_id, first.job_id)


# --- the real traces in ../shared/traces against SOURCES.md ----------------------------------------


def _sources_table() -> list[tuple[str, int, int]]:
    """(file, jobs, machine size = MaxProcs else MaxNodes) for each row of SOURCES.md's table."""
    path = SHARED_TRACES / "SOURCES.md"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].endswith(".gz"):
            size = next(int(m.group()) for m in (re.match(r"\d+", c) for c in (cells[4], cells[3])) if m)
            rows.append((cells[0], int(cells[1]), size))
    return rows


SOURCES = _sources_table()


def test_sources_table_lists_every_shared_trace():
    shared_trace("SOURCES.md")
    assert sorted(f for f, _, _ in SOURCES) == sorted(p.name for p in SHARED_TRACES.glob("*.swf.gz"))


@pytest.mark.parametrize("file, jobs, size", SOURCES or [("SOURCES.md", 0, 0)], ids=[f for f, _, _ in SOURCES] or None)
def test_traces_info_matches_sources_table(file, jobs, size, capsys):
    from schedrl.cli.main import main

    path = shared_trace(file)
    assert main(["traces", "info", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["jobs_read"] == jobs
    assert info["machine"]["procs"] == size
    assert info["checksum_verified"]
