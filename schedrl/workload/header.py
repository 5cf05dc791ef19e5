"""The comment header of an SWF file, parsed into typed fields.

Real headers are messy (`MaxNodes: 338 (batch partition; 512 total)`, `MaxProcs: 1664 (72, 1368, 224)`,
`Version: SWF v2`, a free first comment line, keys without a space after `;`). Numeric fields take
the leading integer of the value; the raw text of every `Key: value` line is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

_KEY_VALUE = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_]*)\s*:\s?(.*?)\s*$")
_LEADING_INT = re.compile(r"^\s*([-+]?\d+)")

# SWF header keys (swf.html, "header comments") -> attribute of SwfHeader and whether it is an int
_KNOWN_KEYS: dict[str, tuple[str, bool]] = {
    "Version": ("version", False),
    "Computer": ("computer", False),
    "Installation": ("installation", False),
    "Acknowledge": ("acknowledge", False),
    "Information": ("information", False),
    "Conversion": ("conversion", False),
    "MaxJobs": ("max_jobs", True),
    "MaxRecords": ("max_records", True),
    "Preemption": ("preemption", False),
    "UnixStartTime": ("unix_start_time", True),
    "TimeZone": ("time_zone", True),
    "TimeZoneString": ("time_zone_string", False),
    "StartTime": ("start_time", False),
    "EndTime": ("end_time", False),
    "MaxNodes": ("max_nodes", True),
    "MaxProcs": ("max_procs", True),
    "MaxRuntime": ("max_runtime", True),
    "MaxMemory": ("max_memory", True),
    "AllowOveruse": ("allow_overuse", False),
    "MaxQueues": ("max_queues", True),
    "MaxPartitions": ("max_partitions", True),
}


def leading_int(text: str) -> int | None:
    """The integer a header value starts with (`"338 (batch partition)"` -> 338), or None."""
    m = _LEADING_INT.match(text)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class SwfHeader:
    """Typed view of an SWF header; a field is None when the header does not give it."""

    version: str | None = None
    """`Version:` as written (`2.2`, `SWF v2`)."""
    computer: str | None = None
    """`Computer:` machine description."""
    installation: str | None = None
    """`Installation:` site."""
    acknowledge: str | None = None
    """`Acknowledge:` who donated the log (cite them)."""
    information: str | None = None
    """`Information:` URL of further details."""
    conversion: str | None = None
    """`Conversion:` who converted the log to SWF."""
    max_jobs: int | None = None
    """`MaxJobs:` jobs in the original log."""
    max_records: int | None = None
    """`MaxRecords:` records in the original log."""
    preemption: str | None = None
    """`Preemption:` whether jobs could be preempted."""
    unix_start_time: int | None = None
    """`UnixStartTime:` epoch seconds of time 0."""
    time_zone: int | None = None
    """`TimeZone:` offset in seconds (obsolete in SWF 2.2)."""
    time_zone_string: str | None = None
    """`TimeZoneString:` e.g. `US/Pacific`."""
    start_time: str | None = None
    """`StartTime:` human-readable start."""
    end_time: str | None = None
    """`EndTime:` human-readable end."""
    max_nodes: int | None = None
    """`MaxNodes:` leading integer (raw text in `raw`)."""
    max_procs: int | None = None
    """`MaxProcs:` leading integer (raw text in `raw`)."""
    max_runtime: int | None = None
    """`MaxRuntime:` longest allowed run time, seconds."""
    max_memory: int | None = None
    """`MaxMemory:` largest allowed memory."""
    allow_overuse: str | None = None
    """`AllowOveruse:` whether jobs may exceed their requests."""
    max_queues: int | None = None
    """`MaxQueues:` number of queues."""
    max_partitions: int | None = None
    """`MaxPartitions:` number of partitions."""
    raw: tuple[tuple[str, str], ...] = ()
    """Every `Key: value` line as written, in file order (repeated keys such as `Note` kept)."""
    comments: tuple[str, ...] = field(default=(), repr=False)
    """Every header comment line verbatim, without the leading `;` (for writing back)."""

    def get_raw(self, key: str) -> str | None:
        """The raw text of the first `key:` line, or None."""
        for k, v in self.raw:
            if k == key:
                return v
        return None

    def to_dict(self) -> dict:
        """Typed fields as a plain dict (JSON-friendly), without the verbatim comments."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("raw", "comments")}
        out["raw"] = [list(kv) for kv in self.raw]
        return out


def parse_header(comment_lines: list[str]) -> SwfHeader:
    """Parse header comment lines (each starting with `;`) into an SwfHeader.

    Lines that are not `Key: value` (free comments, continuation lines) are kept in `comments`
    only. The first occurrence of a known key wins; numeric values take the leading integer.
    """
    values: dict[str, object] = {}
    raw: list[tuple[str, str]] = []
    for line in comment_lines:
        m = _KEY_VALUE.match(line)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        raw.append((key, value))
        known = _KNOWN_KEYS.get(key)
        if known is None or known[0] in values:
            continue
        attr, is_int = known
        if is_int:
            parsed = leading_int(value)
            if parsed is not None:
                values[attr] = parsed
        elif value:
            values[attr] = value
    comments = tuple(line[1:] if line.startswith(";") else line for line in comment_lines)
    return SwfHeader(raw=tuple(raw), comments=comments, **values)
