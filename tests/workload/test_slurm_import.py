"""`sacct` output to SWF: real output of a local Slurm, hand-made edge cases, every Slurm duration
format, nameless stable ids, errors with file:line, and `schedrl traces import --slurm` end to end.

The data files and how they were made: tests/workload/data/README.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from schedrl.cli.main import main
from schedrl.workload import CleaningRules, TraceError, read_swf
from schedrl.workload.swf import format_swf
from schedrl.workload import slurm
from schedrl.workload.slurm import NameIds, SlurmImport, array_task_count, local_timezone, read_sacct, read_sinfo

DATA = Path(__file__).parent / "data"
LOCAL, LOCAL_UTC, LOCAL_SINFO = DATA / "sacct_local.txt", DATA / "sacct_local_utc.txt", DATA / "sinfo_local.txt"
EDGE, EDGE_SINFO = DATA / "sacct_edge_cases.txt", DATA / "sinfo_edge_cases.txt"
HEADER = "JobID|JobIDRaw|User|Group|Partition|Submit|Start|Elapsed|Timelimit|ReqCPUS|AllocCPUS|State"


def record(job_id="1", raw=None, user="alice", group="staff", partition="batch", submit="2024-03-01T10:00:00",
           start="2024-03-01T10:01:00", elapsed="00:10:00", limit="00:20:00", req="4", alloc="4",
           state="COMPLETED") -> str:
    """One line under HEADER."""
    return "|".join([job_id, raw or job_id, user, group, partition, submit, start, elapsed, limit, req, alloc, state])


def sacct_file(tmp_path: Path, *lines: str, header: str = HEADER, name: str = "sacct.txt") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def edge(options: SlurmImport | None = None, rules: CleaningRules = CleaningRules(), salt: bytes = b"pepper"):
    machine = read_sinfo(EDGE_SINFO)
    options = options or SlurmImport(procs=machine.procs, nodes=machine.nodes, timezone="Europe/Berlin",
                                     partition_limits=machine.partition_limits, node_columns=True)
    return read_sacct(EDGE, NameIds(salt=salt), options, rules)


def local(path: Path = LOCAL, zone: str = "Europe/Berlin", **kwargs):
    machine = read_sinfo(LOCAL_SINFO)
    options = SlurmImport(procs=machine.procs, nodes=machine.nodes, timezone=zone,
                          partition_limits=machine.partition_limits, **kwargs)
    return read_sacct(path, NameIds(salt=b"pepper"), options)


def actions(wl) -> dict[str, tuple[int, str, tuple[int, ...]]]:
    return {a.detail: (a.count, a.action, a.example_lines) for a in wl.report.actions}


# --- Slurm's formats -------------------------------------------------------------------------------


# Slurm's duration formats: tests/test_duration.py (the one parser, schedrl.duration)


@pytest.mark.parametrize("spec, count", [("[5-9]", 5), ("[1,3,8-10:2%4]", 4), ("[3-9:2%1]", 4), ("[0-4]", 5),
                                         ("[x]", None), ("[9-5]", None)])
def test_array_task_counts(spec, count):
    assert array_task_count(spec) == count


def test_local_timezone_comes_from_tz(monkeypatch):
    monkeypatch.setenv("TZ", ":Europe/Berlin")
    assert local_timezone() == "Europe/Berlin"
    monkeypatch.setenv("TZ", "/usr/share/zoneinfo/America/Chicago")
    assert local_timezone() == "America/Chicago"
    monkeypatch.delenv("TZ")
    assert local_timezone()  # /etc/localtime, /etc/timezone or UTC: always a name


# --- hand-made edge cases (sacct_edge_cases.txt; each value below computed by hand) -----------------


def test_edge_cases_every_kept_job_by_hand():
    wl = edge()
    # base: 100's Submit, 2024-03-01T10:00:00 CET = 09:00:00 UTC
    assert wl.header.unix_start_time == 1709283600
    assert wl.header.time_zone_string == "Europe/Berlin"
    assert (wl.max_procs, wl.max_nodes) == (64, 4)
    assert wl.job_id.tolist() == [100, 101, 105, 104, 110, 111, 112]
    assert wl.submit.tolist() == [0, 30, 120, 180, 420, 480, 20705400]  # 112: 2024-10-27T02:30 CEST, first pass
    assert wl.wait.tolist() == [60, 270, 10, 60, 840, 5, 60]
    # 05:30 (MM:SS), 2-02:00:00, 00:01:00, the het job's longest component, a requeued job's last run
    assert wl.run.tolist() == [330, 180000, 60, 720, 600, 2, 600]
    assert wl.procs_req.tolist() == [4, 8, 1, 8, 4, 1, 1]  # ReqCPUS; the het job's 2 + 6
    assert wl.procs_alloc.tolist() == [4, 16, 1, 8, 4, 1, 1]  # AllocCPUS
    # 1-00:00:00; Partition_Limit of `long` from sinfo (2-00:00:00); 00:30 (MM:SS); 00:30:00; 00:15:00; 5 (MM); 00:10:00
    assert wl.time_req.tolist() == [86400, 172800, 30, 1800, 900, 300, 600]
    # TotalCPU / AllocCPUS: 19:00.500 / 4, 2-02:00:00 / 16, 00:59.999 / 1, (10 s + 30 s) / 8, 40:00 / 4, ...
    assert wl.cpu_avg.tolist() == [285.125, 11250, 59.999, 5, 600, 1, 0.001]
    # COMPLETED 1; TIMEOUT, FAILED, a het job with a FAILED component, OUT_OF_MEMORY 0
    assert wl.status.tolist() == [1, 0, 0, 0, 1, 0, 1]
    assert wl.extras["nodes_req"].tolist() == [1, 1, 1, 3, 1, 1, 1]
    assert wl.extras["nodes_alloc"].tolist() == [1, 1, 1, 3, 1, 1, 1]
    assert wl.group[5] == -1 and wl.app[5] == -1  # 111 has no group and no job name
    assert wl.queue.tolist() == [-1] * 7  # no QOS field in this file


def test_edge_cases_report_counts_every_record():
    wl = edge()
    report = wl.report
    assert (report.jobs_in, report.jobs_out, report.dropped) == (17, 7, 10)
    found = actions(wl)
    assert found["job steps (123.batch, 123.extern, 123.0): they run inside their job's allocation, not jobs"] == \
        (3, "dropped", (3, 4, 10))
    assert found["records of array tasks still pending (123_[5-9]): no task record split out yet"] == \
        (1, "dropped", (8,))
    assert "the 1 dropped array records stand for 4 array tasks" in report.notes  # 103_[3-9:2%1]: 3, 5, 7, 9
    assert found["heterogeneous-job components after the first (123+1, ...): merged into one job (CPUs summed, "
                 "longest run and limit)"] == (1, "dropped", (11,))
    assert found["still running when sacct ran"] == (1, "dropped", (12,))
    assert found["still pending when sacct ran"] == (1, "dropped", (13,))
    assert found[slurm.UNFINISHED["REQUEUED"]] == (1, "dropped", (15,))
    assert found["Timelimit Partition_Limit: the partition's time limit (from sinfo)"] == (1, "repaired", (5,))
    assert found["Elapsed INVALID (end before start): run time -1"] == (1, "noted", (14,))
    # then the usual cleaning, with lines of the sacct file: 102 cancelled before it started, 109 without a run time
    assert found["cancelled (status 5) before starting: run time -1 or 0"] == (1, "dropped", (6,))
    assert found["run time -1 (unknown)"] == (1, "dropped", (14,))
    assert sum(count for count, action, _ in found.values() if action == "dropped") == report.dropped
    assert any("2 distinct times fall in the hour repeated when Europe/Berlin set its clocks back" in n
               for n in report.notes)


def test_edge_cases_without_cleaning_keep_the_never_started_job_as_written():
    wl = edge(rules=CleaningRules.none())
    row = {int(j): k for k, j in enumerate(wl.job_id)}
    cancelled, node_fail = row[102], row[109]
    # never started (no nodes): wait, run and allocation unknown; UNLIMITED: requested time unknown
    assert (wl.status[cancelled], wl.wait[cancelled], wl.run[cancelled]) == (5, -1, -1)
    assert (wl.procs_alloc[cancelled], wl.procs_req[cancelled], wl.time_req[cancelled]) == (-1, 2, -1)
    assert (wl.run[node_fail], wl.cpu_avg[node_fail]) == (-1, -1)  # INVALID Elapsed, empty TotalCPU


def test_arrival_at_eligible():
    machine = read_sinfo(EDGE_SINFO)
    wl = edge(SlurmImport(procs=64, timezone="Europe/Berlin", partition_limits=machine.partition_limits,
                          arrival="eligible"))
    row = {int(j): k for k, j in enumerate(wl.job_id)}
    # 101 eligible at 10:05:00 and started then; 110's last run eligible at 10:20:00, started 10:21:00
    assert (wl.submit[row[101]], wl.wait[row[101]]) == (300, 0)
    assert (wl.submit[row[110]], wl.wait[row[110]]) == (1200, 60)
    assert "Eligible (Submit where unknown)" in format_swf(wl)


def test_without_sinfo_a_partition_limit_is_unknown():
    wl = edge(SlurmImport(procs=64, timezone="Europe/Berlin"))
    row = {int(j): k for k, j in enumerate(wl.job_id)}
    assert wl.time_req[row[101]] == 180000  # -1, then the default cleaning's perfect estimate
    assert actions(wl)["Timelimit Partition_Limit of a partition sinfo does not list (give --sinfo): requested "
                       "time -1 (unknown)"][:2] == (1, "noted")


def test_times_in_a_skipped_hour_are_noted(tmp_path):
    path = sacct_file(tmp_path, record(submit="2024-03-31T02:30:00", start="2024-03-31T03:10:00"))
    wl = read_sacct(path, NameIds(salt=b"s"), SlurmImport(procs=8, timezone="Europe/Berlin"))
    assert any("1 distinct times fall in the hour Europe/Berlin skipped" in n for n in wl.report.notes)


# --- ids: stable, nameless ---------------------------------------------------------------------------


NAMES = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "physics", "chem", "bio", "batch", "long", "gpu",
         "sim", "gromacs", "arr", "het")


def test_salted_ids_are_stable_nameless_and_salt_dependent(tmp_path):
    first, again, other = edge(salt=b"pepper"), edge(salt=b"pepper"), edge(salt=b"paprika")
    for field in ("user", "group", "app", "partition"):
        assert first.columns[field].tolist() == again.columns[field].tolist()
        assert first.columns[field].tolist() != other.columns[field].tolist()
        known = first.columns[field][first.columns[field] > 0]
        assert known.size and known.max() <= slurm.HASHED_IDS
    # user bob and group chem: same person's jobs 101 and 110 have the same ids
    row = {int(j): k for k, j in enumerate(first.job_id)}
    assert first.user[row[101]] == first.user[row[110]] != first.user[row[100]]
    text = format_swf(first)
    assert not [n for n in NAMES if re.search(rf"\b{n}\b", text)]


def test_a_user_and_a_group_of_the_same_name_get_different_ids():
    ids = NameIds(salt=b"s")
    assert ids.id("User", "alice") != ids.id("Group", "alice")
    assert ids.id("User", "") == -1


def test_hash_collisions_are_an_error(monkeypatch):
    monkeypatch.setattr(slurm, "HASHED_IDS", 1)
    ids = NameIds(salt=b"s")
    assert ids.id("User", "alice") == 1
    with pytest.raises(ValueError, match="two User names hash to the same id 1 with this salt: choose another --salt"):
        ids.id("User", "bob")


def test_an_id_map_is_created_then_extended(tmp_path):
    path = tmp_path / "ids.json"
    ids = NameIds.load(path)
    assert ids.table == {}
    first = sacct_file(tmp_path, record(job_id="1", user="alice"), record(job_id="2", user="bob"))
    read_sacct(first, ids, SlurmImport(procs=8))
    ids.save(path)
    assert json.loads(path.read_text())["User"] == {"alice": 1, "bob": 2}
    assert ids.added == {"User": 2, "Group": 1, "Partition": 1}
    again = NameIds.load(path)
    second = sacct_file(tmp_path, record(job_id="3", user="carol"), record(job_id="4", user="alice"), name="b.txt")
    wl = read_sacct(second, again, SlurmImport(procs=8))
    assert wl.user.tolist() == [3, 1]
    assert again.added == {"User": 1}


@pytest.mark.parametrize("content, problem", [("not json", "not a readable id map"),
                                              ('{"User": {"alice": 0}}', "not an id map"),
                                              ('["alice"]', "not an id map")])
def test_a_broken_id_map_names_the_file(tmp_path, content, problem):
    path = tmp_path / "ids.json"
    path.write_text(content)
    with pytest.raises(TraceError, match=rf"ids.json: {problem}"):
        NameIds.load(path)


# --- real sacct output of a local Slurm (sacct_local*.txt) ------------------------------------------


def test_real_sacct_output_of_a_local_slurm():
    wl = local()
    assert (wl.report.jobs_in, len(wl)) == (49, 18)
    row = {int(j): k for k, j in enumerate(wl.job_id)}
    assert 21 not in row and 15 not in row and 20 not in row  # cancelled pending, running, cancelled array record
    # 1: two whole nodes for a 2-CPU request (ReqCPUS 2, AllocCPUS 64)
    assert (wl.procs_req[row[1]], wl.procs_alloc[row[1]], wl.run[row[1]]) == (2, 64, 2)
    # 6: killed at its 1-minute limit after 87 s (the limit is checked every 30 s)
    assert (wl.status[row[6]], wl.run[row[6]], wl.time_req[row[6]]) == (0, 87, 60)
    assert wl.time_req[row[5]] == 2 * 86400  # --time=2-00:00:00
    assert (wl.status[row[10]], wl.run[row[10]]) == (5, 7)  # cancelled while running: kept, it did work
    assert (wl.procs_req[row[11]], wl.run[row[11]]) == (3, 2)  # heterogeneous 1 + 2 CPUs, as one job
    # the array of 4 (8_0..8_3): each task a job with its JobIDRaw; 8_3 runs under the array's own id
    assert sorted(j for j in row if j in (8, 16, 17, 18)) == [8, 16, 17, 18]
    assert wl.header.max_procs == 64 and wl.header.max_nodes == 2


def test_the_same_jobs_from_utc_parsable_output_with_fields_in_another_order():
    # sacct_local_utc.txt: the same sacct run's data printed with TZ=UTC, --parsable (a trailing '|'),
    # the fields shuffled and Account, NodeList, ExitCode, NNodes and ReqMem added
    berlin, utc = local(LOCAL, "Europe/Berlin"), local(LOCAL_UTC, "UTC")
    assert berlin.header.unix_start_time == utc.header.unix_start_time
    jobs = [line for line in format_swf(berlin).splitlines() if not line.startswith(";")]
    assert jobs == [line for line in format_swf(utc).splitlines() if not line.startswith(";")]
    assert [a[:2] for a in actions(berlin).values()] == [a[:2] for a in actions(utc).values()]


def test_a_wrong_timezone_shifts_every_time_by_the_offset():
    berlin, wrong = local(LOCAL, "Europe/Berlin"), local(LOCAL, "UTC")
    assert wrong.header.unix_start_time - berlin.header.unix_start_time == 3600
    assert wrong.submit.tolist() == berlin.submit.tolist()


# --- errors: file:line and what to do ---------------------------------------------------------------


@pytest.mark.parametrize("lines, header, message", [
    ([record()], HEADER.replace("|ReqCPUS", ""), r"sacct.txt:1: the header lacks required field ReqCPUS "),
    ([record()], HEADER.replace("|ReqCPUS|AllocCPUS", ""),
     r"sacct.txt:1: the header lacks required fields ReqCPUS, AllocCPUS "),
    ([record()], record(job_id="7"), r"sacct.txt:1: the first line is a job record, not a header \(run sacct "
                                     r"without --noheader\)"),
    ([], "JobID JobIDRaw State", r"sacct.txt:1: the first line is not a '\|'-separated header"),
    ([record(), record() + "|extra"], HEADER, r"sacct.txt:3: expected 12 '\|'-separated fields as in the header, "
                                              r"found 13"),
    ([record(submit="Fri 1 Mar 10:00")], HEADER, r"sacct.txt:2: Submit is not a time: 'Fri 1 Mar 10:00' "
                                                 r"\(sacct prints 2024-05-01T12:00:00 with SLURM_TIME_FORMAT=standard\)"),
    ([record(start="2024-13-01T10:00:00")], HEADER, r"sacct.txt:2: Start is not a valid date and time"),
    ([record(elapsed="1:2:3:4")], HEADER, r"sacct.txt:2: Elapsed is not a Slurm duration: '1:2:3:4'"),
    ([record(limit="forever")], HEADER, r"sacct.txt:2: Timelimit is not a Slurm duration: 'forever'"),
    ([record(state="EXPLODED")], HEADER, r"sacct.txt:2: State is not a Slurm job state: 'EXPLODED'"),
    ([record(alloc="4K")], HEADER, r"sacct.txt:2: AllocCPUS is not a whole number: '4K' \(run sacct with "
                                   r"--noconvert\)"),
    ([record(job_id="job7")], HEADER, r"sacct.txt:2: JobID is not a Slurm job id: 'job7'"),
    ([record(raw="7_1")], HEADER, r"sacct.txt:2: JobIDRaw of a job is not a job number: '7_1'"),
    ([record(job_id="7.batch")], HEADER, r"sacct.txt: no finished job among 1 records \(1 job steps"),
    ([record(state="PENDING")], HEADER, r"sacct.txt: no finished job among 1 records \(1 still pending"),
])
def test_malformed_input_names_file_line_and_problem(tmp_path, lines, header, message):
    path = sacct_file(tmp_path, *lines, header=header)
    with pytest.raises(TraceError, match=message):
        read_sacct(path, NameIds(salt=b"s"), SlurmImport(procs=8))


def test_a_parsable_line_without_its_trailing_bar(tmp_path):
    path = sacct_file(tmp_path, record() + "|", record(job_id="2"), header=HEADER + "|")
    with pytest.raises(TraceError, match=r"sacct.txt:3: the line does not end in '\|' as the header does"):
        read_sacct(path, NameIds(salt=b"s"), SlurmImport(procs=8))


def test_empty_and_missing_files(tmp_path):
    (tmp_path / "empty.txt").write_text("\n")
    with pytest.raises(TraceError, match="empty.txt: empty file"):
        read_sacct(tmp_path / "empty.txt", NameIds(salt=b"s"), SlurmImport(procs=8))
    with pytest.raises(TraceError, match="absent.txt: no such file"):
        read_sacct(tmp_path / "absent.txt", NameIds(salt=b"s"), SlurmImport(procs=8))


@pytest.mark.parametrize("kwargs, message", [
    (dict(procs=0), "the machine size must be positive"),
    (dict(procs=8, arrival="start"), "arrival must be 'submit' or 'eligible'"),
    (dict(procs=8, timezone="Mars/Olympus"), "unknown time zone 'Mars/Olympus': give an IANA name"),
])
def test_bad_import_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SlurmImport(**kwargs)


def test_node_columns_need_the_node_fields(tmp_path):
    with pytest.raises(TraceError, match="sacct.txt:1: the header lacks ReqNodes and AllocNodes"):
        read_sacct(sacct_file(tmp_path, record()), NameIds(salt=b"s"), SlurmImport(procs=8, node_columns=True))


def test_sinfo_machine_and_partition_limits():
    machine = read_sinfo(LOCAL_SINFO)
    assert (machine.nodes, machine.procs) == (2, 64)
    assert dict(machine.partition_limits) == {"batch": None, "short": 1800}
    assert dict(read_sinfo(EDGE_SINFO).partition_limits) == {"batch": None, "long": 172800, "gpu": 3600, "debug": 1800}


@pytest.mark.parametrize("text, message", [
    ("NODELIST|PARTITION|CPUS|TIMELIMIT\nn[1-4]|batch*|32|infinite\n", r"sinfo.txt:2: NODELIST 'n\[1-4\]' names "
                                                                        r"several nodes \(run sinfo with --Node"),
    ("NODELIST|PARTITION|CPUS|TIMELIMIT\nn1|batch*|32|infinite\nn1|short|16|1:00:00\n",
     "sinfo.txt:3: node n1 has 16 CPUs here and 32 on an earlier line"),
    ("NODELIST|PARTITION|TIMELIMIT\nn1|batch*|infinite\n", "sinfo.txt:1: the header lacks required field CPUS"),
    ("NODELIST|CPUS\nn1|many\n", "sinfo.txt:2: CPUS is not a positive number: 'many'"),
    ("NODELIST|PARTITION|CPUS|TIMELIMIT\nn1|batch|32|soon\n", "sinfo.txt:2: TIMELIMIT not a Slurm duration"),
])
def test_malformed_sinfo(tmp_path, text, message):
    (tmp_path / "sinfo.txt").write_text(text)
    with pytest.raises(TraceError, match=message):
        read_sinfo(tmp_path / "sinfo.txt")


# --- the command line -------------------------------------------------------------------------------


def schedrl(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """`schedrl traces import ARGS` as a subprocess."""
    return subprocess.run([sys.executable, "-m", "schedrl.cli.main", "traces", "import", *args],
                          capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "SCHEDRL_CACHE_DIR": str(tmp_path / "cache"), "TZ": "UTC"})


def in_process(capsys, *args: str) -> subprocess.CompletedProcess:
    """`schedrl traces import ARGS` through `main` in this process (the subprocess tests cover the entry point)."""
    code = main(["traces", "import", *args])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)


def assert_input_error(result: subprocess.CompletedProcess, pattern: str) -> None:
    """Exit status 2, one `error:` line on stderr matching pattern, no traceback."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "error: " in lines[0], result.stderr
    assert re.search(pattern, lines[0]), lines[0]


