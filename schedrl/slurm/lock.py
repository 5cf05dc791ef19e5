"""`ClusterLock`: one live adapter per cluster, held with flock(2) on a file in the state directory.

The kernel drops the lock with its holder, so an adapter killed with SIGKILL never leaves a stale lock. The lock
file says who holds it (pid, host, since), for the refusal message. Put the state directory on the controller's
host, or on a file system every adapter host shares, for the lock to cover the whole cluster (`lease.Lease` adds
a check that works across hosts where flock does not).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path


class LockError(RuntimeError):
    """Another adapter holds the cluster's lock; the message names it."""


class ClusterLock:
    """The lock file `<state_dir>/<cluster>.lock`; `acquire` or raise LockError."""

    def __init__(self, state_dir: str | Path, cluster: str):
        self.path = Path(state_dir) / f"{cluster}.lock"
        self.cluster = cluster
        self._fd: int | None = None

    def acquire(self, what: str = "adapter") -> "ClusterLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 4096).decode(errors="replace").strip()
            os.close(fd)
            try:
                who = json.loads(holder)
                named = f"{who.get('what', 'an adapter')} (pid {who.get('pid')} on {who.get('host')} since " \
                        f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(who.get('since', 0)))})"
            except (json.JSONDecodeError, AttributeError):
                named = "another process"
            raise LockError(f"cluster {self.cluster}: {named} holds {self.path}: one adapter per cluster") from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"what": what, "pid": os.getpid(), "host": socket.gethostname(),
                                 "since": time.time()}).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "ClusterLock":
        return self.acquire() if self._fd is None else self

    def __exit__(self, *exc) -> None:
        self.release()
