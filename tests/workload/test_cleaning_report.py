"""The cleaning report says what each line actually had (issue 9, items 1 and 8), and odd encodings are named."""

from __future__ import annotations

import numpy as np
import pytest
from test_swf import HEADER, job, write

from schedrl.workload import CleaningRules, TraceError, read_swf


def actions(wl) -> dict[tuple[str, str], tuple[int, str, tuple[int, ...]]]:
    return {(a.rule, a.detail): (a.count, a.action, a.example_lines) for a in wl.report.actions}


def test_negative_submit_times_are_dropped_with_their_lines(tmp_path):
    # issue 9 item 1: submit + run < 0 used to pass as "reordered" and crash the metrics
    text = HEADER + "\n".join([job(job_id=1, submit=0), job(job_id=2, submit=-1000, run=100),
                               job(job_id=3, submit=-1), job(job_id=4, submit=10)]) + "\n"
    wl = read_swf(write(tmp_path, "neg.swf", text), use_cache=False)
    assert wl.job_id.tolist() == [1, 4]
    assert actions(wl)[("negative_submit", "submit time -1 (unknown) or negative (e.g. -1000)")] == (2, "dropped", (5, 6))
    assert wl.report.jobs_in - wl.report.jobs_out == 2


def test_negative_submit_times_can_be_shifted(tmp_path):
    text = HEADER + "\n".join([job(job_id=1, submit=0), job(job_id=2, submit=-1000, run=100)]) + "\n"
    wl = read_swf(write(tmp_path, "neg.swf", text), CleaningRules(negative_submit="shift"), use_cache=False)
    assert wl.job_id.tolist() == [2, 1] and wl.submit.tolist() == [0, 1000]
    (count, action, lines), = [v for (rule, _), v in actions(wl).items() if rule == "negative_submit"]
    assert (count, action, lines) == (1, "repaired", (5,))
    assert any("shifted by +1000 s" in a.detail for a in wl.report.actions)
    with pytest.raises(ValueError, match="negative_submit must be 'drop', 'shift' or 'keep'"):
        CleaningRules(negative_submit="clamp")


def test_run_times_below_minus_one_are_reported_as_such(tmp_path):
    # issue 9 item 8: -50 was reported as "run time -1 (unknown)"
    text = HEADER + "\n".join([job(job_id=1), job(job_id=2, run=-50), job(job_id=3, run=-1), job(job_id=4, run=-50,
                                                                                                 status=5)]) + "\n"
    wl = read_swf(write(tmp_path, "run.swf", text), use_cache=False)
    found = actions(wl)
    assert found[("drop_nonpositive_runtime", "run time negative (e.g. -50): invalid")] == (2, "dropped", (5, 7))
    assert found[("drop_nonpositive_runtime", "run time -1 (unknown)")] == (1, "dropped", (6,))
    # the RLScheduler preset repairs only the unknown run time; -50 is still invalid
    rl = read_swf(write(tmp_path, "run.swf", text), CleaningRules.rlscheduler(), use_cache=False)
    assert actions(rl)[("unknown_runtime_as", "run time -1 (unknown) set to 10 s")][0] == 1
    assert rl.job_id.tolist() == [1, 3]


def test_requested_time_and_processor_details_name_the_values_found(tmp_path):
    text = HEADER + "\n".join([job(job_id=1, time_req=0), job(job_id=2, time_req=-7), job(job_id=3, procs_req=0)]) + "\n"
    wl = read_swf(write(tmp_path, "req.swf", text), use_cache=False)
    details = [a.detail for a in wl.report.actions]
    assert "requested time 0 or negative (e.g. -7) set to the run time" in details
    assert "requested processors 0 set to allocated processors" in details


