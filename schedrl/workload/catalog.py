"""The trace catalog: short names for workload logs, where to download them, and their checksums.

`traces/catalog.toml` in the repository lists every trace schedrl knows (Parallel Workloads
Archive logs, RLScheduler's Lublin traces, the generated default trace). A trace argument is a
path or a catalog name; names are looked up in the repository's `traces/` directory, the user
cache (`cache_dir()/traces`, where `fetch` puts downloads) and each directory of
`$SCHEDRL_TRACE_PATH` (a relative entry is relative to the directory the process started in, and made
absolute in the environment so Ray's actors and subprocesses, which run elsewhere, find the same files).
Checksums are of the uncompressed content, so a `.swf` and a `.swf.gz` of the same log match.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import os
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path

from schedrl import paths
from schedrl.workload.cache import cache_dir
from schedrl.workload.cleaning import CleaningRules
from schedrl.workload.errors import TraceError
from schedrl.workload.swf import read_swf, trace_stem
from schedrl.workload.workload import Workload

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

CATALOG_FILE = "catalog.toml"
_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class CatalogEntry:
    """One trace of the catalog."""

    name: str
    """Short name (`SDSC-SP2`), the key of its `[trace.NAME]` table."""
    file: str
    """File name on disk, as the archive names it (`SDSC-SP2-1998-4.2-cln.swf.gz`); may have a directory
    (`theta-cqgym/train.swf.gz`), relative to each searched directory."""
    url: str = ""
    """Download address; empty for traces generated in the repository."""
    sha256: str = ""
    """sha256 of the uncompressed content; empty when not yet known (downloads are unverified)."""
    procs: int | None = None
    """Processors in the machine (header MaxProcs), None when the header gives none."""
    nodes: int | None = None
    """Nodes in the machine (header MaxNodes), None when the header gives none."""
    jobs: int | None = None
    """Job lines in the file, None when not known."""
    citation: str = ""
    """What to cite when publishing results obtained on the trace."""
    description: str = ""
    """Machine, site and period in one line."""
    aliases: tuple[str, ...] = ()
    """Other accepted names; the file stem is always one of them."""
    generate: str = ""
    """Arguments of `schedrl traces generate` that rebuild a generated trace; empty for logs."""

    @property
    def stem(self) -> str:
        """File name without `.swf`/`.gz` (`SDSC-SP2-1998-4.2-cln`), directory kept (`theta-cqgym/train`)."""
        parent = Path(self.file).parent
        return trace_stem(self.file) if parent == Path(".") else f"{parent.as_posix()}/{trace_stem(self.file)}"

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the entry answers to: name, aliases, file stem."""
        out = [self.name]
        for alias in (*self.aliases, self.stem):
            if alias not in out:
                out.append(alias)
        return tuple(out)

    @property
    def machine_size(self) -> int | None:
        """Processors, else nodes (the size `read_swf` uses)."""
        return self.procs or self.nodes

    @property
    def file_names(self) -> tuple[str, ...]:
        """Names a local copy may have: the catalog file name and its (un)compressed twin."""
        twin = self.file[:-3] if self.file.endswith(".gz") else self.file + ".gz"
        return (self.file, twin)

    def how_to_get(self) -> str:
        """The command that makes the trace available locally."""
        if self.generate:
            return f"schedrl traces generate {self.generate} --out {traces_dir() / self.file}"
        return f"schedrl traces fetch {self.name}"


_ENTRY_KEYS = {"file", "url", "sha256", "procs", "nodes", "jobs", "citation", "description", "aliases", "generate"}


def traces_dir() -> Path:
    """The repository's `traces/` directory: `$SCHEDRL_TRACES_DIR` (a relative one taken relative to where the process
    started: `schedrl.paths`), else beside the package source."""
    return paths.env_path(paths.TRACES_DIR) or Path(__file__).resolve().parents[2] / "traces"


def user_traces_dir() -> Path:
    """Where `fetch` puts downloaded traces: `cache_dir()/traces`."""
    return cache_dir() / "traces"


def search_dirs() -> list[Path]:
    """Directories searched for a catalog trace, in order: the repository's, the user's, then `$SCHEDRL_TRACE_PATH`'s
    (each absolute, read through `schedrl.paths`)."""
    return [traces_dir(), user_traces_dir(), *paths.env_paths(paths.TRACE_PATH)]


