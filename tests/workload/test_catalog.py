"""The trace catalog: its contents, name resolution, loading, and verified fetching (no network)."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import os
import re
import shutil
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from shared_traces import SHARED_DATA, SHARED_TRACES, shared_trace
from schedrl.workload import CleaningRules, TraceError
from schedrl.workload.catalog import (
    CatalogEntry,
    content_sha256,
    fetch,
    find_entry,
    load_catalog,
    load_trace,
    locate,
    recorded_sha256,
    resolve_trace,
    search_dirs,
    traces_dir,
)

REPO_TRACES = Path(__file__).resolve().parents[2] / "traces"
PWA = "https://www.cs.huji.ac.il/labs/parallel/workload/l_"
TINY = "; MaxNodes: 8\n" + "".join(f"{i} {10 * i} 0 50 2 -1 -1 2 60 -1 1 1 1 1 1 1 -1 -1\n" for i in range(1, 6))
TINY_SHA = hashlib.sha256(TINY.encode()).hexdigest()


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path, monkeypatch):
    """Each test gets its own user cache and no extra trace path (the repository catalog stays)."""
    monkeypatch.setenv("SCHEDRL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SCHEDRL_TRACE_PATH", raising=False)
    monkeypatch.delenv("SCHEDRL_TRACES_DIR", raising=False)


@pytest.fixture
def tiny_gz(tmp_path) -> Path:
    path = tmp_path / "src" / "tiny.swf.gz"
    path.parent.mkdir()
    path.write_bytes(gzip.compress(TINY.encode(), mtime=0))
    return path


@pytest.fixture
def server(tmp_path):
    """A local HTTP server over tmp_path/www; yields (base URL, list of requested paths)."""
    root = tmp_path / "www"
    root.mkdir()
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root, requests
    httpd.shutdown()
    httpd.server_close()


def tiny_entry(url: str, sha256: str = TINY_SHA, file: str = "tiny.swf.gz") -> CatalogEntry:
    return CatalogEntry(name="tiny", file=file, url=url, sha256=sha256, nodes=8, jobs=5)


# --- the catalog itself --------------------------------------------------------------------------


def test_catalog_has_the_papers_logs_and_the_default_trace():
    catalog = load_catalog()
    for name in ("SDSC-SP2", "HPC2N", "CEA-Curie", "lublin_256", "ANL-Intrepid", "PIK-IPLEX", "RICC",
                 "lublin_1024", "default"):
        assert name in catalog
    for name in ("ANL-Intrepid", "PIK-IPLEX", "RICC", "lublin_1024"):
        assert catalog[name].sha256 == ""  # not in shared: fetched unverified
        assert catalog[name].url


def test_every_entry_is_downloadable_or_generated():
    for entry in load_catalog().values():
        assert bool(entry.url) != bool(entry.generate), entry.name
        if entry.url.startswith("https://www.cs.huji.ac.il/"):
            assert entry.url.startswith(PWA) and entry.url.endswith("/" + entry.file), entry.name
        elif entry.url:
            # a repository's copy, pinned to a commit
            assert re.match(r"https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/", entry.url), entry.name
        assert entry.citation and entry.description, entry.name
        assert entry.machine_size, entry.name


def test_every_name_and_alias_is_unique():
    seen: set[str] = set()
    for entry in load_catalog().values():
        for name in entry.names:
            assert name.lower() not in seen
            seen.add(name.lower())


def _sources() -> dict[str, tuple[int, int]]:
    from test_swf import SOURCES

    return {file: (jobs, size) for file, jobs, size in SOURCES}


def test_every_shared_trace_is_in_the_catalog_with_its_checksum_jobs_and_size():
    shared_trace("SOURCES.md")
    by_file = {e.file: e for e in load_catalog().values()}
    for path in sorted(SHARED_TRACES.glob("*.swf.gz")):
        entry = by_file[path.name]
        jobs, size = _sources()[path.name]
        assert (entry.jobs, entry.machine_size) == (jobs, size), entry.name
        assert content_sha256(path) == entry.sha256, entry.name


def test_theta_cqgym_in_shared_data_is_in_the_catalog_and_loads_by_name(monkeypatch):
    path = shared_trace("theta-cqgym/train.swf.gz", SHARED_DATA)
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", str(SHARED_DATA))
    entry = load_catalog()["theta-cqgym"]
    assert content_sha256(path) == entry.sha256
    assert find_entry("theta-cqgym/train") == entry and find_entry("theta") == entry
    assert find_entry("train") is None  # a directory keeps a generic file name from becoming a trace name
    wl = load_trace("theta-cqgym")  # found through SCHEDRL_TRACE_PATH (tests/conftest.py adds ../shared/data)
    assert (wl.name, len(wl), wl.max_procs, wl.max_nodes, entry.jobs) == ("theta-cqgym", 3000, 4360, 4360, 3000)
    assert list(wl.extras) == ["priority"] and int(wl.extras["priority"].sum()) == 270


def test_fetch_into_a_catalog_subdirectory(tmp_path, tiny_gz):
    entry = tiny_entry("", file="sub/tiny.swf.gz")
    stored = fetch(entry, dest_dir=tmp_path / "dest", from_file=tiny_gz, progress=False)
    assert stored == tmp_path / "dest" / "sub" / "tiny.swf.gz" and recorded_sha256(stored) == TINY_SHA
    assert entry.stem == "sub/tiny" and "sub/tiny" in entry.names


def test_catalog_file_must_be_a_relative_path(tmp_path):
    bad = tmp_path / "catalog.toml"
    bad.write_text('[trace.x]\nfile = "../elsewhere/x.swf"\nurl = "https://example.org/x.swf"\n')
    with pytest.raises(TraceError, match=r"file must be a relative path inside the searched directories"):
        load_catalog(bad)


def test_embedded_default_trace_matches_its_entry():
    entry = load_catalog()["default"]
    wl = load_trace("default")
    assert wl.name == "default"
    assert wl.sha256 == entry.sha256
    assert wl.report.jobs_in == entry.jobs
    assert (wl.max_procs, wl.max_nodes) == (entry.procs, entry.nodes)


def test_find_entry_by_name_alias_stem_and_file_case_insensitively():
    catalog = load_catalog()
    for query in ("SDSC-SP2", "sdsc-sp2", "SDSC-SP2-1998-4.2-cln", "SDSC-SP2-1998-4.2-cln.swf.gz",
                  "SDSC-SP2-1998-4.2-cln.swf"):
        assert find_entry(query, catalog).name == "SDSC-SP2"
    assert find_entry("Lublin-1", catalog).name == "lublin_256"
    assert find_entry("lublin_default", catalog).name == "default"
    assert find_entry("SDSC-SP3", catalog) is None


def test_bad_catalogs_are_reported(tmp_path):
    path = tmp_path / "catalog.toml"
    path.write_text('[trace.x]\nfile = "x.swf"\nurl = "http://h/x.swf"\nsize = 3\n')
    with pytest.raises(TraceError, match=r"\[trace.x\] has unknown keys: size"):
        load_catalog(path)
    path.write_text('[trace.x]\nfile = "x.swf"\nurl = "http://h/x.swf"\nsha256 = "abc"\n')
    with pytest.raises(TraceError, match="sha256 must be 64 lowercase hex digits"):
        load_catalog(path)
    path.write_text('[trace.x]\nfile = "x.swf"\n')
    with pytest.raises(TraceError, match="needs a `url`"):
        load_catalog(path)
    path.write_text('[trace.x]\nfile = "x.swf"\nurl = "u"\n[trace.y]\nfile = "y.swf"\nurl = "u"\naliases = ["X"]\n')
    with pytest.raises(TraceError, match="used by both"):
        load_catalog(path)
    path.write_text("[trace.x\n")
    with pytest.raises(TraceError, match="not valid TOML"):
        load_catalog(path)
    with pytest.raises(TraceError, match="trace catalog not found .*SCHEDRL_TRACES_DIR"):
        load_catalog(tmp_path / "missing.toml")


# --- resolving names -----------------------------------------------------------------------------


def test_traces_dir_defaults_to_the_repository_and_follows_the_environment(tmp_path, monkeypatch):
    assert traces_dir() == REPO_TRACES
    monkeypatch.setenv("SCHEDRL_TRACES_DIR", str(tmp_path))
    assert traces_dir() == tmp_path


def test_an_existing_path_wins_over_a_catalog_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("default").write_text(TINY)
    assert resolve_trace("default") == Path("default")
    assert load_trace("default").sha256 == TINY_SHA


def test_names_are_found_in_cache_and_trace_path_in_order(tmp_path, monkeypatch, tiny_gz):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", f"{first}{os.pathsep}{second}")
    assert search_dirs()[-2:] == [first, second]
    entry = load_catalog()["RICC"]
    shutil.copy(tiny_gz, second / entry.file)
    assert resolve_trace("RICC") == second / entry.file
    (first / "RICC-2010-2.swf").write_text(TINY)  # the uncompressed twin is accepted too
    assert resolve_trace("ricc") == first / "RICC-2010-2.swf"
    cached = tmp_path / "cache" / "traces"
    cached.mkdir(parents=True)
    shutil.copy(tiny_gz, cached / entry.file)
    assert resolve_trace("RICC") == cached / entry.file
    assert locate(entry) == cached / entry.file


def test_a_relative_trace_path_finds_the_same_file_as_the_absolute_one_after_a_chdir(tmp_path, monkeypatch, tiny_gz):
    """Relative to where the process started, not to where it is when it looks (a Tune trial actor has moved into
    its trial directory); made absolute in the environment, which Ray's workers and subprocesses inherit."""
    from schedrl import paths

    traces = tmp_path / "traces"
    traces.mkdir()
    entry = load_catalog()["RICC"]
    shutil.copy(tiny_gz, traces / entry.file)
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", str(traces))
    by_absolute = resolve_trace("RICC")
    relative = os.path.relpath(traces, paths.START_DIR)
    assert not Path(relative).is_absolute()
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", f"{relative}{os.pathsep}{os.pathsep}~")
    from tests.test_paths import chdir_to_a_trial_dir

    chdir_to_a_trial_dir(tmp_path, relative, monkeypatch)  # a Tune trial's working directory
    by_relative = resolve_trace("RICC")
    assert by_relative == by_absolute and by_relative.samefile(traces / entry.file)
    assert os.environ["SCHEDRL_TRACE_PATH"] == f"{traces}{os.pathsep}{Path.home()}"
    assert search_dirs()[-2:] == [traces, Path.home()]


