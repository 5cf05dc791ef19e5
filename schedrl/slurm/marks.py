"""The adapter's mark on a job it changed: appended to the job's AdminComment, on Slurm's side, for every adapter.

A mark says which adapter holds the job changed and what to give back: `schedrl:lock=<lock job id>:<field>=<own
value>`, e.g. `schedrl:lock=812:SiteFactor=0`. It is appended to whatever the site keeps in AdminComment
(separated by `;`, never replacing it) in the same `scontrol update` line that sets the job's bonus, and taken off
again, the site's text left as it was, when the job gets its own value back. slurmdbd stores AdminComment with the
job (`sacct --format=AdminComment`), so accounting shows which jobs started with a bonus and under which adapter.

What it is for: a second adapter, whatever its state directory or host, sees a live foreign mark and refuses
(`lock.SlurmLock`); `schedrl slurm reset` finds every job any adapter still holds changed from the marks alone, and
gives each its own value back, without the state file that made the change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "schedrl:"
_MARK = re.compile(r"(?:^|;)schedrl:lock=(\d+):(SiteFactor|Nice)=(-?\d+)$")


@dataclass(frozen=True)
class Mark:
    lock: int
    """The lock job of the adapter that set the job's bonus."""
    field: str
    """`SiteFactor` or `Nice`."""
    own: int
    """The job's own value of that field, before the bonus."""

    def text(self) -> str:
        return f"{PREFIX}lock={self.lock}:{self.field}={self.own}"


def parse(comment: str) -> tuple[str, Mark | None]:
    """(the site's own AdminComment, the mark at its end or None)."""
    found = _MARK.search(comment or "")
    if found is None:
        return comment or "", None
    return comment[:found.start()], Mark(int(found.group(1)), found.group(2), int(found.group(3)))


def with_mark(comment: str, mark: Mark | None) -> str:
    """`comment` with its mark replaced by `mark` (None: taken off), the site's text kept as it was."""
    base, _ = parse(comment)
    if mark is None:
        return base
    return f"{base};{mark.text()}" if base else mark.text()


def writable(comment: str) -> bool:
    """Whether a comment can be written back whole by scontrol (no line break)."""
    return "\n" not in comment and "\r" not in comment


__all__ = ["Mark", "PREFIX", "parse", "with_mark", "writable"]
