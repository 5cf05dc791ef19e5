"""The safety guard: a job that has waited past a limit goes first, whatever the policy says.

Always on in live mode. The starving jobs lead the order, oldest first, and the policy orders the rest, so a
policy that never picks a job cannot keep it waiting more than the limit plus the time the jobs ahead of it take.
"""

from __future__ import annotations

from schedrl.slurm.snapshot import Snapshot

DEFAULT_LIMIT_S = 2 * 86400.0
"""Default starvation limit: two days of waiting."""


def starving(snapshot: Snapshot, limit_s: float) -> list[int]:
    """Ids of the pending jobs that have waited longer than `limit_s`, oldest first."""
    old = [j for j in snapshot.pending if snapshot.time - j.submit > limit_s]
    return [j.job_id for j in sorted(old, key=lambda j: (j.submit, j.job_id))]
