"""Every duration schedrl reads, in one place: what people write on command lines and in sweep files
(`parse_duration`: `90s`, `20m`, `1.5h`, `2d`, a YAML number of seconds) and what Slurm prints in sacct, sinfo,
squeue and slurm.conf (`parse_slurm_duration`: `MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`, with an
optional `.fraction` of a second). Slurm's words for no limit (`UNLIMITED`, `INFINITE`, `Partition_Limit`, ...)
are not durations: each reader decides what they mean where it meets them (`SLURM_NO_LIMIT`). `format_duration`
writes one for people (a distilled tree's thresholds, the Slurm adapter's explanations)."""

from __future__ import annotations

import re

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*")
# Slurm's grammar: [days-]hours[:minutes[:seconds]] or minutes[:seconds] or hours:minutes:seconds, [.fraction]
_SLURM = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?(?:\.(\d+))?$")

SLURM_NO_LIMIT = ("UNLIMITED", "INFINITE", "NOT_SET", "PARTITION_LIMIT", "N/A")
"""What squeue and scontrol print for a time limit that is none (upper case: compare `text.upper()`)."""


def parse_duration(value: str | float | None, what: str = "duration", *, bare_seconds: bool = False) -> float | None:
    """`90s`, `20m`, `1.5h`, `2d`, or a number (int/float: seconds, as YAML sweep files give it) -> seconds; None stays
    None. (Slurm's own `[D-]HH:MM:SS` is `parse_slurm_duration`'s.)

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


def parse_slurm_duration(text: str) -> float:
    """Seconds of a duration as Slurm prints it: `MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`, with an
    optional `.fraction` of a second after the seconds (TotalCPU prints `MM:SS.mmm`). ValueError ("not a Slurm
    duration: ...") for anything else, `UNLIMITED` and the other words of `SLURM_NO_LIMIT` included."""
    m = _SLURM.match(text.strip())
    if not m:
        raise ValueError(f"not a Slurm duration: {text!r}")
    days, first, second, third, fraction = m.groups()
    parts = [int(p) for p in (first, second, third) if p is not None]
    if days is not None:
        hours, minutes, seconds = (parts + [0, 0])[:3]
    elif len(parts) == 3:
        hours, minutes, seconds = parts
    else:
        hours, minutes, seconds = 0, parts[0], parts[1] if len(parts) == 2 else 0
    if fraction is not None and (len(parts) < 2 or (days is not None and len(parts) < 3)):
        raise ValueError(f"not a Slurm duration: {text!r} (a fraction follows seconds only)")
    frac = float("0." + fraction) if fraction else 0.0
    return ((int(days or 0) * 24 + hours) * 60 + minutes) * 60 + seconds + frac


def format_duration(seconds: float) -> str:
    """Seconds as people read a wait: 45 s, 12 min, 2 h 10 min, 3 d 4 h."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h" + (f" {s % 3600 // 60} min" if s % 3600 // 60 else "")
    return f"{s // 86400} d" + (f" {s % 86400 // 3600} h" if s % 86400 // 3600 else "")
