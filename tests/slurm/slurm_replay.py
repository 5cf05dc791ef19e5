"""Replaying an SWF sequence on the test Slurm in compressed time: `schedrl.slurm.replay.Replay` (the code of
`schedrl slurm replay`, which says how time is compressed) on the test cluster, and its jobs' final states."""

from __future__ import annotations

from schedrl.slurm.client import SlurmClient
from schedrl.slurm.replay import ENDED, NAME_PREFIX, Replay

__all__ = ["ENDED", "NAME_PREFIX", "Replay", "final_jobs", "replay"]


def replay(cluster, workload, partition: str, scale: float) -> Replay:
    """The jobs of `workload` submitted to `partition` of the test cluster, starting now (in a thread)."""
    return Replay(SlurmClient(env=cluster.env()), workload, partition, scale).start()


def final_jobs(cluster) -> dict[str, dict]:
    """Slurm id -> {name, state, partition, start, end} of every job slurmctld holds."""
    out = cluster.run("squeue", "--noheader", "--states=all", "--format=%A|%j|%T|%P|%S|%e",
                      extra_env={"SLURM_TIME_FORMAT": "%s"}).stdout
    jobs = {}
    for line in out.splitlines():
        job, name, state, partition, start, end = line.split("|")
        jobs[job] = {"name": name, "state": state, "partition": partition, "start": start, "end": end}
    return jobs