def _entry_from_table(name: str, table: dict, source: Path) -> CatalogEntry:
    unknown = sorted(set(table) - _ENTRY_KEYS)
    if unknown:
        raise TraceError(source, f"[trace.{name}] has unknown keys: {', '.join(unknown)}",
                         hint=f"known keys: {', '.join(sorted(_ENTRY_KEYS))}")
    if not isinstance(table.get("file"), str) or not table["file"]:
        raise TraceError(source, f"[trace.{name}] needs a `file` name")
    if Path(table["file"]).is_absolute() or ".." in Path(table["file"]).parts:
        raise TraceError(source, f"[trace.{name}] file must be a relative path inside the searched directories, "
                                 f"got {table['file']!r}")
    sha = table.get("sha256", "")
    if sha and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha)):
        raise TraceError(source, f"[trace.{name}] sha256 must be 64 lowercase hex digits or \"\", got {sha!r}")
    if not table.get("url") and not table.get("generate"):
        raise TraceError(source, f"[trace.{name}] needs a `url` to download from or a `generate` command")
    for key in ("procs", "nodes", "jobs"):
        value = table.get(key)
        if value is not None and (not isinstance(value, int) or value <= 0):
            raise TraceError(source, f"[trace.{name}] {key} must be a positive integer, got {value!r}")
    return CatalogEntry(name=name, **{**table, "aliases": tuple(table.get("aliases", ()))})


def load_catalog(path: str | Path | None = None) -> dict[str, CatalogEntry]:
    """The catalog (`traces_dir()/catalog.toml` unless `path` is given), by name, in file order."""
    path = Path(path) if path is not None else traces_dir() / CATALOG_FILE
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise TraceError(path, "trace catalog not found",
                         hint="set SCHEDRL_TRACES_DIR to the repository's traces/ directory") from None
    except tomllib.TOMLDecodeError as e:
        raise TraceError(path, f"not valid TOML: {e}") from None
    unknown = sorted(set(data) - {"trace"})
    if unknown:
        raise TraceError(path, f"unknown top-level tables: {', '.join(unknown)} (entries are [trace.NAME])")
    entries = {name: _entry_from_table(name, table, path) for name, table in data.get("trace", {}).items()}
    owner: dict[str, str] = {}
    for entry in entries.values():
        for alias in entry.names:
            other = owner.setdefault(alias.lower(), entry.name)
            if other != entry.name:
                raise TraceError(path, f"name {alias!r} is used by both [trace.{other}] and [trace.{entry.name}]")
    return entries


def find_entry(name: str, catalog: dict[str, CatalogEntry] | None = None) -> CatalogEntry | None:
    """The entry a name (or alias, file stem or file name; case-insensitive) refers to, or None."""
    catalog = load_catalog() if catalog is None else catalog
    key = name.lower()
    for entry in catalog.values():
        if key in (n.lower() for n in (*entry.names, *entry.file_names)):
            return entry
    return None


def _unknown_name(name: str, catalog: dict[str, CatalogEntry]) -> TraceError:
    names = [n for e in catalog.values() for n in e.names]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    close += [n for n in names if name.lower() in n.lower() and n not in close][: 3 - len(close)]
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return TraceError(name, "no such file, and not a trace name in the catalog",
                      hint=hint + "`schedrl traces list` shows the catalog; `schedrl traces fetch NAME` downloads one")


def locate(entry: CatalogEntry) -> Path | None:
    """Where a local copy of a catalog trace is, or None."""
    for directory in search_dirs():
        for file_name in entry.file_names:
            candidate = directory / file_name
            if candidate.is_file():
                return candidate
    return None


def portable_trace(trace: str) -> str:
    """A trace argument as a run records it: catalog names stay names (every node of a cluster, and a
    later evaluation on another machine, resolves them itself); file paths become absolute."""
    return trace if find_entry(trace) is not None else str(Path(trace).expanduser().resolve())


def resolve_trace(name_or_path: str | Path) -> Path:
    """The file a trace argument means: an existing path wins, else a catalog name found locally."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        raise TraceError(path, "is a directory, not a trace file")
    catalog = load_catalog()
    entry = find_entry(str(name_or_path), catalog)
    if entry is None:
        raise _unknown_name(str(name_or_path), catalog)
    found = locate(entry)
    if found is None:
        where = ", ".join(str(d) for d in search_dirs())
        raise TraceError(entry.name, f"{entry.file} is not available locally (looked in {where})",
                         hint=f"get it with `{entry.how_to_get()}`")
    return found


def load_trace(name_or_path: str | Path, rules: CleaningRules | None = CleaningRules(), *,
               use_cache: bool = True) -> Workload:
    """Read a trace given by path or catalog name; a catalog trace must match its catalog checksum."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return read_swf(path, rules, use_cache=use_cache)
    resolved = resolve_trace(name_or_path)
    entry = find_entry(str(name_or_path))
    workload = read_swf(resolved, rules, name=entry.name, use_cache=use_cache)
    if entry.sha256 and workload.sha256 != entry.sha256:
        raise TraceError(resolved, f"sha256 of the content is {workload.sha256}, the catalog expects {entry.sha256} for {entry.name}",
                         hint="a different version of the log; re-fetch it, or pass the file path to load it anyway")
    return workload


