"""Slurm's backfill parameters, read from what `scontrol show config` prints (its SchedulerParameters).

The simulator's `backfill: slurm` (`SimConfig`) and the Slurm layer's pass model (`schedrl.slurm.passes`) read the
same parameters: `BackfillParams`. The layer's own reader is lenient (a live cluster's config is what it is: an
unreadable value falls back to Slurm's default); `read_config_file`, for a file a user names, is strict and says
which line is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

DEFAULT_INTERVAL_S = 30.0
DEFAULT_RESOLUTION_S = 60.0
DEFAULT_WINDOW_S = 1440 * 60.0
DEFAULT_MAX_JOB_TEST = 500

_NAMES = {"bf_interval": "interval_s", "bf_resolution": "resolution_s", "bf_window": "window_s",
          "bf_max_job_test": "max_job_test"}


@dataclass(frozen=True)
class BackfillParams:
    """The backfill scheduler's parameters (slurm.conf's SchedulerParameters; Slurm's defaults where absent)."""

    interval_s: float = DEFAULT_INTERVAL_S
    """bf_interval: seconds between passes."""
    resolution_s: float = DEFAULT_RESOLUTION_S
    """bf_resolution: the grain of the plan's times (reservations' starts and ends are rounded down to it)."""
    window_s: float = DEFAULT_WINDOW_S
    """bf_window (minutes in slurm.conf): how far ahead jobs are reserved."""
    max_job_test: int = DEFAULT_MAX_JOB_TEST
    """bf_max_job_test: jobs tested per pass."""

    @classmethod
    def from_config(cls, config: Mapping[str, str]) -> "BackfillParams":
        """From `scontrol show config`'s SchedulerParameters (`bf_interval=1,bf_resolution=60,...`); an unreadable
        value is Slurm's default."""
        values = _items(config.get("SchedulerParameters") or "")

        def number(key, default, scale=1.0):
            try:
                return float(values[key]) * scale if values.get(key) else default
            except ValueError:
                return default
        return cls(number("bf_interval", DEFAULT_INTERVAL_S), max(number("bf_resolution", DEFAULT_RESOLUTION_S), 1.0),
                   number("bf_window", DEFAULT_WINDOW_S, 60.0), int(number("bf_max_job_test", DEFAULT_MAX_JOB_TEST)))


def _items(text: str) -> dict[str, str]:
    values = {}
    for item in text.split(","):
        key, _, value = item.strip().partition("=")
        values[key] = value
    return values


def parse_show_config(text: str) -> dict[str, str]:
    """`scontrol show config`'s `Name = value` lines as name -> value (other lines ignored)."""
    out = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep:
            out[name.strip()] = value.strip()
    return out


def read_config_file(path: str | Path) -> BackfillParams:
    """The backfill parameters of a saved `scontrol show config` (or a slurm.conf's SchedulerParameters line).

    Raises ValueError naming the file (and line) where it has no SchedulerParameters or a bf_* value is not a whole
    number >= 1."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        raise ValueError(f"{path}: cannot read it ({e.strerror or e})") from None
    line_no, params = None, None
    for number, line in enumerate(text.splitlines(), 1):
        name, sep, value = line.partition("=")
        if sep and name.strip() == "SchedulerParameters":
            line_no, params = number, value.strip()
    if params is None:
        raise ValueError(f"{path}: no SchedulerParameters line (save `scontrol show config` there, or slurm.conf's "
                         "SchedulerParameters=... line)")
    values = {}
    for key, value in _items(params).items():
        if key not in _NAMES:
            continue
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not (number >= 1 and number == int(number)):
            raise ValueError(f"{path}:{line_no}: {key}={value!r} is not a whole number >= 1")
        values[_NAMES[key]] = number * (60.0 if key == "bf_window" else 1.0)
    if "max_job_test" in values:
        values["max_job_test"] = int(values["max_job_test"])
    return BackfillParams(**values)


__all__ = ["BackfillParams", "DEFAULT_INTERVAL_S", "DEFAULT_MAX_JOB_TEST", "DEFAULT_RESOLUTION_S", "DEFAULT_WINDOW_S",
           "parse_show_config", "read_config_file"]
