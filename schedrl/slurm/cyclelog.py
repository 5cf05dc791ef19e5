"""`CycleLog`: what the adapter saw and decided, one JSON line per event, for `schedrl slurm report`.

Kinds of line:

- `header`: cluster, partition, policy, top K, mode, the partition's usable CPUs;
- `job`: a job of the partition at first sight (jobs that had ended before the log began are history, left out):
  submit, CPUs, time limit (s), base priority (Slurm's priority plus the nice value: its priority without any nice),
  and where sprio answered, `static`: its priority less the weighted age factor and less any bonus of the adapter
  (the part of its priority that stays while it waits, for `model.priorities`);
- `started`, `ended`: when a job started, when it ended (`exact` false: it vanished from squeue between cycles,
  and the cycle's time stands in for its end);
- `alone`: a pending job left alone and why (once per job and reason);
- `cycle`: time, free and usable CPUs, CPUs held by other partitions, pending count, the order (job ids, guard
  first), Slurm's present order of its first K pending jobs, the guard's jobs, changes applied and refused,
  the policy's seconds, and the problem that kept the order as it was, if any.

The log is a snapshot per cycle in delta form: the jobs pending or running at any cycle follow from the `job`,
`started` and `ended` lines before it. `.gz` paths are read and written compressed.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path
from typing import IO, Iterator

from schedrl.slurm.snapshot import FINISHED_STATES, Snapshot


MAX_LINE = 16 << 20
"""The longest line read (16 MiB: a cycle line with its order and Slurm's is kilobytes)."""
MAX_LOG_BYTES = 64 << 30
"""The most text read from one log (64 GiB, decompressed: years of cycles)."""


TORN = re.compile(rb'\{"kind":\s*"')
"""How every record the adapter writes begins: a line that does and does not parse is one torn by a kill."""


class CycleLogError(ValueError):
    """A file that cannot be read as a cycle log; the message names it (and the line) and says why."""


def _open(path: Path, mode: str) -> IO[str]:
    return gzip.open(path, mode + "t") if path.suffix == ".gz" else open(path, mode)


def regular_file(path: Path, what: str, limit: int) -> None:
    """CycleLogError unless `path` is a regular file of at most `limit` bytes (a device, a pipe or a directory is
    never read: /dev/zero would be read for ever)."""
    try:
        info = path.stat()
    except OSError as e:
        raise CycleLogError(f"cannot read {what} {path}: {e.strerror}") from None
    import stat

    if not stat.S_ISREG(info.st_mode):
        raise CycleLogError(f"{what} {path} is not a regular file (a device, a pipe or a directory): give a log file")
    if info.st_size > limit:
        raise CycleLogError(f"{what} {path} has {info.st_size:,} bytes, more than the {limit:,} read at most")


def lines(path: Path, what: str, limit: int = MAX_LOG_BYTES, line_limit: int = MAX_LINE) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of each line of a regular file (gzip-compressed where it ends in `.gz`), bounded: a line
    longer than `line_limit`, more than `limit` bytes in all, or a file that is not what its name says is a
    CycleLogError naming it."""
    path = Path(path)
    regular_file(path, what, limit)
    import zlib

    total = number = 0
    try:
        with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as f:
            while line := f.readline(line_limit + 1):
                number += 1
                total += len(line)
                if len(line) > line_limit:
                    raise CycleLogError(f"{what} {path}:{number}: a line longer than {line_limit:,} bytes: not a "
                                        "log of this kind")
                if total > limit:
                    raise CycleLogError(f"{what} {path}: more than {limit:,} bytes (decompressed) read at most")
                yield number, line
    except (OSError, EOFError, zlib.error) as e:
        why = "not gzip-compressed, or cut short" if path.suffix == ".gz" else (e.strerror or str(e))
        raise CycleLogError(f"cannot read {what} {path}: {why} ({type(e).__name__})") from None


def read(path: str | Path) -> Iterator[dict]:
    """The log's records (`numbered`, without the line numbers)."""
    for _, rec in numbered(path):
        yield rec


def numbered(path: str | Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) of the log's records, in order. A torn line (the start of one of its own records, cut by
    a kill) is skipped where it is the last line or the next record is a header (an adapter continuing the log);
    CycleLogError naming the line for a file that is not text, any other line that is not a JSON object, and reads
    past the bounds."""
    torn: int | None = None

    def bad(number: int) -> CycleLogError:
        return CycleLogError(f"cycle log {path}:{number}: not a JSON record: not a cycle log of `schedrl slurm run "
                             "--log`")

    for number, line in lines(Path(path), "cycle log"):
        try:
            rec = json.loads(line.decode())
        except UnicodeDecodeError:
            raise CycleLogError(f"cycle log {path}:{number}: not text (UTF-8): not a cycle log of `schedrl slurm "
                                "run --log`") from None
        except ValueError:
            if not line.strip():
                continue
            if torn is not None or not TORN.match(line):
                raise bad(torn if torn is not None else number) from None
            torn = number
            continue
        if not isinstance(rec, dict):
            raise CycleLogError(f"cycle log {path}:{number}: a JSON {type(rec).__name__}, not a record: not a cycle "
                                "log of `schedrl slurm run --log`")
        if torn is not None and rec.get("kind") != "header":
            raise bad(torn)
        torn = None
        yield number, rec


class CycleLog:
    """Appends to a cycle log; on a log that exists, continues it (the jobs it already has are not repeated)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.seen: set[int] = set()
        self.started: set[int] = set()
        self.ended: set[int] = set()
        self.alone: set[tuple[int, str]] = set()
        self.since: float | None = None
        """Jobs that ended before this (the log's first snapshot) are history, not logged."""
        if self.path.exists():
            for rec in read(self.path):
                kind = rec.get("kind")
                if kind == "job":
                    self.seen.add(rec["job"])
                elif kind == "started":
                    self.started.add(rec["job"])
                elif kind == "ended":
                    self.ended.add(rec["job"])
                elif kind == "alone":
                    self.alone.add((rec["job"], rec["why"]))
                elif kind == "header" and self.since is None:
                    self.since = rec["time"]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        torn = False
        if self.path.exists() and self.path.suffix != ".gz" and self.path.stat().st_size:
            with open(self.path, "rb") as f:  # a killed adapter's torn last line: end it, so the next record stands
                f.seek(-1, 2)
                torn = f.read(1) != b"\n"
        self._file = _open(self.path, "a")
        if torn:
            self._file.write("\n")

    def write(self, record: dict) -> None:
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def jobs(self, snapshot: Snapshot, static: dict[int, float] | None = None) -> list[tuple[int, str]]:
        """Log the partition's new jobs, starts, ends and newly left-alone jobs (`static`: job -> the fixed part of
        its priority, from sprio); returns the (job, why) pairs left alone that were not logged before."""
        now = snapshot.time
        if self.since is None:
            self.since = now
        for job in (*snapshot.pending, *snapshot.running, *snapshot.finished):
            # squeue's times are whole seconds (truncated): a job that ended in the second the log began is the log's
            if job.job_id not in self.seen and job.state in FINISHED_STATES and (job.end or now) < math.floor(self.since):
                continue
            if job.job_id not in self.seen:
                self.seen.add(job.job_id)
                rec = {"kind": "job", "job": job.job_id, "submit": job.submit, "cpus": job.cpus,
                       "limit": snapshot.limit_of(job), "priority": job.priority + job.nice, "seen": now}
                if static is not None and job.job_id in static:
                    rec["static"] = static[job.job_id]
                self.write(rec)
        for job in (*snapshot.running, *snapshot.finished):
            if job.job_id in self.seen and job.job_id not in self.started and job.start is not None:
                self.started.add(job.job_id)
                self.write({"kind": "started", "job": job.job_id, "start": job.start})
        for job in snapshot.finished:
            if job.job_id in self.seen and job.job_id not in self.ended:
                self.ended.add(job.job_id)
                self.write({"kind": "ended", "job": job.job_id, "end": job.end or now, "state": job.state,
                            "exact": job.end is not None})
        present = {j.job_id for j in (*snapshot.pending, *snapshot.running, *snapshot.finished)}
        present.update(j.job_id for j, _ in snapshot.left_alone)
        for job in sorted(self.seen - self.ended - present):  # gone from squeue between two cycles
            self.ended.add(job)
            self.write({"kind": "ended", "job": job, "end": now, "state": "GONE", "exact": False})
        new = []
        for job, why in snapshot.left_alone:
            if (job.job_id, why) not in self.alone:
                self.alone.add((job.job_id, why))
                self.write({"kind": "alone", "job": job.job_id, "why": why, "time": now})
                new.append((job.job_id, why))
        return new


def is_cycle_log(path: str | Path) -> bool:
    """Whether `path` is a cycle log `slurm run --log` may continue: empty, or its first line a header record."""
    path = Path(path)
    try:
        if not path.is_file():
            return False
        if path.stat().st_size == 0:
            return True
        with _open(path, "r") as f:
            first = json.loads(f.readline(MAX_LINE))
    except (OSError, ValueError, EOFError, UnicodeDecodeError):
        return False
    return isinstance(first, dict) and first.get("kind") == "header" and "cluster" in first and "policy" in first
