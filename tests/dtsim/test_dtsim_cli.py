"""`python -m schedrl.dtsim fidelity`: the table, its errors, and Table 7 at the paper's settings."""

from __future__ import annotations

import subprocess

from cli_process import run_cli
from shared_data import shared_data

from schedrl.dtsim import DTSimConfig, load_jobs
from schedrl.dtsim.fidelity import TOLERANCE, fidelity


def dtsim(*args: str) -> subprocess.CompletedProcess:
    """`python -m schedrl.dtsim ARGS`, run in this process."""
    return run_cli(*args, entry="schedrl.dtsim.__main__")


def test_fidelity_prints_one_row_per_heuristic():
    proc = dtsim("fidelity", "--sequences", "2", "--jobs", "synthetic", "--simu-len", "40", "--kill")
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and "policy" not in line]
    assert [r.split("|")[1].strip() for r in rows] == ["tetris", "random", "sjf", "tetris*", "saf"] * 2
    assert [r.split("|")[2].strip() for r in rows] == ["no"] * 5 + ["yes"] * 5


def test_fidelity_input_errors_are_one_line():
    proc = dtsim("fidelity", "--jobs", "/no/such/jobs.csv")
    assert proc.returncode == 2 and proc.stderr.strip() == "error: /no/such/jobs.csv: no such job file"
    proc = dtsim("fidelity", "--jobs", "synthetic", "--res-slot", "5")
    assert proc.returncode == 2 and "res_slot=5 is smaller than the largest job" in proc.stderr


def test_heuristics_match_table_7_at_the_papers_settings():
    rows = fidelity(load_jobs(shared_data()), DTSimConfig(), sequences=16, seed=0)
    assert all(abs(r.relative) <= TOLERANCE for r in rows), [(r.policy, r.ours, r.paper) for r in rows]
    assert max(rows, key=lambda r: r.ours).policy == "tetris"
