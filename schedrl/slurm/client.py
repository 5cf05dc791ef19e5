"""`SlurmClient`: the Slurm commands the adapter runs (squeue, sinfo, scontrol), each failure as one line.

Times are asked for as epoch seconds (`SLURM_TIME_FORMAT=%s`), so nothing depends on the site's time zone or
time format. Nice changes go to one `scontrol` process as a batch of `update` lines on its standard input: one
process and one RPC per changed job, however many jobs change.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Mapping, Sequence

SQUEUE_FORMAT = "%A|%i|%P|%T|%C|%D|%l|%V|%S|%e|%Q|%y|%r|%E|%v"
"""squeue's fields, in `snapshot.FIELDS` order: job id, job id as printed (array records), partition, state, CPUs,
nodes, time limit, submit, start, end, priority, nice, reason, dependency, reservation."""
SINFO_FORMAT = "%C|%D|%l"
"""sinfo's fields for one partition: CPUs allocated/idle/other/total, nodes, the partition's time limit."""
# scontrol names the job at the end of a failed update: "... for job 12"
_FAILED_JOB = re.compile(r"for job (\d+)\s*$")


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
        out = {}
        for line in self.run(["scontrol", "show", "config"]).stdout.splitlines():
            name, sep, value = line.partition("=")
            if sep:
                out[name.strip()] = value.strip()
        return out

    def set_nice(self, changes: Sequence[tuple[int, int]]) -> dict[int, str]:
        """Set each job's nice value (`(job, nice)` pairs) in one scontrol process; returns job -> why, for those
        scontrol refused (a job that started or ended meanwhile is refused too)."""
        if not changes:
            return {}
        lines = "".join(f"update JobId={job} Nice={nice}\n" for job, nice in changes)
        done = self.run(["scontrol"], stdin=lines, check=False)
        refused = {}
        for line in done.stderr.splitlines():
            found = _FAILED_JOB.search(line)
            if found:
                refused[int(found.group(1))] = line[:found.start()].strip().rstrip(":") or "refused"
        if done.returncode != 0 and not refused:
            why = next((line.strip() for line in done.stderr.splitlines() if line.strip()), "no message")
            raise SlurmError(f"scontrol update failed (exit {done.returncode}): {why}")
        return refused
