"""`FakeSlurm`: a queue in memory that answers the adapter's Slurm commands (a `SlurmClient` stand-in).

Priorities follow priority/multifactor: a job's priority is max(1, qos + fairshare + site factor - nice), its
weighted QOS and fair-share factors given per job (0 unless a test sets them), so the site factors (or nice values)
the adapter sets are the rest of the order; squeue lists jobs as Slurm would
(`SQUEUE_FORMAT`), sprio their site factors, AdminComments and lock jobs as `squeue --Format` would. Job ids are
handed out in submission order, as slurmctld does (`submit_held`)."""

from __future__ import annotations

import time

from schedrl.slurm.client import Factors, SlurmError

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
        self.fields: list[str] = []
        """The field of each update batch (`SiteFactor`, `Nice`)."""
        self.before_update = None
        self.calls: list[str] = []

    def add(self, job: int, cpus: int, limit: float | None, submit: float, *, state: str = "PENDING",
            start: float | None = None, nice: int = 0, reason: str = "Priority", partition: str = "debug",
            label: str | None = None, dependency: str = "(null)", reservation: str = "(null)",
            held: bool = False, site: int = 0, admin: str = "", name: str = "job", comment: str = "",
            qos: float = 0.0, fairshare: float = 0.0) -> None:
        self.jobs[job] = dict(label=label or str(job), partition=partition, state=state, cpus=cpus, limit=limit,
                              submit=submit, start=start, end=None, nice=nice, reason=reason, dependency=dependency,
                              reservation=reservation, held=held, site=site, admin=admin, name=name,
                              comment=comment, qos=qos, fairshare=fairshare)

    def start_job(self, job: int) -> None:
        self.jobs[job].update(state="RUNNING", start=self.now, reason="None")

    def end_job(self, job: int) -> None:
        self.jobs[job].update(state="COMPLETED", end=self.now)

    def order(self, partition: str = "debug") -> list[int]:
        """Pending jobs of a partition in Slurm's order: priority, then submit, then id (held jobs left out)."""
        jobs = [(j, d) for j, d in self.jobs.items() if d["state"] == "PENDING" and d["partition"] == partition
                and not d["held"]]
        return [j for j, d in sorted(jobs, key=lambda x: (-self._priority(x[1]), x[1]["submit"], x[0]))]

    def _priority(self, d: dict) -> int:
        return 0 if d["held"] else max(1, int(d["qos"] + d["fairshare"]) + d["site"] - d["nice"])

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
                d["dependency"], d["reservation"], d["name"])))
        return "\n".join(lines) + "\n"

    def sinfo(self, partition: str) -> str:
        self._check("sinfo")
        used = sum(d["cpus"] for d in self.jobs.values() if d["state"] == "RUNNING")
        return f"{used}/{self.cpus - used}/0/{self.cpus}|1|infinite\n"

    def config(self) -> dict[str, str]:
        self._check("scontrol show")
        return dict(self.config_values)

    def set_nice(self, changes) -> dict[int, str]:
        return self.update("Nice", [(job, nice, None) for job, nice in changes])

    def update(self, field: str, changes) -> dict[int, str]:
        self._check("scontrol")
        if self.before_update is not None:
            self.before_update([(job, value) for job, value, _ in changes])
        self.updates.append([(job, value) for job, value, _ in changes])
        self.fields.append(field)
        refused = {}
        for job, value, comment in changes:
            if job in self.refuse:
                refused[job] = self.refuse[job]
            elif job not in self.jobs or self.jobs[job]["state"] != "PENDING":
                refused[job] = "Job is no longer pending execution"
            else:
                self.jobs[job]["site" if field == "SiteFactor" else "nice"] = value
                if comment is not None:
                    self.jobs[job]["admin"] = comment
        return refused

    def sprio(self) -> dict[int, Factors]:
        self._check("sprio")
        return {job: Factors(self._priority(d), 0.0, d["site"], d["qos"], d["fairshare"])
                for job, d in self.jobs.items() if d["state"] == "PENDING" and not d["held"]}

    def site_factors(self) -> dict[int, int]:
        return {job: f.site for job, f in self.sprio().items()}

    def admin_comments(self) -> dict[int, str]:
        self._check("squeue")
        return {job: d["admin"] for job, d in self.jobs.items() if d["state"] == "PENDING"}

    def lock_jobs(self, name: str) -> list[tuple[int, str, str]]:
        self._check("squeue")
        return sorted((job, "fake", d["comment"]) for job, d in self.jobs.items()
                      if d["name"] == name and d["state"] == "PENDING")

    def submit_held(self, name: str, partition: str, comment: str) -> int:
        self._check("sbatch")
        job = max([*self.jobs, 1000]) + 1
        self.add(job, 1, 60, self.now, partition=partition, held=True, reason="JobHeldUser", name=name,
                 comment=comment)
        return job

    def set_comment(self, job: int, comment: str) -> None:
        self._check("scontrol update")
        if job not in self.jobs or self.jobs[job]["state"] != "PENDING":
            raise SlurmError("scontrol update failed (exit 1): Invalid job id specified")
        self.jobs[job]["comment"] = comment

    def cancel(self, job: int) -> None:
        self._check("scancel")
        if job in self.jobs and self.jobs[job]["state"] == "PENDING":
            self.jobs[job].update(state="CANCELLED", end=self.now)