def test_unknown_name_lists_close_matches():
    with pytest.raises(TraceError, match=r"SDSC-SP: no such file, and not a trace name .*did you mean SDSC-SP2"):
        resolve_trace("SDSC-SP")
    with pytest.raises(TraceError, match=r"schedrl traces list"):
        resolve_trace("completely-unrelated")


def test_known_but_absent_trace_says_how_to_fetch_it():
    with pytest.raises(TraceError, match=r"ANL-Intrepid-2009-1.swf.gz is not available locally .*"
                                         r"schedrl traces fetch ANL-Intrepid"):
        resolve_trace("ANL-Intrepid")


def test_missing_default_trace_says_how_to_regenerate_it(tmp_path, monkeypatch):
    shutil.copy(REPO_TRACES / "catalog.toml", tmp_path / "catalog.toml")
    monkeypatch.setenv("SCHEDRL_TRACES_DIR", str(tmp_path))
    with pytest.raises(TraceError, match=r"lublin_default.swf.gz is not available locally .*"
                                         r"schedrl traces generate lublin --jobs 40000 --nodes 256 --seed 2003 --out"):
        load_trace("default")


def test_directory_is_not_a_trace(tmp_path):
    with pytest.raises(TraceError, match="is a directory"):
        resolve_trace(tmp_path)


