"""`schedrl slurm reset`: every pending job any adapter changed back to its own site factor (or nice value), so
Slurm's own order applies again; refused while an adapter holds the cluster's lock (`--expired`: then, or while the
lease runs, nothing to do)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from schedrl.slurm import marks
from schedrl.slurm.adapter import restore
from schedrl.slurm.audit import AuditError, AuditLog
from schedrl.slurm.client import SlurmClient, SlurmError
from schedrl.slurm.lease import Lease, LeaseError
from schedrl.slurm.lock import ClusterLock, LockError, SlurmLock
from schedrl.slurm.mechanism import FIELD


class ResetError(ValueError):
    """What refuses a reset (Slurm's answer, the lock an adapter holds, a lease that cannot be read): one line."""


def reset(state_dir: Path, cluster: str | None, expired: bool, say: Callable[[str], None],
          client: SlurmClient | None = None) -> None:
    """Give every pending job the adapter changed its own value back, from the marks in the jobs' AdminComment
    (whatever the state directory), the state file and the audit log of `state_dir`; `cluster` None: slurm.conf's
    ClusterName. `expired`: only where the adapter's lease has expired and no adapter runs (else `say` that there is
    nothing to do). Every line goes to `say`; ResetError where Slurm, the lock or the lease refuses."""
    client = client or SlurmClient()
    try:
        cluster = cluster or client.config().get("ClusterName", "cluster")
        lock = ClusterLock(state_dir, cluster).acquire("schedrl slurm reset")
    except LockError as e:
        if expired:
            say(f"reset --expired: an adapter is running ({e}); nothing to do")
            return
        raise ResetError(str(e)) from None
    except SlurmError as e:
        raise ResetError(str(e)) from None
    slurm_lock = None
    try:
        lease = Lease.load(state_dir, cluster)
        if expired and not lease.lapsed():
            say(f"reset --expired: the lease of {lease.holder()} runs until {time.ctime(lease.expires)}; nothing to do")
            return
        if expired and lease.dead() and not lease.expired():
            say(f"reset --expired: the adapter of the lease ({lease.holder()}) is gone: its jobs go back now")
        try:  # the cluster's lock on Slurm's side: no adapter anywhere may run while reset restores
            slurm_lock = SlurmLock(client, cluster, lease.partition or default_partition(client), 60.0,
                                   state_dir).acquire()
        except LockError as e:
            slurm_lock = None
            if expired:
                say(f"reset --expired: an adapter is running ({e}); nothing to do")
                return
            raise ResetError(str(e)) from None
        say(f"reset: {_restore_all(client, cluster, lease, slurm_lock, state_dir, say)} pending job(s) back to their "
            "own values; Slurm's own order applies")
    except (SlurmError, LeaseError, AuditError) as e:
        raise ResetError(str(e)) from None
    finally:
        if slurm_lock is not None:
            slurm_lock.release()
        lock.release()


def _restore_all(client: SlurmClient, cluster: str, lease: Lease, slurm_lock: SlurmLock, state_dir: Path,
                 say: Callable[[str], None]) -> int:
    """Restore the jobs of the lease, the audit log and every other adapter's marks; the number restored."""
    audit = AuditLog(state_dir / f"{cluster}.audit.jsonl", cluster, lease.partition)
    for rec in audit.read():  # jobs the state file may have lost: their first audited value is their own
        if rec.get("result") == "ok" and rec.get("why") not in (None, "reset", "restore"):
            try:
                lease.original.setdefault(int(rec["job"]), int(rec["from"]))
            except (KeyError, TypeError, ValueError):
                raise AuditError(f"{audit.path}: a change record without a job and its value: {str(rec)[:120]}")\
                    from None
    # every job any adapter holds changed, whatever its state directory: the marks in AdminComment
    by_field: dict[str, dict[int, int]] = {}
    for job, comment in client.admin_comments().items():
        mark = marks.parse(comment)[1]
        if mark is not None and mark.lock != slurm_lock.job:
            by_field.setdefault(mark.field, {})[job] = mark.own
    field = FIELD[lease.handle]
    for job, own in by_field.pop(field, {}).items():
        lease.original.setdefault(job, own)
    restored = restore(client, lease, audit, say)
    for other, own in by_field.items():  # marks of the other handle
        handle = next(h for h, f in FIELD.items() if f == other)
        extra = Lease(lease.path.with_name(f"{cluster}.{handle}.reset.json"), cluster, lease.partition,
                      original=dict(own), handle=handle)
        restored += restore(client, extra, audit, say)
        extra.path.unlink(missing_ok=True)
    return restored


def default_partition(client: SlurmClient) -> str:
    """The cluster's default partition (where reset's lock job waits), from sinfo's `*`."""
    for line in client.run(["sinfo", "--noheader", "--format=%P"]).stdout.split():
        if line.endswith("*"):
            return line[:-1]
    return ""


__all__ = ["ResetError", "default_partition", "reset"]
