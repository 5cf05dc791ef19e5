"""The job loader: columns, rounding, units, ragged re-estimates; bad input names file and line."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from shared_data import shared_data

from schedrl.dtsim import JobDataError, load_jobs, synthetic_jobs

HEADER = "id,real,prerun_prediction,cores,running_predictions\n"


def write(tmp_path, text: str, name="jobs.csv", compress=False):
    path = tmp_path / name
    if compress:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_reads_plain_and_gzip_alike(tmp_path):
    text = HEADER + "1,9.000003814697266,8.0,24,8.0 8.0 9.45\n7,4.0,5.0,1,\n"
    for path in (write(tmp_path, text), write(tmp_path, text, "jobs.csv.gz", compress=True)):
        t = load_jobs(path)
        assert t.id.tolist() == [1, 7]
        assert t.real.tolist() == [9, 4]
        assert t.prerun.tolist() == [8, 5]
        assert t.units.tolist() == [3, 1]
        assert t.predictions(0).tolist() == [8, 8, 9]
        assert t.predictions(1).tolist() == []
        with pytest.raises(ValueError):
            t.real[0] = 1


@pytest.mark.parametrize("text, where, what", [
    ("id,real,cores,running_predictions\n1,2,3,\n", ":1:", "prerun_prediction"),
    (HEADER + "1,2,3,24,2\n2,x,3,24,\n", ":3:", "real is not a number"),
    (HEADER + "1,-3,3,24,\n", ":2:", "real must be at least one step"),
    (HEADER + "1,3,3,24,2 -1\n", ":2:", "negative estimate"),
    (HEADER + "1,3,3,0,\n", ":2:", "cores must be a positive integer"),
    (HEADER + "1,3,3,24\n", ":2:", "4 fields"),
    (HEADER, ":2:", "no jobs"),
])
def test_bad_rows_name_file_and_line(tmp_path, text, where, what):
    path = write(tmp_path, text)
    with pytest.raises(JobDataError, match=f"{path.name}{where}.*{what}"):
        load_jobs(path)


def test_corrupt_gzip_names_file_and_line(tmp_path):
    body = HEADER + "".join(f"{i},8,8,24,{' '.join(['8.0'] * 7)}\n" for i in range(3000))
    blob = gzip.compress(body.encode())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(blob[:len(blob) // 2])
    with pytest.raises(JobDataError, match=r"cut\.csv\.gz:\d+: unreadable"):
        load_jobs(path)


def test_the_vasp_file_matches_its_description():
    t = load_jobs(shared_data())
    assert len(t) == 4870
    assert t.real.min() >= 1 and t.real.max() == 99
    assert t.units.min() == 1 and t.units.max() == 10
    # SOURCES.md: mean real 15.6 steps, median 8
    assert round(float(t.real.mean()), 1) == 15.6 and float(np.median(t.real)) == 8


def test_synthetic_jobs_are_seeded_and_valid():
    a, b = synthetic_jobs(200, seed=3), synthetic_jobs(200, seed=3)
    assert np.array_equal(a.real, b.real) and np.array_equal(a.pred_values, b.pred_values)
    assert not np.array_equal(a.real, synthetic_jobs(200, seed=4).real)
    assert a.real.min() >= 1 and a.units.max() <= 10
    assert all(len(a.predictions(i)) == a.real[i] - 1 for i in range(len(a)))