def test_duplicate_job_ids_get_a_report_line(tmp_path):
    text = HEADER + "\n".join([job(job_id=1), job(job_id=2, submit=1), job(job_id=1, submit=2),
                               job(job_id=1, submit=3)]) + "\n"
    wl = read_swf(write(tmp_path, "dup.swf", text), use_cache=False)
    assert len(wl) == 4  # kept: ids only label jobs
    (key, value), = [(k, v) for k, v in actions(wl).items() if k[0] == "duplicate_job_id"]
    assert value == (2, "noted", (6, 7))


@pytest.mark.parametrize(
    "header, note, procs",
    [
        ("; MaxProcs: lots\n", "header `MaxProcs: lots` is not a positive number of procs: ignored", 4),
        ("; MaxProcs: 0\n", "header `MaxProcs: 0` is not a positive number of procs: ignored", 4),
        ("; MaxProcs: 0\n; MaxNodes: 16\n", "header `MaxProcs: 0` is not a positive number of procs: ignored", 16),
    ],
    ids=["not-a-number", "zero", "zero-with-nodes"],
)
def test_unusable_machine_sizes_in_the_header_are_noted(tmp_path, header, note, procs):
    wl = read_swf(write(tmp_path, "h.swf", header + job() + "\n"), use_cache=False)
    assert note in wl.report.notes
    assert wl.max_procs == procs
    inferred = [n for n in wl.report.notes if "inferred" in n]
    if procs == 4:
        assert inferred == ["header gives no usable MaxProcs or MaxNodes: machine size inferred as 4 processors (widest job)"]
    else:
        assert inferred == []
    assert not any("neither" in n for n in wl.report.notes)  # the header does give one: the old note was wrong


def test_a_utf8_bom_is_skipped_and_noted(tmp_path):
    path = tmp_path / "bom.swf"
    path.write_bytes(b"\xef\xbb\xbf" + (HEADER + job() + "\n").encode())
    wl = read_swf(path, use_cache=False)
    assert len(wl) == 1 and wl.max_procs == 16 and wl.header.version == "2.2"
    assert "the file starts with a UTF-8 byte-order mark: skipped" in wl.report.notes


@pytest.mark.parametrize(
    "content, problem",
    [
        (bytes(range(256)) * 4, r"bin.swf:1: binary content \(byte 0x00\), not an SWF text file"),
        ((HEADER + job() + "\n").encode() + b"\x00\x01\x02garbage\n", r"bin.swf:5: binary content \(byte 0x00\)"),
        ((HEADER + job() + "\n").encode("utf-16"), r"bin.swf: UTF-16 encoded text, not an SWF text file"),
        (np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes(), r"bin.swf:\d+: binary content"),
        ((job() + "\n" + job()).replace("\n", "\r").encode(),
         r"bin.swf:1: the first job line has 36 whitespace-separated fields \(lines end in CR only"),
        ((HEADER + job()).replace("\n", "\r").encode(), r"bin.swf: no job lines .* \(lines end in CR only"),
        (b"Version: 2.2\n" + job().encode(), r"bin.swf:1: expected 18 whitespace-separated fields, found 2 "
                                             r"\(a header line must start with ';'\)"),
    ],
    ids=["all-bytes", "nul-after-jobs", "utf16", "random", "cr-only", "cr-only-after-a-header",
         "header-without-semicolon"],
)
def test_binary_and_odd_text_files_name_the_actual_problem(tmp_path, content, problem):
    path = tmp_path / "bin.swf"
    path.write_bytes(content)
    with pytest.raises(TraceError, match=problem):
        read_swf(path, use_cache=False)


def test_latin1_bytes_in_comments_are_fine_and_in_fields_are_named(tmp_path):
    path = tmp_path / "latin.swf"
    path.write_bytes(("; Installation: Universit\xe9\n" + HEADER + job() + "\n").encode("latin-1"))
    assert len(read_swf(path, use_cache=False)) == 1
    path.write_bytes((HEADER + job(user="J\xfcrgen") + "\n").encode("latin-1"))
    with pytest.raises(TraceError, match=r"latin.swf:4: field 12 \(user\) is not a number"):
        read_swf(path, use_cache=False)
