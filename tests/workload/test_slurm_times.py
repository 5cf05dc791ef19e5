"""Slurm logs as Slurm writes them (issue 47, class 4): a Start before its Submit (or Eligible), the
`365-00:00:00` limit Slurm 22.05 records for a job without --time in an INFINITE partition, and the empty sinfo
file that `sinfo --all --partition` leaves. Generated records (hypothesis, derandomized) and the examples."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedrl.workload import CleaningRules, TraceError
from schedrl.workload.slurm import (SINFO_PARTITION_COMMAND, YEAR_S, NameIds, SlurmImport, read_sacct, read_sinfo)

HEADER = "JobID|JobIDRaw|User|Group|Partition|Submit|Eligible|Start|Elapsed|Timelimit|ReqCPUS|AllocCPUS|State"
T0 = dt.datetime(2024, 3, 1, 10, 0, 0)


def stamp(offset: int) -> str:
    return (T0 + dt.timedelta(seconds=offset)).strftime("%Y-%m-%dT%H:%M:%S")


def hms(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


def sacct(tmp_path: Path, rows: list[tuple[int, int, int, int, str, str]]) -> Path:
    """rows: (submit, eligible, start, elapsed, limit text, partition) offsets in seconds from T0."""
    lines = [HEADER]
    for k, (submit, eligible, start, elapsed, limit, partition) in enumerate(rows, 1):
        lines.append("|".join([str(k), str(k), "alice", "staff", partition, stamp(submit), stamp(eligible),
                               stamp(start), hms(elapsed), limit, "4", "4", "COMPLETED"]))
    path = tmp_path / "sacct.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def details(wl) -> dict[str, tuple[int, str]]:
    return {a.detail: (a.count, a.action) for a in wl.report.actions}


job = st.tuples(st.integers(0, 10_000), st.integers(-3600, 3600), st.integers(-7200, 7200), st.integers(1, 5000))


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(job, min_size=1, max_size=30), st.sampled_from(["submit", "eligible"]))
def test_no_negative_wait_ever_and_every_repair_is_counted(tmp_path, jobs, arrival):
    rows = [(submit, submit + max(eligible, 0), submit + start, elapsed, "02:00:00", "batch")
            for submit, eligible, start, elapsed in jobs]
    wl = read_sacct(sacct(tmp_path, rows), NameIds(salt=b"s"),
                    SlurmImport(procs=64, timezone="UTC", arrival=arrival), CleaningRules.none())
    assert (wl.wait[wl.wait != -1] >= 0).all()
    before = sum(1 for s, e, st_, _, _, _ in rows if st_ < (e if arrival == "eligible" else s))
    repaired = sum(a.count for a in wl.report.actions if a.rule == "slurm_start_before_arrival")
    assert repaired == before
    by_id = {int(j): k for k, j in enumerate(wl.job_id)}
    t0 = min((e if arrival == "eligible" else s) if st_ >= (e if arrival == "eligible" else s)
             else (s if arrival == "eligible" and s <= st_ else st_) for s, e, st_, _, _, _ in rows)
    for k, (_s, _e, st_, _, _, _) in enumerate(rows, 1):
        if k in by_id:  # the job's start, as Slurm logged it, is kept: submit + wait
            i = by_id[k]
            assert wl.submit[i] + wl.wait[i] == st_ - t0


def test_the_examples_start_before_submit_and_eligible_after_start(tmp_path):
    path = sacct(tmp_path, [(0, 0, 60, 100, "01:00:00", "batch"), (100, 100, 40, 100, "01:00:00", "batch"),
                            (200, 400, 300, 100, "01:00:00", "batch")])
    wl = read_sacct(path, NameIds(salt=b"s"), SlurmImport(procs=64, timezone="UTC", arrival="eligible"))
    assert list(wl.wait) == [60, 0, 100]
    assert details(wl)["Start before Submit (clock step, or a requeued job's Submit reset after its Start): submit "
                       "time set to Start, wait 0"] == (1, "repaired")
    assert details(wl)["Eligible after Start (--arrival eligible): submit time is Submit"] == (1, "repaired")


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["inf", "short", "gone"]), st.booleans()), min_size=1, max_size=12))
def test_a_year_limit_in_an_infinite_partition_is_no_limit(tmp_path, jobs):
    """`inf`: a partition whose MaxTime is INFINITE; `short`: one with a 2-day limit; `gone`: not in sinfo."""
    limits = {"inf": None, "short": 2 * 86400}
    rows = [(k * 10, k * 10, k * 10 + 5, 50, "365-00:00:00" if year else "01:00:00", part)
            for k, (part, year) in enumerate(jobs)]
    wl = read_sacct(sacct(tmp_path, rows), NameIds(salt=b"s"),
                    SlurmImport(procs=64, timezone="UTC", partition_limits=limits), CleaningRules.none())
    for k, (part, year) in enumerate(jobs):
        expected = (-1 if part in ("inf", "gone") else YEAR_S) if year else 3600
        assert wl.time_req[k] == expected
    unlimited = sum(1 for part, year in jobs if year and part in ("inf", "gone"))
    counted = sum(a.count for a in wl.report.actions if a.detail.startswith("Timelimit 365-00:00:00"))
    assert counted == unlimited


def test_an_empty_sinfo_file_says_why(tmp_path):
    path = tmp_path / "sinfo.txt"
    path.write_text("")
    with pytest.raises(TraceError) as err:
        read_sinfo(path)
    assert "Conflicting options, -a and -p" in str(err.value) and SINFO_PARTITION_COMMAND in str(err.value)
    assert "--all" not in SINFO_PARTITION_COMMAND