def test_load_trace_by_name_uses_the_catalog_name_and_rules(monkeypatch):
    path = shared_trace("lublin_256.swf.gz")
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", str(path.parent))
    wl = load_trace("Lublin-1", rules=CleaningRules.rlscheduler())
    assert (wl.name, len(wl), wl.max_procs) == ("lublin_256", 10000, 256)
    assert load_trace(path).name == "lublin_256"


def test_load_trace_rejects_a_local_copy_with_another_checksum(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", str(tmp_path))
    copy = tmp_path / "SDSC-SP2-1998-4.2-cln.swf"
    copy.write_text(TINY)
    with pytest.raises(TraceError, match=rf"sha256 of the content is {TINY_SHA}, the catalog expects 2bb635f4"):
        load_trace("SDSC-SP2")
    assert len(load_trace(copy)) == 5  # by path, any content loads


# --- fetching ------------------------------------------------------------------------------------


def test_fetch_downloads_verifies_and_stores_in_the_user_cache(server, tiny_gz):
    base, root, requests = server
    shutil.copy(tiny_gz, root / "tiny.swf.gz")
    path = fetch(tiny_entry(f"{base}/tiny.swf.gz"), progress=False)
    assert path.parent == Path(search_dirs()[1]) and path.name == "tiny.swf.gz"
    assert path.read_bytes() == tiny_gz.read_bytes()
    assert recorded_sha256(path) == TINY_SHA
    assert sorted(p.name for p in path.parent.iterdir()) == ["tiny.swf.gz", "tiny.swf.gz.sha256"]
    again = fetch(tiny_entry(f"{base}/tiny.swf.gz"), progress=False)
    assert again == path and requests == ["/tiny.swf.gz"]  # a verified copy is not downloaded twice


def test_fetch_draws_a_progress_bar_on_stderr(server, tiny_gz, tmp_path, capsys):
    base, root, _ = server
    shutil.copy(tiny_gz, root / "tiny.swf.gz")
    fetch(tiny_entry(f"{base}/tiny.swf.gz"), dest_dir=tmp_path / "d", progress=True)
    err = capsys.readouterr().err
    assert "downloading tiny.swf.gz" in err and "100%" in err


def test_fetch_stores_an_uncompressed_download_under_the_swf_name(server, tmp_path):
    base, root, _ = server
    (root / "tiny.swf").write_text(TINY)
    path = fetch(tiny_entry(f"{base}/tiny.swf"), dest_dir=tmp_path / "d", progress=False)
    assert path == tmp_path / "d" / "tiny.swf"
    assert path.read_text() == TINY


def test_fetch_checksum_mismatch_names_expected_and_actual_and_keeps_nothing(server, tiny_gz, tmp_path):
    base, root, _ = server
    shutil.copy(tiny_gz, root / "tiny.swf.gz")
    wrong = "0" * 64
    dest = tmp_path / "d"
    with pytest.raises(TraceError, match=rf"sha256 of the uncompressed content is {TINY_SHA}, expected {wrong}"):
        fetch(tiny_entry(f"{base}/tiny.swf.gz", sha256=wrong), dest_dir=dest, progress=False)
    assert list(dest.iterdir()) == []


def test_fetch_without_catalog_checksum_records_it_unverified(server, tiny_gz, tmp_path):
    base, root, _ = server
    shutil.copy(tiny_gz, root / "tiny.swf.gz")
    path = fetch(tiny_entry(f"{base}/tiny.swf.gz", sha256=""), dest_dir=tmp_path / "d", progress=False)
    assert recorded_sha256(path) == TINY_SHA


def test_fetch_http_error_suggests_a_manual_download(server, tmp_path):
    base, _, _ = server
    with pytest.raises(TraceError, match=r"download failed: HTTP 404 .*--from FILE"):
        fetch(tiny_entry(f"{base}/nothere.swf.gz"), dest_dir=tmp_path / "d", progress=False)
    assert list((tmp_path / "d").iterdir()) == []


def test_fetch_unreachable_host(tmp_path):
    with pytest.raises(TraceError, match="download failed"):
        fetch(tiny_entry("http://127.0.0.1:9/tiny.swf.gz"), dest_dir=tmp_path / "d", progress=False)


def test_fetch_from_a_local_copy_verifies_it(tmp_path, tiny_gz):
    entry = tiny_entry("http://127.0.0.1:9/unused")
    path = fetch(entry, from_file=tiny_gz, progress=False)
    assert path == tmp_path / "cache" / "traces" / "tiny.swf.gz"
    plain = tmp_path / "tiny.swf"
    plain.write_text(TINY)
    assert fetch(entry, dest_dir=tmp_path / "d", from_file=plain).name == "tiny.swf"
    other = tmp_path / "other.swf"
    other.write_text(TINY + TINY.splitlines()[-1] + "\n")
    with pytest.raises(TraceError, match=rf"other.swf: sha256 of the uncompressed content is [0-9a-f]{{64}}, expected {TINY_SHA}"):
        fetch(entry, dest_dir=tmp_path / "e", from_file=other)
    truncated = tmp_path / "cut.swf.gz"
    truncated.write_bytes(gzip.compress(TINY.encode() * 200)[:-20])
    with pytest.raises(TraceError, match="cut.swf.gz.*truncated or corrupt gzip"):
        fetch(entry, dest_dir=tmp_path / "f", from_file=truncated)
    with pytest.raises(TraceError, match="nothere.swf: no such file"):
        fetch(entry, dest_dir=tmp_path / "g", from_file=tmp_path / "nothere.swf")


def test_fetch_by_name_then_load_by_name(tmp_path, monkeypatch, tiny_gz):
    catalog_dir = tmp_path / "catalog"
    catalog_dir.mkdir()
    (catalog_dir / "catalog.toml").write_text(
        f'[trace.tiny]\nfile = "tiny.swf.gz"\nurl = "http://127.0.0.1:9/tiny.swf.gz"\nsha256 = "{TINY_SHA}"\nnodes = 8\n')
    monkeypatch.setenv("SCHEDRL_TRACES_DIR", str(catalog_dir))
    fetch("TINY", from_file=tiny_gz)
    wl = load_trace("tiny")
    assert (wl.name, len(wl), wl.max_procs) == ("tiny", 5, 8)


def test_fetch_unknown_or_generated_names():
    with pytest.raises(TraceError, match="did you mean HPC2N"):
        fetch("HPC2M")
    with pytest.raises(TraceError, match="is generated, not downloaded .*schedrl traces generate lublin"):
        fetch("default")


def test_cached_download_with_a_stale_record_is_fetched_again(server, tiny_gz, tmp_path):
    base, root, requests = server
    shutil.copy(tiny_gz, root / "tiny.swf.gz")
    entry = tiny_entry(f"{base}/tiny.swf.gz")
    path = fetch(entry, dest_dir=tmp_path / "d", progress=False)
    Path(str(path) + ".sha256").write_text("0" * 64 + "  tiny.swf\n")
    fetch(replace(entry), dest_dir=tmp_path / "d", progress=False)
    assert len(requests) == 2 and recorded_sha256(path) == TINY_SHA


def test_runs_record_catalog_names_as_names_and_paths_as_absolute_paths(tmp_path, monkeypatch):
    from schedrl.workload.catalog import portable_trace

    assert portable_trace("default") == "default"
    assert portable_trace("SDSC-SP2") == "SDSC-SP2"
    monkeypatch.chdir(tmp_path)
    assert portable_trace("mine.swf") == str(tmp_path / "mine.swf")
    assert portable_trace("~/x.swf").startswith("/") and portable_trace("~/x.swf").endswith("/x.swf")
