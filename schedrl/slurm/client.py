"""`SlurmClient`: the Slurm commands the adapter runs (squeue, sinfo, sprio, scontrol, sbatch, scancel), each
failure as one line.

Times are asked for as epoch seconds (`SLURM_TIME_FORMAT=%s`), so nothing depends on the site's time zone or
time format. Changes (site factor or nice, with the job's mark in AdminComment) go to one `scontrol` process as a
batch of `update` lines on its standard input: one process and one RPC per changed job, however many jobs change.
A failed command is not retried: the cycle that needed it reports it and the next cycle tries again
(`retries` = 0 for squeue, sinfo and sprio: Slurm's own client otherwise retries a controller that does not answer
for about 10 s, `MessageTimeout`).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Mapping, NamedTuple, Sequence

SQUEUE_FORMAT = "%A|%i|%P|%T|%C|%D|%l|%V|%S|%e|%Q|%y|%r|%E|%v|%j"
"""squeue's fields, in `snapshot.FIELDS` order: job id, job id as printed (array records), partition, state, CPUs,
nodes, time limit, submit, start, end, priority, nice, reason, dependency, reservation, name (last: it may hold a
`|`; the adapters' lock jobs are told by it)."""
SPRIO_FORMAT = "%i|%Y|%A|%S|%Q|%F"
"""sprio's fields: job id, priority, weighted age factor, site factor (the SITE column), weighted QOS factor,
weighted fair-share factor."""
MARKS_FORMAT = "JobID:0|,admin_comment:0"
"""squeue --Format of the pending jobs' AdminComment (where the adapter's marks are), the comment last."""
LOCK_FORMAT = "JobID:0|,UserName:0|,Comment:0"
"""squeue --Format of the lock jobs (`lock.SlurmLock`): id, owner, the lease in the comment (last)."""
SINFO_FORMAT = "%C|%D|%l"
"""sinfo's fields for one partition: CPUs allocated/idle/other/total, nodes, the partition's time limit."""
# scontrol names the job at the end of a failed update: "... for job 12"
_FAILED_JOB = re.compile(r"for job (\d+)\s*$")


class Factors(NamedTuple):
    """A pending job's priority as sprio shows it."""

    priority: int
    age: float
    """The weighted age factor."""
    site: int
    """The site factor (SITE): the adapter's handle."""
    qos: float = 0.0
    """The weighted QOS factor: the job's QOS tier."""
    fairshare: float = 0.0
    """The weighted fair-share factor."""


class SlurmError(RuntimeError):
    """A Slurm command that failed or could not run; the message is one line naming the command."""


@dataclass
class SlurmClient:
    """Runs Slurm's client commands against one cluster."""

    env: Mapping[str, str] | None = None
    """Environment of the commands (`SLURM_CONF` names the cluster); None: this process's environment."""
    timeout_s: float = 30.0
    """How long one command may take before the cycle gives up on it."""
    calls: list[str] = field(default_factory=list)
    """The commands run so far (for tests and the audit)."""
    marks_refused: int = 0
    """Updates whose AdminComment (the adapter's mark) slurmctld refused and that went again without it: an account
    that may set site factors (AdminLevel=Operator) but not AdminComment (Administrator, root or SlurmUser)."""

    def run(self, argv: Sequence[str], stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        """Run one command; SlurmError with its first line of stderr when it fails (`check`) or cannot run."""
        env = {**(os.environ if self.env is None else self.env), "SLURM_TIME_FORMAT": "%s"}
        name = " ".join(argv[:2]) if argv[0] == "scontrol" else argv[0]
        self.calls.append(name)
        try:
            done = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, timeout=self.timeout_s,
                                  env=env)
        except FileNotFoundError:
            raise SlurmError(f"{argv[0]} not found on PATH: is Slurm's client installed here?") from None
        except subprocess.TimeoutExpired:
            raise SlurmError(f"{name}: no answer within {self.timeout_s:g} s (is slurmctld up?)") from None
        if check and done.returncode != 0:
            why = next((line.strip() for line in done.stderr.splitlines() if line.strip()), "no message")
            raise SlurmError(f"{name} failed (exit {done.returncode}): {why}")
        return done

    def squeue(self) -> str:
        """Every job slurmctld holds (finished ones too, for MinJobAge), one `SQUEUE_FORMAT` line each."""
        return self.run(["squeue", "--noheader", "--all", "--states=all", f"--format={SQUEUE_FORMAT}"]).stdout

    def sinfo(self, partition: str) -> str:
        """The partition's CPUs and nodes, one `SINFO_FORMAT` line per group of like nodes."""
        return self.run(["sinfo", "--noheader", f"--partition={partition}", f"--format={SINFO_FORMAT}"]).stdout

    def config(self) -> dict[str, str]:
        """`scontrol show config` as name -> value."""
        from schedrl.sim.slurmconf import parse_show_config

        return parse_show_config(self.run(["scontrol", "show", "config"]).stdout)

    def set_nice(self, changes: Sequence[tuple[int, int]]) -> dict[int, str]:
        """Set each job's nice value (`(job, nice)` pairs) in one scontrol process (`update`)."""
        return self.update("Nice", [(job, nice, None) for job, nice in changes])

    def sprio(self) -> dict[int, Factors]:
        """Every pending job's factors from sprio; {} on an empty queue."""
        done = self.run(["sprio", "--noheader", f"--format={SPRIO_FORMAT}"], check=False)
        if done.returncode != 0:
            if "Unable to find jobs" in done.stderr or "No jobs" in done.stderr:
                return {}
            why = next((line.strip() for line in done.stderr.splitlines() if line.strip()), "no message")
            raise SlurmError(f"sprio failed (exit {done.returncode}): {why}")
        out = {}
        for line in done.stdout.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 6 and parts[0].isdigit() and len(parts[0]) <= 10:
                try:
                    values = [float(x) for x in parts[1:]]
                    if not all(math.isfinite(v) for v in values):
                        raise ValueError
                    out[int(parts[0])] = Factors(int(values[0]), values[1], int(values[2]), values[3], values[4])
                except ValueError:
                    raise SlurmError(f"sprio: cannot read {line.strip()[:200]!r} (expected "
                                     "id|priority|age|site|qos|fairshare)") from None
        return out

    def site_factors(self) -> dict[int, int]:
        """Every pending job's site factor (sprio's SITE column); {} on an empty queue."""
        return {job: f.site for job, f in self.sprio().items()}

    def admin_comments(self) -> dict[int, str]:
        """Every pending job's AdminComment ('' for none)."""
        out = {}
        text = self.run(["squeue", "--noheader", "--all", "--states=PENDING", f"--Format={MARKS_FORMAT}"]).stdout
        for line in text.splitlines():
            job, sep, comment = line.partition("|")
            if sep and job.strip().isdigit():
                out[int(job)] = "" if comment.strip() == "(null)" else comment.rstrip("\n")
        return out

    def lock_jobs(self, name: str) -> list[tuple[int, str, str]]:
        """The pending jobs called `name` (the cluster's lock jobs), lowest id first: (id, user, comment)."""
        text = self.run(["squeue", "--noheader", "--all", "--states=PENDING", f"--name={name}",
                         f"--Format={LOCK_FORMAT}"]).stdout
        out = []
        for line in text.splitlines():
            parts = line.split("|", 2)
            if len(parts) == 3 and parts[0].strip().isdigit():
                out.append((int(parts[0]), parts[1].strip(), "" if parts[2] == "(null)" else parts[2]))
        return sorted(out)

    def submit_held(self, name: str, partition: str, comment: str) -> int:
        """Submit a held one-CPU job `name` with `comment` (a lock job: held, it never runs); returns its id."""
        where = [f"--partition={partition}"] if partition else []
        done = self.run(["sbatch", "--parsable", "--hold", f"--job-name={name}", *where, "--ntasks=1", "--time=1",
                         f"--comment={comment}", "--output=/dev/null", "--wrap", "true"])
        return int(done.stdout.strip().split(";")[0])

    def set_comment(self, job: int, comment: str) -> None:
        """Set a job's Comment (the lock job's lease); SlurmError if it is gone."""
        self.run(["scontrol", "update", f"JobId={job}", f"Comment={comment}"])

    def cancel(self, job: int) -> None:
        self.run(["scancel", str(job)], check=False)

    def update(self, field: str, changes: Sequence[tuple[int, int, str | None]]) -> dict[int, str]:
        """Set `field` (SiteFactor or Nice) of each job, and its AdminComment where given (`(job, value, comment)`),
        in one scontrol process; returns job -> why, for those scontrol refused (a job that started or ended meanwhile
        is refused too)."""
        if not changes:
            return {}
        # scontrol keeps double quotes read from its standard input in the value: a comment with blanks goes as
        # arguments of a process of its own (rare: the site's own AdminComment text with blanks), the rest batched
        alone = [c for c in changes if c[2] and (c[2].split() != [c[2]] or '"' in c[2])]
        batch = [c for c in changes if c not in alone]
        refused: dict[int, str] = {}
        if batch:
            lines = "".join(f"update JobId={job} {field}={value}"
                            + ("" if comment is None else f" AdminComment={comment}") + "\n"
                            for job, value, comment in batch)
            refused.update(self._refusals(self.run(["scontrol"], stdin=lines, check=False)))
        for job, value, comment in alone:
            done = self.run(["scontrol", "update", f"JobId={job}", f"{field}={value}", f"AdminComment={comment}"],
                            check=False)
            refused.update(self._refusals(done, job))
        marked = {job for job, _, comment in changes if comment is not None}
        again = [(job, value, None) for job, value, _ in changes
                 if job in marked and "permission denied" in refused.get(job, "").lower()]
        if again:  # AdminComment needs more privilege than SiteFactor: the values without the marks
            self.marks_refused += len(again)
            for job, _, _ in again:
                refused.pop(job)
            refused.update(self.update(field, again))
        return refused

    @staticmethod
    def _refusals(done: subprocess.CompletedProcess, job: int | None = None) -> dict[int, str]:
        refused = {}
        for line in done.stderr.splitlines():
            found = _FAILED_JOB.search(line)
            if found:
                refused[int(found.group(1))] = line[:found.start()].strip().rstrip(":") or "refused"
            elif job is not None and line.strip() and done.returncode != 0:
                refused[job] = line.strip().removeprefix("scontrol: error: ")
        if done.returncode != 0 and not refused:
            why = next((line.strip() for line in done.stderr.splitlines() if line.strip()), "no message")
            raise SlurmError(f"scontrol update failed (exit {done.returncode}): {why}")
        return refused
