"""Durations as people write them on command lines and in sweep files."""

from __future__ import annotations

import re

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*")


def parse_duration(value: str | float | None, what: str = "duration", *, bare_seconds: bool = False) -> float | None:
    """`90s`, `20m`, `1.5h`, `2d`, or a number (int/float: seconds, as YAML sweep files give it) -> seconds; None stays
    None. (Slurm's own `[D-]HH:MM:SS` is `schedrl.workload.slurm.parse_duration`'s.)

    A string without a unit (`"5"`, as `--time-budget 5` gives it) is refused with a hint, since
    seconds, minutes and hours are all plausible; `bare_seconds=True` reads it as seconds.
    """
    if value is None or isinstance(value, (int, float)):
        if isinstance(value, bool):
            raise ValueError(f"{what} must be a duration such as 90s, 20m or 1.5h; got {value!r}")
        if value is not None and not value > 0:
            raise ValueError(f"{what} must be > 0; got {value}")
        return None if value is None else float(value)
    m = _DURATION.fullmatch(value)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"{what} must look like 90s, 20m or 1.5h; got {value!r}")
    if not m.group(2) and not bare_seconds:
        number = m.group(1)
        raise ValueError(f"{what} {value.strip()} has no unit: write {number}s, {number}m or {number}h "
                         f"(seconds, minutes, hours)")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def parse_duration_or_off(value: str | float, what: str = "duration") -> float:
    """`parse_duration`, where `0` (with or without a unit) or `off` means none: 0.0 (an option whose default is on,
    such as the inspector's `--starvation-wait 24h`)."""
    if isinstance(value, bool):
        return parse_duration(value, what)  # refused with the usual message
    if isinstance(value, str):
        m = _DURATION.fullmatch(value)
        if value.strip().lower() in ("off", "none") or (m and float(m.group(1)) == 0):
            return 0.0
    elif value == 0:
        return 0.0
    return parse_duration(value, what)
