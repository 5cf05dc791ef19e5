"""Read and write Standard Workload Format traces (`.swf`, `.swf.gz`)."""

from __future__ import annotations

import gzip
import hashlib
import math
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np

from schedrl.workload.cache import load_parsed, save_parsed
from schedrl.workload.cleaning import CleaningRules, clean_columns
from schedrl.workload.errors import TraceError
from schedrl.workload.extras import EXTRA_COLUMNS_KEY, MAX_EXTRA_COLUMNS, check_extra_names, default_extra_names, split_names
from schedrl.workload.fields import FIELD_NAMES, N_FIELDS, SWF_FIELDS
from schedrl.workload.header import SwfHeader, parse_header
from schedrl.workload.workload import Workload


def read_bytes(path: str | Path) -> bytes:
    """The uncompressed content of a trace file (gzip detected by its magic bytes)."""
    from schedrl.bounded import LINE, TRACE, TooLarge, read_bounded

    path = Path(path)
    try:  # bounded: a device, a FIFO or a binary file given as a trace is refused, never read until memory runs out
        data = read_bounded(path, "an SWF trace or an accounting log", TRACE, LINE, gunzip=True)
    except FileNotFoundError:
        raise TraceError(path, "no such file") from None
    except IsADirectoryError:
        raise TraceError(path, "is a directory, not a trace file") from None
    except OSError as e:
        raise TraceError(path, f"cannot read: {e.strerror}") from None
    except TooLarge as e:
        raise TraceError(path, e.problem) from None
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


UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _check_text(buf: np.ndarray, data: bytes, path) -> None:
    """Reject content that is not SWF text (UTF-16, binary) with what it is instead of a field-count error."""
    if data[:2] in _UTF16_BOMS:
        raise TraceError(path, "UTF-16 encoded text, not an SWF text file",
                         hint="SWF files are ASCII: convert it, e.g. `iconv -f UTF-16 -t UTF-8`")
    # control bytes other than tab, newline, vertical tab, form feed and carriage return
    control = np.flatnonzero((buf < 32) & ((buf < 9) | (buf > 13)))
    if control.size:
        at = int(control[0])
        raise TraceError(path, f"binary content (byte 0x{buf[at]:02x}), not an SWF text file", line=_line_of(data, at),
                         hint="an SWF trace is plain text, one job per line (gzip-compressed files are read as such)")


def _field_name(col: int) -> str:
    return f"field {col + 1} ({FIELD_NAMES[col]})" if col < N_FIELDS else f"extra column {col + 1}"


_CR_ONLY = "lines end in CR only (old Mac line endings): convert them to LF"


def _cr_only(data: bytes) -> bool:
    return b"\r" in data and b"\n" not in data.rstrip(b"\n")


def _field_count_error(path, data: bytes, status: int, line: int, seen: int, width: int, first_line: int) -> TraceError:
    from schedrl.workload.scan import SCAN_TOO_WIDE

    if status == SCAN_TOO_WIDE:
        hint = _CR_ONLY if _cr_only(data) else f"SWF has {N_FIELDS} fields; at most {MAX_EXTRA_COLUMNS} extra columns are read"
        return TraceError(path, f"the first job line has {seen} whitespace-separated fields", line=line, hint=hint)
    what = "" if width == N_FIELDS else f" ({N_FIELDS} SWF fields + {width - N_FIELDS} extra, as on line {first_line})"
    hint = ""
    if seen > N_FIELDS and width == N_FIELDS:
        hint = f"extra columns after the {N_FIELDS} SWF fields must be on every job line, from the first (line {first_line})"
    elif seen < N_FIELDS:
        words = data.split(b"\n", line)[line - 1].decode("utf-8", errors="replace").split()
        if words and ":" in words[0]:
            hint = "a header line must start with ';'"
    return TraceError(path, f"expected {width} whitespace-separated fields{what}, found {seen}", line=line, hint=hint)


def parse_swf(data: bytes, path: str | Path = "<bytes>") -> tuple[SwfHeader, np.ndarray, np.ndarray]:
    """Parse SWF content into (header, values[jobs, 18 + extra columns] float64, 1-based line number of each job).

    A leading UTF-8 byte-order mark is skipped; binary or UTF-16 content is rejected as such.
    """
    from schedrl.workload.scan import SCAN_OK, scan_swf

    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
    buf = np.frombuffer(data, dtype=np.uint8)
    _check_text(buf, data, path)
    values, lines, comments, slow, status, bad_line, seen = scan_swf(buf, N_FIELDS, N_FIELDS + MAX_EXTRA_COLUMNS)
    if status != SCAN_OK:
        first_line = int(lines[0]) if len(lines) else int(bad_line)
        raise _field_count_error(path, data, status, int(bad_line), int(seen), values.shape[1], first_line)
    for row, col, start in slow:
        token = _token_at(data, int(start))
        try:
            value = float(token)
        except ValueError:
            raise TraceError(path, f"{_field_name(col)} is not a number: {token!r}", line=int(lines[row])) from None
        if not math.isfinite(value):
            raise TraceError(path, f"{_field_name(col)} is not finite: {token!r}", line=int(lines[row]))
        values[row, col] = value
    if len(values) == 0:
        raise TraceError(path, "no job lines (only comments or blank lines)", hint=_CR_ONLY if _cr_only(data) else "")
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