def content_sha256(path: str | Path) -> str:
    """sha256 of a file's uncompressed content (gzip detected by its magic bytes), streamed."""
    path = Path(path)
    digest = hashlib.sha256()
    with open(path, "rb") as raw:
        compressed = raw.read(2) == _GZIP_MAGIC
    try:
        with (gzip.open(path, "rb") if compressed else open(path, "rb")) as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                digest.update(chunk)
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise TraceError(path, f"truncated or corrupt gzip data ({e})", hint="download or copy it again") from None
    return digest.hexdigest()


def recorded_sha256(path: str | Path) -> str | None:
    """The checksum `fetch` recorded beside a trace (`FILE.sha256`), or None."""
    sidecar = Path(str(path) + ".sha256")
    try:
        return sidecar.read_text().split()[0]
    except (OSError, IndexError):
        return None


class _Progress:
    """A one-line download progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, label: str, total: int | None, enabled: bool):
        self.label, self.total, self.enabled = label, total, enabled
        self.done = 0
        self._last = 0.0

    def update(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and now - self._last >= 0.1:
            self._last = now
            self._draw()

    def _draw(self) -> None:
        mb = self.done / 1e6
        if self.total:
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(30 * frac)
            text = f"\r{self.label} [{bar:<30}] {mb:7.1f}/{self.total / 1e6:.1f} MB {100 * frac:3.0f}%"
        else:
            text = f"\r{self.label} {mb:7.1f} MB"
        sys.stderr.write(text)
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw()
            sys.stderr.write("\n")
            sys.stderr.flush()


def _download(url: str, out, progress: bool) -> None:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            length = response.headers.get("Content-Length")
            bar = _Progress(f"downloading {url.rsplit('/', 1)[-1]}", int(length) if length else None, progress)
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                out.write(chunk)
                bar.update(len(chunk))
            bar.close()
    except urllib.error.HTTPError as e:
        raise TraceError(url, f"download failed: HTTP {e.code} {e.reason}",
                         hint="download it by hand and import it with `schedrl traces fetch NAME --from FILE`") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", None) or e
        raise TraceError(url, f"download failed: {reason}",
                         hint="check the network, or download it by hand and use `schedrl traces fetch NAME --from FILE`") from None


def fetch(name: str | CatalogEntry, dest_dir: str | Path | None = None, from_file: str | Path | None = None,
          progress: bool = True) -> Path:
    """Download a catalog trace (or import a local copy with `from_file`) into `dest_dir`.

    The default destination is `cache_dir()/traces`. The content goes to a temporary file, its
    uncompressed sha256 is checked against the catalog (a mismatch raises and keeps nothing), then
    it is moved into place atomically. A catalog entry without a checksum is stored unverified;
    either way the checksum is recorded in `FILE.sha256` beside it. A verified copy already at the
    destination is not downloaded again.
    """
    entry = name if isinstance(name, CatalogEntry) else find_entry(name)
    if entry is None:
        raise _unknown_name(str(name), load_catalog())
    if from_file is None and not entry.url:
        raise TraceError(entry.name, "is generated, not downloaded", hint=f"run `{entry.how_to_get()}`")
    dest = Path(dest_dir).expanduser() if dest_dir is not None else user_traces_dir()
    if from_file is None:
        for existing in (dest / f for f in entry.file_names):
            if existing.is_file() and entry.sha256 and recorded_sha256(existing) == entry.sha256:
                return existing
    subdir = dest / Path(entry.file).parent
    try:
        subdir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=subdir, prefix=f".{Path(entry.file).name}.", suffix=".part")
    except OSError as e:
        raise TraceError(dest, f"cannot write there: {e.strerror}") from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            if from_file is not None:
                source = Path(from_file).expanduser()
                if not source.is_file():
                    raise TraceError(source, "no such file")
                with open(source, "rb") as fh:
                    shutil.copyfileobj(fh, out, _CHUNK)
            else:
                _download(entry.url, out, progress)
        origin = str(from_file) if from_file is not None else entry.url
        try:
            actual = content_sha256(tmp)
        except TraceError as e:
            raise TraceError(origin, e.problem, hint="the copy is damaged; download or copy it again") from None
        if entry.sha256 and actual != entry.sha256:
            raise TraceError(origin, f"sha256 of the uncompressed content is {actual}, expected {entry.sha256} for {entry.name}",
                             hint="the copy is corrupt or a different version of the log; nothing was stored")
        with open(tmp, "rb") as fh:
            compressed = fh.read(2) == _GZIP_MAGIC
        final = dest / (entry.file_names[0] if compressed == entry.file.endswith(".gz") else entry.file_names[1])
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    Path(str(final) + ".sha256").write_text(f"{actual}  {trace_stem(final)}.swf\n")
    return final
