"""`schedrl traces`: output, exit codes and one-line error messages (run in-process by `cli_process.run_cli`)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli
from shared_traces import shared_trace
from schedrl.workload import CleaningRules, read_swf

# 4 jobs on an 8-node machine, submitted at 0, 100, 200, 400; run 10/20/30/40 s of 20/40/60/160 s requested
TINY = ("; Version: 2.2\n; MaxNodes: 8\n"
        "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n"
        "2 100 0 20 2 -1 -1 2 40 -1 1 1 1 1 1 1 -1 -1\n"
        "3 200 0 30 4 -1 -1 4 60 -1 1 1 1 1 1 1 -1 -1\n"
        "4 400 0 40 8 -1 -1 8 160 -1 1 1 1 1 1 1 -1 -1\n")
TINY_SHA = hashlib.sha256(TINY.encode()).hexdigest()


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """Environment of the subprocess: a private cache, no extra trace path."""
    out = {k: v for k, v in os.environ.items() if k not in ("SCHEDRL_TRACE_PATH", "SCHEDRL_TRACES_DIR")}
    out["SCHEDRL_CACHE_DIR"] = str(tmp_path / "cache")
    return out


def schedrl(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m schedrl.cli.main ARGS` with `env`, run in this process (the entry point itself: test_entry_points)."""
    return run_cli(*args, env=env, cwd=cwd)


