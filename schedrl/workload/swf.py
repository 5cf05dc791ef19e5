"""Read and write Standard Workload Format traces (`.swf`, `.swf.gz`)."""

from __future__ import annotations

import gzip
import hashlib
import math
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np

from schedrl.workload.cache import load_parsed, save_parsed
from schedrl.workload.cleaning import CleaningRules, clean_columns
from schedrl.workload.errors import TraceError
from schedrl.workload.fields import FIELD_NAMES, N_FIELDS, SWF_FIELDS
from schedrl.workload.header import SwfHeader, parse_header
from schedrl.workload.workload import Workload


def read_bytes(path: str | Path) -> bytes:
    """The uncompressed content of a trace file (gzip detected by its magic bytes)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TraceError(path, "no such file") from None
    except IsADirectoryError:
        raise TraceError(path, "is a directory, not a trace file") from None
    except OSError as e:
        raise TraceError(path, f"cannot read: {e.strerror}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:
            raise TraceError(path, f"truncated or corrupt gzip data ({e})", hint="re-download or re-compress the file") from None
    if not data.strip():
        raise TraceError(path, "empty file", hint="an SWF trace has one job per line")
    return data


def _token_at(data: bytes, start: int) -> str:
    end = start
    while end < len(data) and data[end] > 32:
        end += 1
    return data[start:end].decode("utf-8", errors="replace")


def parse_swf(data: bytes, path: str | Path = "<bytes>") -> tuple[SwfHeader, np.ndarray, np.ndarray]:
    """Parse SWF content into (header, values[jobs, 18] float64, 1-based line number of each job)."""
    from schedrl.workload.scan import SCAN_FIELD_COUNT, scan_swf

    buf = np.frombuffer(data, dtype=np.uint8)
    values, lines, comments, slow, status, bad_line, seen = scan_swf(buf, N_FIELDS)
    if status == SCAN_FIELD_COUNT:
        raise TraceError(path, f"expected {N_FIELDS} whitespace-separated fields, found {seen}", line=int(bad_line))
    for row, col, start in slow:
        token = _token_at(data, int(start))
        try:
            value = float(token)
        except ValueError:
            raise TraceError(path, f"field {col + 1} ({FIELD_NAMES[col]}) is not a number: {token!r}",
                             line=int(lines[row])) from None
        if not math.isfinite(value):
            raise TraceError(path, f"field {col + 1} ({FIELD_NAMES[col]}) is not finite: {token!r}", line=int(lines[row]))
        values[row, col] = value
    if len(values) == 0:
        raise TraceError(path, "no job lines (only comments or blank lines)")
    for f in SWF_FIELDS:
        if f.dtype is np.int64:
            col = values[:, f.index]
            huge = np.flatnonzero(np.abs(col) > 2.0**53)
            if huge.size:
                raise TraceError(path, f"field {f.index + 1} ({f.name}) is out of range: {col[huge[0]]:g}",
                                 line=int(lines[huge[0]]))
            bad = np.flatnonzero(col != np.round(col))
            if bad.size:
                raise TraceError(path, f"field {f.index + 1} ({f.name}) must be an integer, found {float(col[bad[0]])!r}",
                                 line=int(lines[bad[0]]))
    header = parse_header([data[s:e].decode("utf-8", errors="replace").rstrip("\r") for s, e in comments])
    return header, values, lines


def _machine_size(header: SwfHeader, procs: np.ndarray) -> tuple[int, int, str | None]:
    procs_h = header.max_procs if header.max_procs and header.max_procs > 0 else None
    nodes_h = header.max_nodes if header.max_nodes and header.max_nodes > 0 else None
    if procs_h is None and nodes_h is None:
        inferred = int(procs.max()) if procs.size and procs.max() > 0 else 1
        return inferred, inferred, f"header gives neither MaxProcs nor MaxNodes: machine size inferred as {inferred} processors (widest job)"
    procs_n = procs_h or nodes_h
    nodes_n = nodes_h or procs_h
    return int(procs_n), int(nodes_n), None


def read_swf(
    path: str | Path,
    rules: CleaningRules | None = CleaningRules(),
    *,
    name: str | None = None,
    use_cache: bool = True,
) -> Workload:
    """Read an SWF trace into a `Workload`.

    `rules` selects the cleaning (None: no cleaning at all, not even a report); the result's
    `report` says what was dropped or repaired. Parsed content is cached by sha256, so a second
    load of the same file only decompresses, hashes and cleans.
    """
    path = Path(path)
    data = read_bytes(path)
    sha = hashlib.sha256(data).hexdigest()
    cached = load_parsed(sha) if use_cache else None
    if cached is not None:
        values, lines, comment_lines = cached
        header = parse_header(comment_lines)
    else:
        header, values, lines = parse_swf(data, path)
        if use_cache:
            save_parsed(sha, values, lines, [";" + c for c in header.comments])
    columns = {f.name: values[:, f.index].astype(f.dtype) for f in SWF_FIELDS}
    return workload_from_columns(columns, header, name or trace_stem(path), str(path), rules, lines, sha)


def workload_from_columns(columns, header, name, source, rules, lines=None, sha256=None) -> Workload:
    """Clean raw SWF columns and wrap them in a `Workload` with the machine size from the header."""
    procs = np.where(columns["procs_req"] > 0, columns["procs_req"], columns["procs_alloc"])
    max_procs, max_nodes, note = _machine_size(header, procs)
    report = None
    if rules is not None:
        columns, report = clean_columns(columns, max_procs, rules, source, lines)
        if note:
            report = replace(report, notes=report.notes + (note,))
    return Workload(columns, max_procs, max_nodes, name=name, header=header, report=report, sha256=sha256)


def trace_stem(path: str | Path) -> str:
    """`SDSC-SP2-1998-4.2-cln.swf.gz` -> `SDSC-SP2-1998-4.2-cln`."""
    name = Path(path).name
    for suffix in (".gz", ".swf"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _format_value(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return repr(v) if isinstance(v, float) else str(v)


def format_swf(workload: Workload) -> str:
    """SWF text of a workload: its header comments (or a minimal header) and one line per job."""
    header = workload.header
    if header.comments:
        head = [";" + c for c in header.comments]
    else:
        head = ["; Version: 2.2", f"; MaxJobs: {len(workload)}", f"; MaxRecords: {len(workload)}",
                f"; MaxNodes: {workload.max_nodes}", f"; MaxProcs: {workload.max_procs}"]
    cols = [workload.columns[f.name].tolist() for f in SWF_FIELDS]
    body = [" ".join(_format_value(v) for v in row) for row in zip(*cols)]
    return "\n".join(head + body) + "\n"


def write_swf(workload: Workload, path: str | Path) -> Path:
    """Write a workload as SWF (gzip-compressed when the name ends in `.gz`)."""
    path = Path(path)
    text = format_swf(workload).encode()
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(text, mtime=0))
    else:
        path.write_bytes(text)
    return path
