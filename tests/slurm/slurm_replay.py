"""Replaying an SWF sequence on the test Slurm in compressed time.

Time: a job is submitted at its trace submit time times `scale` (seconds after the replay starts) and sleeps for
its run time times `scale`; its time limit is its trace request in whole minutes (`--time`, Slurm's resolution).
Slurm's backfilling and the adapter's snapshot thus see the trace's own requests, in the trace's own units (the
policy sees the requests it was trained on); only the real run times are shorter. Elapsed times are tiny next to
the limits, so Slurm's estimate of when a running job ends is its start plus its full request: the same plan,
relative to its time limits, as on the uncompressed trace. The backfill scheduler runs every second (bf_interval=1)
with its default 60 s resolution, which matches the limits' one-minute grain.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from schedrl.workload import Workload

NAME_PREFIX = "swf-"


@dataclass
class Replay:
    """The jobs of a sequence submitted to one partition; `thread` submits them."""

    cluster: object
    workload: Workload
    partition: str
    scale: float
    submitted: dict[int, str] = field(default_factory=dict)
    """Trace job id -> Slurm job id."""
    errors: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None
    started_at: float = 0.0

    def command(self, k: int) -> list[str]:
        w = self.workload
        run = float(min(w.run[k], w.time_req[k])) * self.scale
        limit = max(1, math.ceil(float(w.time_req[k]) / 60.0))
        return ["--partition", self.partition, "--ntasks", str(int(w.procs_req[k])), f"--time={limit}",
                f"--job-name={NAME_PREFIX}{int(w.job_id[k])}", "--output=/dev/null", "--wrap", f"sleep {run:.2f}"]

    def start(self) -> "Replay":
        offsets = (np.asarray(self.workload.submit, dtype=float) - float(self.workload.submit[0])) * self.scale
        self.started_at = time.monotonic()

        def submit_all():
            for k, offset in enumerate(offsets):
                time.sleep(max(0.0, self.started_at + offset - time.monotonic()))
                try:
                    self.submitted[int(self.workload.job_id[k])] = self.cluster.sbatch(*self.command(k))
                except Exception as e:  # reported by the test, which sees the missing job
                    self.errors.append(f"job {int(self.workload.job_id[k])}: {e}")

        self.thread = threading.Thread(target=submit_all, name="swf-replay", daemon=True)
        self.thread.start()
        return self

    def finished(self, timeout_s: float) -> dict[str, dict]:
        """Wait until every job is submitted and has ended; returns Slurm id -> its final squeue record."""
        self.thread.join(timeout_s)
        ids = set(self.submitted.values())

        def done():
            jobs = final_jobs(self.cluster)
            mine = {i: jobs[i] for i in ids if i in jobs}
            return mine if len(mine) == len(ids) and all(j["state"] in ENDED for j in mine.values()) else None

        return self.cluster.wait_for(done, timeout_s, f"{len(ids)} replayed jobs ended", interval_s=1.0)


ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}


def final_jobs(cluster) -> dict[str, dict]:
    """Slurm id -> {name, state, partition, start, end} of every job slurmctld holds."""
    out = cluster.run("squeue", "--noheader", "--states=all", "--format=%A|%j|%T|%P|%S|%e",
                      extra_env={"SLURM_TIME_FORMAT": "%s"}).stdout
    jobs = {}
    for line in out.splitlines():
        job, name, state, partition, start, end = line.split("|")
        jobs[job] = {"name": name, "state": state, "partition": partition, "start": start, "end": end}
    return jobs