def _machine_size(header: SwfHeader, procs: np.ndarray) -> tuple[int, int, list[str]]:
    """(processors, nodes, notes): header MaxProcs/MaxNodes when they are positive numbers, else the widest job."""
    notes = []
    sizes = {}
    for key, parsed in (("MaxProcs", header.max_procs), ("MaxNodes", header.max_nodes)):
        raw = header.get_raw(key)
        if parsed is not None and parsed > 0:
            sizes[key] = parsed
        elif raw is not None:
            notes.append(f"header `{key}: {raw}` is not a positive number of {key[3:].lower()}: ignored")
    if not sizes:
        inferred = int(procs.max()) if procs.size and procs.max() > 0 else 1
        given = "gives neither MaxProcs nor MaxNodes" if not notes else "gives no usable MaxProcs or MaxNodes"
        notes.append(f"header {given}: machine size inferred as {inferred} processors (widest job)")
        return inferred, inferred, notes
    procs_n = sizes.get("MaxProcs") or sizes["MaxNodes"]
    nodes_n = sizes.get("MaxNodes") or sizes["MaxProcs"]
    return int(procs_n), int(nodes_n), notes


def _extra_names(header: SwfHeader, count: int, names, path) -> tuple[tuple[str, ...], str]:
    """Names of the extra columns and where they came from (reader keyword, header line, or the default)."""
    raw = header.get_raw(EXTRA_COLUMNS_KEY)
    try:
        if names is not None:
            return check_extra_names(names, count, "extra_names"), "extra_names"
        if raw is not None:
            return check_extra_names(split_names(raw), count, f"header `; {EXTRA_COLUMNS_KEY}: {raw}`"), "the header"
    except ValueError as e:
        raise TraceError(path, str(e)) from None
    return default_extra_names(count), "default"


def read_swf(
    path: str | Path,
    rules: CleaningRules | None = CleaningRules(),
    *,
    name: str | None = None,
    use_cache: bool = True,
    extra_names: Sequence[str] | None = None,
) -> Workload:
    """Read an SWF trace into a `Workload`.

    `rules` selects the cleaning (None: no cleaning at all, not even a report); the result's
    `report` says what was dropped or repaired. Parsed content is cached by sha256, so a second
    load of the same file only decompresses, hashes and cleans. Trailing columns after the 18 SWF
    fields become `Workload.extras`, named by `extra_names`, else by the header's
    `; ExtraColumns:` line, else `priority`, `extra_20`, ... (see `schedrl.workload.extras`).
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
    names, named_by = _extra_names(header, values.shape[1] - N_FIELDS, extra_names, path)
    extras = {n: values[:, N_FIELDS + k].copy() for k, n in enumerate(names)}
    notes = []
    if data.startswith(UTF8_BOM):
        notes.append("the file starts with a UTF-8 byte-order mark: skipped")
    if names:
        listed = ", ".join(f"column {N_FIELDS + 1 + k} `{n}`" for k, n in enumerate(names))
        how = {"default": f"default name{'s' if len(names) > 1 else ''}; a `; {EXTRA_COLUMNS_KEY}: NAME ...` header line names them",
               "the header": "named by the header", "extra_names": "named by the reader"}[named_by]
        notes.append(f"{len(names)} extra column{'s' if len(names) > 1 else ''} after the {N_FIELDS} SWF fields, "
                     f"kept as extras: {listed} ({how})")
    return workload_from_columns(columns, header, name or trace_stem(path), str(path), rules, lines, sha,
                                 extras=extras, notes=notes)


def workload_from_columns(columns, header, name, source, rules, lines=None, sha256=None, *, extras=None,
                          notes=()) -> Workload:
    """Clean raw SWF columns (and extra columns) and wrap them in a `Workload` with the machine size from the header."""
    extras = dict(extras or {})
    procs = np.where(columns["procs_req"] > 0, columns["procs_req"], columns["procs_alloc"])
    max_procs, max_nodes, size_notes = _machine_size(header, procs)
    report = None
    if rules is not None:
        cleaned, report = clean_columns({**columns, **extras}, max_procs, rules, source, lines)
        columns = {k: cleaned[k] for k in FIELD_NAMES}
        extras = {k: cleaned[k] for k in extras}
        report = replace(report, notes=report.notes + tuple(notes) + tuple(size_notes))
    return Workload(columns, max_procs, max_nodes, name=name, header=header, report=report, sha256=sha256,
                    extras=extras)


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
    """SWF text of a workload: its header comments (or a minimal header) and one line per job.

    Extra columns follow the 18 fields; a `; ExtraColumns:` line names them unless the default names do."""
    header = workload.header
    if header.comments:
        head = [";" + c for c in header.comments if parse_header([";" + c]).get_raw(EXTRA_COLUMNS_KEY) is None]
    else:
        head = ["; Version: 2.2", f"; MaxJobs: {len(workload)}", f"; MaxRecords: {len(workload)}",
                f"; MaxNodes: {workload.max_nodes}", f"; MaxProcs: {workload.max_procs}"]
    names = tuple(workload.extras)
    if names != default_extra_names(len(names)):
        head.append(f"; {EXTRA_COLUMNS_KEY}: {' '.join(names)}")
    cols = [workload.columns[f.name].tolist() for f in SWF_FIELDS] + [workload.extras[n].tolist() for n in names]
    body = [" ".join(_format_value(v) for v in row) for row in zip(*cols)]
    return "\n".join(head + body) + "\n"


def write_swf(workload: Workload, path: str | Path) -> Path:
    """Write a workload as SWF (gzip-compressed when the name ends in `.gz`)."""
    path = Path(path)
    from schedrl.outputs import atomic_write

    text = format_swf(workload).encode()
    atomic_write(path, gzip.compress(text, mtime=0) if path.name.endswith(".gz") else text)  # never half a trace
    return path
