"""`AuditLog`: every value (site factor or nice) the adapter changes, one JSON line each, appended and flushed as it
happens.

A line: `{"time", "cluster", "partition", "job", "from", "to", "why", "pid", "host", "mode", "result"}` with
`why` one of `rank N`, `guard`, `restore`, `reset`, and `result` `ok` or scontrol's refusal; an event that is not a
change is one line with `kind` and `what` instead of a job: the watchdog's rollback (`watchdog`), and why the cycle
placed the jobs it moved (`explain`: its fields are `explain.py`'s). Dry runs and shadow mode change
nothing and write nothing here.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Iterable

from schedrl.slurm.mechanism import Change


MAX_LINE = 1 << 20
"""The longest audit line read (1 MiB; a real one is a few hundred bytes)."""


class AuditError(ValueError):
    """An audit log that cannot be read; the message names the file and line."""


class AuditLog:
    """Appends to `<state_dir>/<cluster>.audit.jsonl` (or `path`)."""

    def __init__(self, path: str | Path, cluster: str, partition: str):
        self.path = Path(path)
        self.cluster, self.partition = cluster, partition

    def record(self, changes: Iterable[Change], refused: dict[int, str], mode: str = "live") -> None:
        now, pid, host = time.time(), os.getpid(), socket.gethostname()
        lines = [json.dumps({"time": now, "cluster": self.cluster, "partition": self.partition, "job": c.job,
                             "from": c.old, "to": c.new, "why": c.why, "pid": pid, "host": host, "mode": mode,
                             "result": refused.get(c.job, "ok")}) + "\n" for c in changes]
        if not lines:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as f:
            f.writelines(lines)
            f.flush()
            os.fsync(f.fileno())

    def note(self, kind: str, what: str, **fields) -> None:
        """One line for an event that changes no job itself (`kind`: `watchdog`, `explain`), appended and flushed."""
        line = json.dumps({"time": time.time(), "cluster": self.cluster, "partition": self.partition, "kind": kind,
                           "what": what, "pid": os.getpid(), "host": socket.gethostname(), **fields}) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def read(self) -> list[dict]:
        """The records, in order (a torn last line, from a killed adapter, is skipped); AuditError naming the line
        for anything else that is not one of its records."""
        return [rec for _, rec in self.numbered()]

    def numbered(self) -> list[tuple[int, dict]]:
        """`read`'s records, each with its line number."""
        if not self.path.exists():
            return []
        out = []
        with open(self.path, "rb") as f:
            number = 0
            while line := f.readline(MAX_LINE + 1):
                number += 1
                if len(line) > MAX_LINE:
                    raise AuditError(f"{self.path}:{number}: a line longer than {MAX_LINE:,} bytes: not an audit log")
                torn = not line.endswith(b"\n")
                try:
                    rec = json.loads(line.decode())
                except (UnicodeDecodeError, ValueError):
                    if torn:
                        break
                    raise AuditError(f"{self.path}:{number}: not a JSON record: not an audit log of schedrl slurm")\
                        from None
                if not isinstance(rec, dict):
                    raise AuditError(f"{self.path}:{number}: not a JSON object: not an audit log of schedrl slurm")
                out.append((number, rec))
        return out
