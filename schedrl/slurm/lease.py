"""`Lease`: the state file of a live adapter: the values it set (site factors, or nice values), the jobs' own, and
until when it holds them.

Written before every batch of changes (write-ahead), so whatever happens between the file and scontrol, the file
names every job the adapter may have changed and the value to give back. The lease is renewed every cycle;
once it has expired, nobody maintains the order any more, and `schedrl slurm reset --expired` (from cron or a
systemd timer) gives every job its own value back (`adapter.restore`), unless an adapter started again has
taken the jobs over.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path


MAX_STATE_BYTES = 256 * 1024 * 1024
"""A state file larger than this is refused unread (a few million jobs' values; a real one is kilobytes)."""


class LeaseError(RuntimeError):
    """A state file that cannot be read, or a lease another host holds; the message names the file."""


@dataclass
class Lease:
    """The adapter's state for one cluster."""

    path: Path
    cluster: str
    partition: str = ""
    pid: int = 0
    host: str = ""
    expires: float = 0.0
    """Epoch seconds after which the order is no longer maintained."""
    original: dict[int, int] = field(default_factory=dict)
    """Job -> its own value of the handle's field (before the bonus; adopted anew when someone else changes it)."""
    set: dict[int, int] = field(default_factory=dict)
    """Job -> the value the adapter last set (or is about to set)."""
    handle: str = "nice"
    """The field the values are of: `site-factor` or `nice` (state files written before the site factor: nice)."""

    @classmethod
    def path_for(cls, state_dir: str | Path, cluster: str) -> Path:
        return Path(state_dir) / f"{cluster}.state.json"

    @classmethod
    def load(cls, state_dir: str | Path, cluster: str) -> "Lease":
        """The state file of `cluster` (an empty lease if there is none)."""
        path = cls.path_for(state_dir, cluster)
        if not path.exists():
            return cls(path, cluster)
        try:
            if path.stat().st_size > MAX_STATE_BYTES:
                raise ValueError(f"larger than {MAX_STATE_BYTES:,} bytes")
            data = json.loads(path.read_text())
            lease = cls(path, str(data["cluster"]), str(data.get("partition", "")), int(data.get("pid", 0)),
                        str(data.get("host", "")), float(data.get("expires", 0.0)),
                        {int(k): int(v) for k, v in data.get("original", {}).items()},
                        {int(k): int(v) for k, v in data.get("set", {}).items()}, str(data.get("handle", "nice")))
            if not math.isfinite(lease.expires):
                raise ValueError(f"expires is {lease.expires}")
            return lease
        except (OSError, ValueError, KeyError, TypeError, AttributeError, json.JSONDecodeError) as e:
            raise LeaseError(f"{path}: unreadable state file ({type(e).__name__}: {e}); the audit log next to it has "
                             "every value the adapter changed") from None

    def expired(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) > self.expires

    def dead(self) -> bool:
        """Whether the adapter that wrote the lease is known to be gone: its pid no longer runs on this host (the
        kernel's word, as with flock; on another host only the lease's expiry tells)."""
        if not self.pid or self.host != socket.gethostname():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # another user's live process
            return False
        return False

    def lapsed(self, now: float | None = None) -> bool:
        """Nobody maintains the order any more: the lease expired, or its adapter died on this host."""
        return self.expired(now) or self.dead()

    def holder(self) -> str:
        """The adapter that wrote the lease, for a line: `pid 4242 on ctl1, lease expired` (or `pid 4242 on ctl1,
        not running, lease until ...`)."""
        if not self.pid:
            return "an adapter whose state file names no process"
        state = ("lease expired" if self.expired() else
                 f"no longer running, lease until {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(self.expires))}"
                 if self.dead() else
                 f"lease until {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(self.expires))}")
        return f"pid {self.pid} on {self.host or 'an unknown host'}, {state}"

    def held_elsewhere(self, now: float | None = None) -> bool:
        """A live lease of an adapter on another host (flock does not reach across hosts on every file system)."""
        return bool(self.host) and self.host != socket.gethostname() and not self.expired(now) and bool(self.set)

    def renew(self, partition: str, lease_s: float, now: float | None = None) -> None:
        self.partition, self.pid, self.host = partition, os.getpid(), socket.gethostname()
        self.expires = (time.time() if now is None else now) + lease_s

    def save(self) -> None:
        """Write atomically (a crash leaves the old file or the new one, never half of one)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        data = {"cluster": self.cluster, "partition": self.partition, "pid": self.pid, "host": self.host,
                "expires": self.expires, "original": {str(k): v for k, v in sorted(self.original.items())},
                "set": {str(k): v for k, v in sorted(self.set.items())}, "handle": self.handle}
        with open(tmp, "w") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def forget(self, jobs) -> None:
        for job in jobs:
            self.original.pop(job, None)
            self.set.pop(job, None)