def assert_input_error(result: subprocess.CompletedProcess, pattern: str) -> None:
    """Exit status 2, one `error:` line on stderr matching pattern, no traceback."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "error: " in lines[0], result.stderr
    assert re.search(pattern, lines[0]), lines[0]


@pytest.fixture
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.swf"
    path.write_text(TINY)
    return path


@pytest.fixture
def tiny_catalog(tmp_path, env) -> dict[str, str]:
    """An environment whose catalog has `tiny` (checksummed) and `nosum` (no checksum)."""
    d = tmp_path / "catalog"
    d.mkdir()
    (d / "catalog.toml").write_text(
        f'[trace.tiny]\nfile = "tiny.swf.gz"\nurl = "http://127.0.0.1:9/tiny.swf.gz"\nsha256 = "{TINY_SHA}"\nnodes = 8\n'
        '[trace.nosum]\nfile = "nosum.swf.gz"\nurl = "http://127.0.0.1:9/nosum.swf.gz"\nsha256 = ""\nnodes = 8\n')
    return {**env, "SCHEDRL_TRACES_DIR": str(d)}


def test_list_shows_the_catalog_and_how_to_get_missing_traces(env):
    result = schedrl(env, "traces", "list")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split()[:4] == ["name", "jobs", "procs", "nodes"]
    assert "schedrl traces fetch ANL-Intrepid" in result.stdout
    assert "lublin_default.swf.gz" in result.stdout  # the embedded default trace, found in the repository


def test_list_json_says_where_each_trace_is(env):
    shared = shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz").parent
    result = schedrl({**env, "SCHEDRL_TRACE_PATH": str(shared)}, "traces", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert rows["SDSC-SP2"]["path"] == str(shared / "SDSC-SP2-1998-4.2-cln.swf.gz")
    assert rows["default"]["available"] is True
    assert rows["RICC"]["available"] is False and rows["RICC"]["get"] == "schedrl traces fetch RICC"


def test_info_json_on_a_hand_checked_trace(env, tiny):
    result = schedrl(env, "traces", "info", str(tiny), "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert (info["jobs_read"], info["jobs"], info["machine"]) == (4, 4, {"procs": 8, "nodes": 8})
    assert info["sha256"] == TINY_SHA and info["catalog"] is None
    assert info["header"]["max_nodes"] == 8
    stats = info["stats"]
    assert stats["mean_interarrival_s"] == pytest.approx(400 / 3)
    assert (stats["mean_runtime_s"], stats["median_runtime_s"]) == (25, 25)
    assert (stats["mean_requested_s"], stats["median_requested_s"]) == (70, 50)
    assert (stats["mean_size_procs"], stats["median_size_procs"]) == (3.75, 3)
    assert stats["estimate_accuracy"] == pytest.approx((0.5 + 0.5 + 0.5 + 0.25) / 4)


def test_info_text_has_header_report_and_statistics(env, tiny):
    result = schedrl(env, "traces", "info", str(tiny), "--cleaning", "none")
    assert result.returncode == 0, result.stderr
    for text in ("machine        8 processors, 8 nodes", "4 read, 4 kept (cleaning: none)",
                 "kept 4 of 4 jobs", "mean inter-arrival", "estimate accuracy    0.438"):
        assert text in result.stdout


def test_info_by_catalog_name(env):
    shared = shared_trace("lublin_256.swf.gz").parent
    result = schedrl({**env, "SCHEDRL_TRACE_PATH": str(shared)}, "traces", "info", "Lublin-1", "--json",
                     "--cleaning", "rlscheduler")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert (info["name"], info["jobs_read"], info["machine"]["procs"]) == ("lublin_256", 10000, 256)
    assert info["checksum_verified"] is True and info["cleaning"] == "rlscheduler"


def test_info_on_the_embedded_default_trace(env):
    result = schedrl(env, "traces", "info", "default", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["checksum_verified"] is True


def test_info_unknown_name(env):
    assert_input_error(schedrl(env, "traces", "info", "HPC2X"), r"HPC2X: no such file, .*did you mean HPC2N")


def test_info_absent_catalog_trace(env):
    assert_input_error(schedrl(env, "traces", "info", "PIK-IPLEX"), r"not available locally .*schedrl traces fetch PIK-IPLEX")


def test_info_bad_trace_names_file_and_line(env, tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text(TINY + "5 500 0 50 1 -1 -1 1 60 -1 1 1 1\n")
    assert_input_error(schedrl(env, "traces", "info", str(bad)), r"bad.swf:7: expected 18 whitespace-separated fields, found 13")


def test_info_bad_cleaning_preset_is_a_usage_error(env, tiny):
    result = schedrl(env, "traces", "info", str(tiny), "--cleaning", "aggressive")
    assert result.returncode == 2
    assert "invalid choice: 'aggressive'" in result.stderr


def test_traces_without_an_action_is_a_usage_error(env):
    result = schedrl(env, "traces")
    assert result.returncode == 2
    assert "required: ACTION" in result.stderr


def test_fetch_from_a_local_copy(tiny_catalog, tmp_path):
    packed = tmp_path / "tiny.swf.gz"
    packed.write_bytes(gzip.compress(TINY.encode()))
    result = schedrl(tiny_catalog, "traces", "fetch", "tiny", "--from", str(packed), "--dest", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    assert f"tiny: {tmp_path / 'd' / 'tiny.swf.gz'} (sha256 {TINY_SHA} verified)" in result.stdout
    listed = schedrl({**tiny_catalog, "SCHEDRL_TRACE_PATH": str(tmp_path / "d")}, "traces", "list")
    assert str(tmp_path / "d" / "tiny.swf.gz") in listed.stdout


def test_fetch_checksum_mismatch(tiny_catalog, tmp_path):
    other = tmp_path / "other.swf"
    other.write_text(TINY.replace("400 0 40", "400 0 41"))
    assert_input_error(schedrl(tiny_catalog, "traces", "fetch", "tiny", "--from", str(other)),
                       rf"other.swf: sha256 of the uncompressed content is [0-9a-f]{{64}}, expected {TINY_SHA}")
    assert not (tmp_path / "cache" / "traces" / "tiny.swf").exists()


def test_fetch_without_catalog_checksum_warns_unverified(tiny_catalog, tiny):
    result = schedrl(tiny_catalog, "traces", "fetch", "nosum", "--from", str(tiny))
    assert result.returncode == 0, result.stderr
    assert f'sha256 {TINY_SHA} is UNVERIFIED' in result.stderr
    assert f'sha256 = "{TINY_SHA}"' in result.stderr


def test_fetch_unreachable_download(tiny_catalog):
    assert_input_error(schedrl(tiny_catalog, "traces", "fetch", "tiny", "--quiet"), r"download failed: .*--from FILE")


def test_fetch_unknown_and_generated_names(env):
    assert_input_error(schedrl(env, "traces", "fetch", "SDSC-SP3"), r"did you mean SDSC-SP2")
    assert_input_error(schedrl(env, "traces", "fetch", "default"), r"is generated, not downloaded")


def test_generate_lublin_is_seeded_and_readable(env, tmp_path):
    out = [tmp_path / "a.swf.gz", tmp_path / "b.swf"]
    for path in out:
        result = schedrl(env, "traces", "generate", "lublin", "--jobs", "50", "--nodes", "64", "--seed", "7",
                         "--out", str(path))
        assert result.returncode == 0, result.stderr
        assert f"wrote 50 jobs (64 processors) to {path}" in result.stdout
    a, b = (read_swf(p, CleaningRules.none(), use_cache=False) for p in out)
    assert (len(a), a.max_procs, a.max_nodes) == (50, 64, 64)
    assert a.sha256 == b.sha256


@pytest.mark.parametrize(
    "args, pattern",
    [
        (["--jobs", "0"], r"--jobs must be >= 1, got 0"),
        (["--jobs", "5", "--nodes", "-4"], r"--nodes must be >= 1, got -4"),
        (["--jobs", "5", "--out", "no/such/dir/x.swf"], r"directory no/such/dir does not exist"),
    ],
)
def test_generate_bad_values(env, tmp_path, args, pattern):
    full = ["--out", str(tmp_path / "x.swf"), *args]
    assert_input_error(schedrl(env, "traces", "generate", "lublin", *full, cwd=tmp_path), pattern)


def test_generate_unknown_model(env, tmp_path):
    result = schedrl(env, "traces", "generate", "poisson", "--jobs", "5", "--out", str(tmp_path / "x.swf"))
    assert result.returncode == 2 and "invalid choice: 'poisson'" in result.stderr
