"""Durations as people write them on command lines and in sweep files."""

from __future__ import annotations

import re

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*")


def parse_duration(value: str | float | None, what: str = "duration") -> float | None:
    """`90`, `90s`, `20m`, `1.5h` (or a number of seconds) -> seconds; None stays None."""
    if value is None or isinstance(value, (int, float)):
        if value is not None and value <= 0:
            raise ValueError(f"{what} must be > 0; got {value}")
        return None if value is None else float(value)
    m = _DURATION.fullmatch(value)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"{what} must look like 90s, 20m or 1.5h; got {value!r}")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]
