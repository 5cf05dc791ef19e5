"""Reading a file schedrl expects to be of some size, with that size (and a line length) as a stated bound.

`Path.read_bytes()` on `/dev/zero`, a FIFO, or a file given in the wrong place reads until memory runs out. Every
file read whole from a user's argument goes through `read_bounded` instead: at most `limit` bytes (uncompressed, for
gzip data), and, for line-oriented text, no line longer than `line_limit`; past either it stops reading and raises
`TooLarge`, one line naming the file and the bound. The bounds are generous for what each file is (`SMALL`: a JSON or
YAML file schedrl or a person wrote; `TRACE`: an accounting log or an SWF trace), so only what cannot be that file
is refused.
"""

from __future__ import annotations

import gzip
from pathlib import Path

SMALL = 16 << 20
"""A JSON or YAML file (a sweep, a scenario, a tuned rule, a policy.json, a manifest, an id map's 16 MiB would hold
some 400,000 names)."""
TRACE = 16 << 30
"""An SWF trace or a sacct/sinfo log, uncompressed (the largest public SWF traces are a few hundred MiB)."""
LINE = 1 << 20
"""The longest line of a line-oriented log (an SWF line is under 200 bytes, a sacct record a few KiB)."""
CHUNK = 1 << 20


class TooLarge(ValueError):
    """A file past its bound (`read_bounded`): one line naming the file, the bound and what was expected."""

    def __init__(self, path, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


def read_bounded(path: str | Path, what: str, limit: int = SMALL, line_limit: int | None = None,
                 gunzip: bool = False) -> bytes:
    """The bytes of `path` (gzip data decompressed where `gunzip` and it starts with gzip's magic), at most `limit`
    of them and, with `line_limit`, no line longer; `TooLarge` naming `what` the file should be otherwise. OSError
    as `open` raises it; a gzip stream that cannot be read raises `zlib.error`, `EOFError` or `gzip.BadGzipFile`."""
    with open(path, "rb") as raw:
        head = raw.read(2)
        if raw.seekable():
            raw.seek(0)
        if gunzip and head == b"\x1f\x8b":
            if not raw.seekable():
                raw = _Prefixed(head, raw)
            with gzip.GzipFile(fileobj=raw) as fh:
                return _read(fh, path, what, limit, line_limit, b"")
        return _read(raw, path, what, limit, line_limit, b"" if raw.seekable() else head)


class _Prefixed:
    """A non-seekable stream with the bytes already read from it put back in front (for `gzip.GzipFile`)."""

    def __init__(self, head: bytes, stream):
        self.head, self.stream = head, stream

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = self.head[:n] if n >= 0 else self.head, self.head[n:] if n >= 0 else b""
            return out + (self.stream.read(n - len(out)) if n < 0 or len(out) < n else b"")
        return self.stream.read(n)


def _read(fh, path, what: str, limit: int, line_limit: int | None, start: bytes) -> bytes:
    # a line inside one chunk is at most a chunk long: only a line across chunks (the tail of one, whole chunks without
    # a newline, the head of the next) can pass `line_limit`, and find/rfind measure that without scanning every line
    size = min(CHUNK, line_limit) if line_limit else CHUNK
    chunks, total, run = [start] if start else [], len(start), 0
    while True:
        chunk = fh.read(size)
        if not chunk:
            break
        total += len(chunk)
        if total > limit:
            raise TooLarge(path, f"more than {_size(limit)}, more than {what} holds: is it the right file?")
        if line_limit is not None:
            first = chunk.find(b"\n")
            longest = run + (len(chunk) if first < 0 else first)
            run = longest if first < 0 else len(chunk) - chunk.rfind(b"\n") - 1
            if longest > line_limit:
                raise TooLarge(path, f"a line longer than {_size(line_limit)}, longer than any line of {what}: "
                                     "is it the right file?")
        chunks.append(chunk)
    return b"".join(chunks)
