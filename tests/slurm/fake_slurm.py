"""`FakeSlurm`: a queue in memory that answers the adapter's Slurm commands (a `SlurmClient` stand-in).

Priorities follow priority/multifactor with every weight 0: a job's priority is max(1, -nice), so the nice values
the adapter sets are the whole order; squeue lists jobs as Slurm would (`SQUEUE_FORMAT`)."""

from __future__ import annotations

import time

from schedrl.slurm.client import SlurmError

CONFIG = {"ClusterName": "fake", "PriorityType": "priority/multifactor", "PriorityWeightAge": "0",
          "PriorityWeightFairShare": "0", "PriorityWeightJobSize": "0", "PriorityWeightPartition": "0",
          "PriorityWeightQOS": "0", "PriorityWeightAssoc": "0", "PriorityWeightTRES": "(null)",
          "PriorityFlags": "", "PrioritySiteFactorPlugin": "(null)"}


def _duration(seconds: float | None) -> str:
    return "UNLIMITED" if seconds is None else f"{int(seconds // 60)}:{int(seconds % 60):02d}"


class FakeSlurm:
    """Jobs by id; `down` makes every command fail as with slurmctld stopped; `refuse` maps job -> scontrol's
    refusal; `before_update` is called with the changes before they are applied."""

    def __init__(self, cpus: int = 256, config: dict | None = None):
        self.cpus, self.now = cpus, float(int(time.time()))
        self.jobs: dict[int, dict] = {}
        self.config_values = {**CONFIG, **(config or {})}
        self.down = False
        self.refuse: dict[int, str] = {}
        self.updates: list[list[tuple[int, int]]] = []
        self.before_update = None
        self.calls: list[str] = []

    def add(self, job: int, cpus: int, limit: float | None, submit: float, *, state: str = "PENDING",
            start: float | None = None, nice: int = 0, reason: str = "Priority", partition: str = "debug",
            label: str | None = None, dependency: str = "(null)", reservation: str = "(null)",
            held: bool = False) -> None:
        self.jobs[job] = dict(label=label or str(job), partition=partition, state=state, cpus=cpus, limit=limit,
                              submit=submit, start=start, end=None, nice=nice, reason=reason, dependency=dependency,
                              reservation=reservation, held=held)

    def start_job(self, job: int) -> None:
        self.jobs[job].update(state="RUNNING", start=self.now, reason="None")

    def end_job(self, job: int) -> None:
        self.jobs[job].update(state="COMPLETED", end=self.now)

    def order(self, partition: str = "debug") -> list[int]:
        """Pending jobs of a partition in Slurm's order: priority, then submit, then id."""
        jobs = [(j, d) for j, d in self.jobs.items() if d["state"] == "PENDING" and d["partition"] == partition]
        return [j for j, d in sorted(jobs, key=lambda x: (-self._priority(x[1]), x[1]["submit"], x[0]))]

    def _priority(self, d: dict) -> int:
        return 0 if d["held"] else max(1, -d["nice"])

    def _check(self, name: str) -> None:
        self.calls.append(name)
        if self.down:
            raise SlurmError(f"{name} failed (exit 1): slurm_load_jobs error: Unable to contact slurm controller "
                             "(connect failure)")

    def squeue(self) -> str:
        self._check("squeue")
        lines = []
        for job, d in self.jobs.items():
            lines.append("|".join(str(x) for x in (
                job, d["label"], d["partition"], d["state"], d["cpus"], 1, _duration(d["limit"]), int(d["submit"]),
                int(d["start"] or 0), int(d["end"] or 0), self._priority(d), d["nice"], d["reason"],
                d["dependency"], d["reservation"])))
        return "\n".join(lines) + "\n"

    def sinfo(self, partition: str) -> str:
        self._check("sinfo")
        used = sum(d["cpus"] for d in self.jobs.values() if d["state"] == "RUNNING")
        return f"{used}/{self.cpus - used}/0/{self.cpus}|1|infinite\n"

    def config(self) -> dict[str, str]:
        self._check("scontrol show")
        return dict(self.config_values)

    def set_nice(self, changes) -> dict[int, str]:
        self._check("scontrol")
        if self.before_update is not None:
            self.before_update(list(changes))
        self.updates.append(list(changes))
        refused = {}
        for job, nice in changes:
            if job in self.refuse:
                refused[job] = self.refuse[job]
            elif job not in self.jobs or self.jobs[job]["state"] != "PENDING":
                refused[job] = "Job is no longer pending execution"
            else:
                self.jobs[job]["nice"] = nice
        return refused
