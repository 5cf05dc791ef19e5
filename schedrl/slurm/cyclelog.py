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
from pathlib import Path
from typing import IO, Iterator

from schedrl.slurm.snapshot import FINISHED_STATES, Snapshot


def _open(path: Path, mode: str) -> IO[str]:
    return gzip.open(path, mode + "t") if path.suffix == ".gz" else open(path, mode)


def read(path: str | Path) -> Iterator[dict]:
    """The log's records, in order (a torn last line, from a killed adapter, is skipped)."""
    with _open(Path(path), "r") as f:
        for line in f:
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


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
            if job.job_id not in self.seen and job.state in FINISHED_STATES and (job.end or now) < self.since:
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
            first = json.loads(f.readline())
    except (OSError, ValueError, EOFError, UnicodeDecodeError):
        return False
    return isinstance(first, dict) and first.get("kind") == "header" and "cluster" in first and "policy" in first
