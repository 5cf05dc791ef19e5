"""`schedrl.workload.describe` (what `traces list`/`traces info` show) and `workload.slurm.import_sacct` as Python
calls; the command line's output is tests/cli/test_traces_cli.py's."""

from __future__ import annotations

import pytest

from schedrl.workload import CleaningRules, read_swf
from schedrl.workload.describe import TraceInfo, catalog_table, column_summary, trace_statistics
from schedrl.workload.slurm import import_sacct

# 4 jobs on an 8-node machine, submitted at 0, 100, 200, 400; run 10/20/30/40 s of 20/40/60/160 s requested
TINY = ("; Version: 2.2\n; MaxNodes: 8\n"
        "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n"
        "2 100 0 20 2 -1 -1 2 40 -1 1 1 1 1 1 1 -1 -1\n"
        "3 200 0 30 4 -1 -1 4 60 -1 1 1 1 1 1 1 -1 -1\n"
        "4 400 0 40 8 -1 -1 8 160 -1 1 1 1 1 1 1 -1 -1\n")


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(TINY)
    return path


def test_statistics_by_hand(tiny):
    stats = trace_statistics(read_swf(tiny, CleaningRules()))
    assert stats == {"jobs": 4, "span_s": 400, "mean_interarrival_s": pytest.approx(400 / 3),
                     "mean_runtime_s": 25.0, "median_runtime_s": 25.0, "mean_requested_s": 70.0,
                     "median_requested_s": 50.0, "mean_size_procs": 3.75, "median_size_procs": 3.0,
                     "estimate_accuracy": pytest.approx((0.5 + 0.5 + 0.5 + 0.25) / 4)}


def test_trace_info_of_a_file_outside_the_catalog(tiny):
    info = TraceInfo.of(str(tiny), read_swf(tiny, CleaningRules()), "default")
    data = info.to_dict()
    assert data["catalog"] is None and not data["checksum_verified"] and data["jobs"] == 4
    assert data["path"] == str(tiny) and data["stats"]["span_s"] == 400
    lines = info.text().splitlines()
    assert lines[0] == f"tiny  {tiny}" and lines[1] == "  catalog        not in the catalog"
    assert "  span                 0.00463 days" in lines
    assert lines[-1] == "  estimate accuracy    0.438 (mean run / requested time)"


def test_column_summary_and_an_empty_column():
    import numpy as np

    assert column_summary(np.array([0.0, 2.0, 2.0, 5.0])) == {"min": 0.0, "max": 5.0, "distinct": 3, "nonzero": 3}
    assert column_summary(np.array([])) == {"min": 0.0, "max": 0.0, "distinct": 0, "nonzero": 0}


def test_catalog_table_aligns_numbers_right_and_says_how_to_get_a_missing_trace():
    rows = [{"name": "a", "jobs": 5, "procs": None, "nodes": 128, "sha256": "f" * 64, "path": "/x/a.swf", "get": None},
            {"name": "bbb", "jobs": 12345, "procs": 8, "nodes": None, "sha256": "", "path": None, "get": "fetch it"}]
    assert catalog_table(rows).splitlines() == [
        "name   jobs  procs  nodes  sha256        where",
        "a         5      -    128  ffffffffffff  /x/a.swf",
        "bbb   12345      8      -  unknown       not local: fetch it"]


@pytest.mark.parametrize("options, message", [
    ({}, "give one of --salt SECRET"),
    ({"salt": "s", "id_map": "m.json"}, "give one of --salt SECRET"),
    ({"salt": ""}, "--salt must not be empty"),
    ({"salt": "s"}, "give the machine size"),
])
def test_import_sacct_refuses_options_that_do_not_go_together_before_reading(tmp_path, options, message):
    with pytest.raises(ValueError, match=message):
        import_sacct(str(tmp_path / "absent.txt"), tmp_path / "out.swf", **options)
    assert not (tmp_path / "out.swf").exists()
