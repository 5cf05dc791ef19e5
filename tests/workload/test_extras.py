"""Trailing extra SWF columns (`Workload.extras`), their names, and DRAS's priority flag."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_swf import HEADER, job, write

from shared_traces import SHARED_DATA, shared_trace
from schedrl.workload import CleaningRules, TraceError, priority_flags, read_swf, write_swf
from schedrl.workload.extras import default_extra_names
from schedrl.workload.priority import THETA_CAPABILITY_FRACTION
from schedrl.workload.sampling import poisson_retimed, sequence


def with_extra(text_job: str, *values) -> str:
    return text_job + "".join(f" {v}" for v in values)


# job 2 is cancelled before starting (dropped by cleaning), job 4 is submitted before job 3 (reordered)
JOBS19 = [
    with_extra(job(job_id=1, submit=0, procs_req=8, procs_alloc=8), 1),
    with_extra(job(job_id=2, submit=5, run=-1, status=5), 1),
    with_extra(job(job_id=3, submit=30), 0),
    with_extra(job(job_id=4, submit=20, procs_req=2, procs_alloc=2), 1),
]


@pytest.fixture
def trace19(tmp_path):
    return write(tmp_path, "t19.swf", HEADER + "\n".join(JOBS19) + "\n")


def test_a_19th_column_is_the_priority_extra_cleaned_with_its_job(trace19):
    wl = read_swf(trace19, use_cache=False)
    assert wl.job_id.tolist() == [1, 4, 3]  # job 2 dropped, 4 sorted before 3
    assert list(wl.extras) == ["priority"]
    assert wl.extras["priority"].tolist() == [1.0, 1.0, 0.0]
    assert not wl.extras["priority"].flags.writeable
    notes = [n for n in wl.report.notes if "extra column" in n]
    assert len(notes) == 1 and "column 19 `priority`" in notes[0] and "; ExtraColumns:" in notes[0]


def test_extras_follow_slicing_indexing_pandas_and_resampling(trace19):
    wl = read_swf(trace19, use_cache=False)
    assert sequence(wl, 1, 2).extras["priority"].tolist() == [1.0, 0.0]
    assert wl[np.array([2, 0])].extras["priority"].tolist() == [0.0, 1.0]
    assert wl.to_pandas()["priority"].tolist() == [1.0, 1.0, 0.0]
    sampled = poisson_retimed(wl, 3, np.random.default_rng(0), rate=0.1)  # renumbered: identify jobs by size
    np.testing.assert_array_equal(sampled.extras["priority"], (sampled.procs_req != 4).astype(float))
    assert "extras=['priority']" in repr(wl)


@pytest.mark.parametrize("suffix", [".swf", ".swf.gz"])
def test_write_then_read_keeps_the_extras(trace19, tmp_path, suffix):
    wl = read_swf(trace19, use_cache=False)
    again = read_swf(write_swf(wl, tmp_path / f"out{suffix}"), CleaningRules.none(), use_cache=False)
    assert again.extras["priority"].tolist() == wl.extras["priority"].tolist()
    renamed = wl.with_extras(capability=wl.extras["priority"])
    back = read_swf(write_swf(renamed, tmp_path / f"named{suffix}"), CleaningRules.none(), use_cache=False)
    assert list(back.extras) == ["priority", "capability"]  # named by the `; ExtraColumns:` line the writer adds
    assert back.header.get_raw("ExtraColumns") == "priority capability"


def test_extras_are_named_by_the_header_or_the_reader(tmp_path):
    lines = [with_extra(job(job_id=i, submit=i), i % 2, 10 * i) for i in range(1, 4)]
    named = write(tmp_path, "named.swf", HEADER + "; ExtraColumns: capability, queue_class\n" + "\n".join(lines) + "\n")
    wl = read_swf(named, use_cache=False)
    assert list(wl.extras) == ["capability", "queue_class"] and wl.extras["queue_class"].tolist() == [10, 20, 30]
    plain = write(tmp_path, "plain.swf", HEADER + "\n".join(lines) + "\n")
    assert list(read_swf(plain, use_cache=False).extras) == ["priority", "extra_20"]
    assert list(read_swf(plain, extra_names=["a", "b"], use_cache=False).extras) == ["a", "b"]
    with pytest.raises(TraceError, match=r"plain.swf: extra_names names 1 extra column \(a\), but the job lines have 2"):
        read_swf(plain, extra_names=["a"], use_cache=False)
    with pytest.raises(TraceError, match=r"extra column name 'run' is already an SWF field name"):
        read_swf(plain, extra_names=["run", "b"], use_cache=False)
    bad = write(tmp_path, "bad.swf", HEADER + "; ExtraColumns: only_one\n" + "\n".join(lines) + "\n")
    with pytest.raises(TraceError, match=r"bad.swf: header `; ExtraColumns: only_one` names 1 extra column"):
        read_swf(bad, use_cache=False)
    assert default_extra_names(3) == ("priority", "extra_20", "extra_21")


@pytest.mark.parametrize(
    "lines, line, problem",
    [
        ([with_extra(job(), 1), job(job_id=2)], 5,
         r"expected 19 whitespace-separated fields \(18 SWF fields \+ 1 extra, as on line 4\), found 18"),
        ([with_extra(job(), 1), with_extra(job(job_id=2), 1, 2)], 5, r"expected 19 .* found 20"),
        ([job(), with_extra(job(job_id=2), 1)], 5,
         r"expected 18 whitespace-separated fields, found 19 \(extra columns after the 18 SWF fields must be on every "
         r"job line, from the first \(line 4\)\)"),
        ([with_extra(job(), 1), " ".join(job().split()[:12])], 5, r"expected 19 .* found 12"),
        ([" ".join(job().split()[:12]), with_extra(job(), 1)], 4, r"expected 18 whitespace-separated fields, found 12"),
        ([with_extra(job(), *range(40))], 4, r"the first job line has 58 whitespace-separated fields"),
        ([with_extra(job(), "high")], 4, r"extra column 19 is not a number: 'high'"),
    ],
    ids=["missing-extra", "more-extras", "extra-not-on-first-line", "short-line", "short-first-line", "too-wide",
         "non-numeric-extra"],
)
def test_inconsistent_or_short_lines_are_rejected_with_file_and_line(tmp_path, lines, line, problem):
    path = write(tmp_path, "bad.swf", HEADER + "\n".join(lines) + "\n")
    with pytest.raises(TraceError, match=rf"bad.swf:{line}: {problem}"):
        read_swf(path, use_cache=False)


def test_priority_flags_prefer_the_column_else_the_size_rule(trace19):
    wl = read_swf(trace19, use_cache=False)
    assert priority_flags(wl).tolist() == [True, True, False]
    plain = replace(wl, extras={})
    # 16 processors: half the machine is 8, so only job 1 (8 procs) qualifies
    assert priority_flags(plain, 0.5).tolist() == [True, False, False]
    assert priority_flags(plain, 2 / 16).tolist() == [True, True, True]
    with pytest.raises(ValueError, match=r"min_fraction must be a fraction of the machine in \(0, 1\]"):
        priority_flags(plain, 0.0)


def test_theta_rule_reproduces_the_theta_trace_priority_column():
    path = shared_trace("theta-cqgym/train.swf.gz", SHARED_DATA)
    wl = read_swf(path)
    by_rule = priority_flags(replace(wl, extras={}), THETA_CAPABILITY_FRACTION)  # DRAS: >= 802 of 4,360 nodes
    assert int(by_rule.sum()) == 270
    np.testing.assert_array_equal(by_rule, priority_flags(wl))
