"""`AuditLog`: every value (site factor or nice) the adapter changes, one JSON line each, appended and flushed as it
happens.

A line: `{"time", "cluster", "partition", "job", "from", "to", "why", "pid", "host", "mode", "result"}` with
`why` one of `rank N`, `guard`, `restore`, `reset`, and `result` `ok` or scontrol's refusal. Dry runs and shadow
mode change nothing and write nothing here.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Iterable

from schedrl.slurm.mechanism import Change


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

    def read(self) -> list[dict]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]