@pytest.mark.integration  # the entry point as a subprocess
def test_cli_writes_an_swf_that_the_reader_loads(tmp_path):
    out = tmp_path / "site.swf.gz"
    result = schedrl(tmp_path, "--slurm", str(LOCAL), "--sinfo", str(LOCAL_SINFO), "--timezone", "Europe/Berlin",
                     "--salt", "pepper", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "read 49 sacct records" in result.stdout
    assert "kept 18 of 49 jobs (31 dropped)" in result.stdout
    assert re.search(r"dropped +24 +job steps", result.stdout)
    assert "wrote 18 jobs (64 CPUs, 2 nodes)" in result.stdout
    wl = read_swf(out, use_cache=False)
    assert len(wl) == 18 and (wl.max_procs, wl.max_nodes) == (64, 2)
    assert wl.header.time_zone_string == "Europe/Berlin"
    assert wl.header.unix_start_time == local().header.unix_start_time
    assert wl.report.dropped == 0  # written cleaned
    assert np.array_equal(wl.run, local().run)


def test_cli_id_map_and_json(tmp_path, capsys):
    ids = tmp_path / "ids.json"
    args = ("--slurm", str(EDGE), "--procs", "64", "--nodes", "4", "--timezone", "Europe/Berlin", "--id-map", str(ids),
            "--out", str(tmp_path / "edge.swf"))
    first = in_process(capsys, *args)
    assert first.returncode == 0, first.stderr
    # names of the jobs the import builds (erin's jobs were still pending or running)
    assert f"id map {ids}: new names: 3 Group, 4 JobName, 3 Partition, 6 User" in first.stdout
    assert json.loads(ids.read_text())["User"] == {"alice": 1, "bob": 2, "carol": 3, "dave": 4, "frank": 5,
                                                    "grace": 6}
    again = in_process(capsys, *args, "--json")
    info = json.loads(again.stdout)
    assert info["id_map_added"] == {} and info["jobs"] == 7
    assert info["report"]["jobs_in"] == 17 and info["timezone"] == "Europe/Berlin"


@pytest.mark.parametrize("args, pattern", [
    (["--procs", "8", "--out", "OUT"], r"give one of --salt SECRET .* or --id-map FILE"),
    (["--salt", "s", "--out", "OUT"], r"give the machine size: --procs N .* or --sinfo FILE"),
    # refused where the command line is read (cli/main.refuse_empty, check_integers), naming the option
    (["--salt", "", "--procs", "8", "--out", "OUT"], r"--salt is empty: give a value, or leave the option out"),
    (["--salt", "s", "--procs", "0", "--out", "OUT"], r"--procs must be >= 1, got 0"),
    (["--salt", "s", "--procs", "8", "--timezone", "Nowhere/Town", "--out", "OUT"], r"unknown time zone 'Nowhere/Town'"),
    (["--salt", "s", "--procs", "8", "--out", "/nonexistent/dir/x.swf"], r"directory /nonexistent/dir does not exist"),
])
def test_cli_usage_errors(tmp_path, capsys, args, pattern):
    args = [str(tmp_path / "x.swf") if a == "OUT" else a for a in args]
    assert_input_error(in_process(capsys, "--slurm", str(EDGE), *args), pattern)


@pytest.mark.integration  # the entry point as a subprocess
def test_cli_malformed_sacct_is_file_line_error(tmp_path):
    path = sacct_file(tmp_path, record(), record(elapsed="soon"))
    assert_input_error(schedrl(tmp_path, "--slurm", str(path), "--salt", "s", "--procs", "8", "--out",
                               str(tmp_path / "x.swf")),
                       r"schedrl traces: error: .*sacct.txt:3: Elapsed is not a Slurm duration: 'soon'")
    assert not (tmp_path / "x.swf").exists()


# --- docs/slurm.md shows what the code does ----------------------------------------------------------


def test_the_guide_shows_the_commands_and_report_of_the_code():
    repo = Path(__file__).resolve().parents[2]
    guide = (repo / "docs" / "slurm.md").read_text()
    assert "--format=" + ",".join(slurm.SACCT_FIELDS) in guide
    assert slurm.SINFO_COMMAND in guide
    shown = guide.split("```text\n", 1)[1].split("```", 1)[0]
    assert shown == local().report.summary().replace(f"{repo}/", "") + "\n"
