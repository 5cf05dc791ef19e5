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


LOCK_NAME = "schedrl-lock"
"""The job name of the lock jobs (`SlurmLock`); never part of a snapshot."""


class LockLost(RuntimeError):
    """The adapter's lock job is gone or another adapter's took precedence; the message says which."""


def lease_text(expires: float, state_dir: str | Path, partition: str) -> str:
    return (f"expires={int(expires)} host={socket.gethostname()} pid={os.getpid()} partition={partition} "
            f"state={state_dir}")


def lease_fields(comment: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in comment.split() if "=" in part)


def lease_alive(comment: str, now: float) -> bool:
    """A lease not expired, of an adapter not known dead (on this host, a pid that no longer runs is dead: the
    kernel's word, as with flock; on another host only the lease's expiry tells)."""
    f = lease_fields(comment)
    try:
        if float(f.get("expires", "0")) < now:
            return False
    except ValueError:
        return False
    if f.get("host") == socket.gethostname() and f.get("pid", "").isdigit():
        try:
            os.kill(int(f["pid"]), 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's live process
            return True
    return True


def describe(job: int, user: str, comment: str) -> str:
    f = lease_fields(comment)
    until = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(f.get("expires", "0") or 0)))
    return (f"the adapter of lock job {job} (user {user}, pid {f.get('pid', '?')} on {f.get('host', '?')}, "
            f"partition {f.get('partition', '?')}, state directory {f.get('state', '?')}; lease until {until})")


class SlurmLock:
    """One live adapter per cluster, arbitrated by slurmctld: a held job named `schedrl-lock`, its lease in its
    Comment.

    Acquiring: refuse if a lock job with a live lease exists; otherwise submit one's own (held: it never runs),
    list the lock jobs again, and hold the lock only if one's own has the lowest job id among those with a live
    lease. slurmctld hands out job ids in submission order, so of two adapters started at the same moment, the one
    whose job was submitted first sees only its own (or an older, live one) and the other sees both: exactly one
    wins, whatever their hosts and state directories; the loser cancels its job. A lock job whose lease expired
    (its adapter died) counts for nothing and is cancelled by the winner. Renewed every cycle (`check`): the
    adapter's job must still be pending and the first live one, or it has lost the lock (`LockLost`) and stops.
    """

    def __init__(self, client, cluster: str, partition: str, lease_s: float, state_dir: str | Path):
        self.client, self.cluster, self.partition = client, cluster, partition
        self.lease_s, self.state_dir = lease_s, state_dir
        self.job: int | None = None
        self.renewed = 0.0

    def _comment(self, now: float) -> str:
        return lease_text(now + self.lease_s, self.state_dir, self.partition)

    def acquire(self) -> "SlurmLock":
        """`refuse_if_held`, `submit`, `elect`: the lock, or LockError naming the adapter that holds it."""
        self.refuse_if_held()
        self.submit()
        return self.elect()

    def refuse_if_held(self) -> None:
        live = [j for j in self.client.lock_jobs(LOCK_NAME) if lease_alive(j[2], time.time())]
        if live:
            raise LockError(f"cluster {self.cluster}: {describe(*live[0])} holds the cluster's lock: one adapter per "
                            "cluster")

    def submit(self) -> int:
        now = time.time()
        self.job = self.client.submit_held(LOCK_NAME, self.partition, self._comment(now))
        self.renewed = now
        return self.job

    def elect(self) -> "SlurmLock":
        """Hold the lock if this adapter's job is the first live lock job; else cancel it and refuse."""
        jobs = self.client.lock_jobs(LOCK_NAME)
        contenders = [j for j in jobs if j[0] == self.job or lease_alive(j[2], time.time())]
        if not contenders or contenders[0][0] != self.job:
            mine, self.job = self.job, None
            self.client.cancel(mine)
            winner = contenders[0] if contenders else (mine, "?", "")
            raise LockError(f"cluster {self.cluster}: {describe(*winner)} took the cluster's lock first (lock job "
                            f"{mine} cancelled): one adapter per cluster")
        for stale in jobs:
            if stale[0] != self.job and not lease_alive(stale[2], time.time()):
                self.client.cancel(stale[0])
        return self

    def check(self) -> None:
        """Renew the lease (at most every tenth of it) and make sure the lock is still this adapter's."""
        now = time.time()
        jobs = self.client.lock_jobs(LOCK_NAME)
        live = [j for j in jobs if j[0] == self.job or lease_alive(j[2], now)]
        if not any(j[0] == self.job for j in jobs):
            raise LockLost(f"lock job {self.job} is gone (cancelled, released or purged): another adapter may have "
                           "taken over; stopping without touching the order")
        if live[0][0] != self.job:
            raise LockLost(f"{describe(*live[0])} holds the cluster's lock ahead of lock job {self.job}; stopping "
                           "without touching the order")
        if now - self.renewed >= self.lease_s / 10:
            self.client.set_comment(self.job, self._comment(now))
            self.renewed = now

    def release(self) -> None:
        if self.job is not None:
            self.client.cancel(self.job)
            self.job = None
