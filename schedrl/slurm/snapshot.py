"""`Snapshot`: one partition of a Slurm cluster at one moment, read from squeue and sinfo, and as a simulator.

The adapter reorders the pending jobs of one partition. A snapshot keeps the jobs it may reorder (`pending`: in
the partition, not held, no dependency or reservation, waiting only for resources or priority, no wider than the
partition's usable CPUs), the partition's running jobs (with their remaining time limits), the jobs that ended
(for the cycle log), and every other pending job with the reason it is left alone (`left_alone`).

`simulator(snapshot)` is a `schedrl.sim.Simulator` paused at that moment: running jobs hold their CPUs until their
time limits, pending jobs wait in FCFS order, nothing else will arrive. Times are seconds since the oldest job's
submit (F1's `log10(submit)` term counts from there). CPUs that other partitions' jobs hold on shared nodes are one
running pseudo-job (job id -1) that ends with the last of the partition's own running jobs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from schedrl.sim import SimConfig, Simulator
from schedrl.sim.state import HEAP_LEN, NEXT_ARRIVAL, NOW, Q_LEN, QUEUED, RUNNING, SEQ
from schedrl.workload import Workload
from schedrl.workload.fields import SWF_FIELDS
from schedrl.slurm.lock import LOCK_NAME
from schedrl.duration import SLURM_NO_LIMIT, parse_slurm_duration

FIELDS = ("job_id", "label", "partition", "state", "cpus", "nodes", "limit", "submit", "start", "end", "priority",
          "nice", "reason", "dependency", "reservation", "name")
"""The fields of each squeue line (`client.SQUEUE_FORMAT`); lines without the name (the format before it) are read
too."""

RUNNING_STATES = frozenset({"RUNNING", "COMPLETING", "CONFIGURING", "STAGE_OUT", "SIGNALING", "RESIZING"})
FINISHED_STATES = frozenset({"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                             "DEADLINE", "OUT_OF_MEMORY", "REVOKED", "SPECIAL_EXIT"})
ORDERABLE_REASONS = frozenset({"None", "Priority", "Resources"})
"""Pending reasons of jobs that wait only for CPUs or for their turn: the ones an order can move."""
UNLIMITED_S = 365 * 86400.0
"""Time limit given to a job of an UNLIMITED partition with no limit of its own (SJF ranks it last)."""


class SnapshotError(ValueError):
    """squeue or sinfo output the snapshot cannot read; the message names the line."""


class QueueJob(NamedTuple):
    """One job as squeue printed it; times are epoch seconds, None where Slurm has none (a tuple: thousands are
    made per cycle, and a frozen dataclass is several times slower to build)."""

    job_id: int
    label: str
    """The id as squeue prints it (`12`, `12_3`, `12_[4-9]` for array tasks not yet split out, `12+1`)."""
    partition: str
    state: str
    cpus: int
    nodes: int
    limit: float | None
    """Time limit in seconds; None for UNLIMITED."""
    submit: float
    start: float | None
    end: float | None
    priority: int
    nice: int
    reason: str
    dependency: str
    reservation: str
    name: str = ""


def _time(text: str) -> float | None:
    return float(text) if text.isdigit() and text != "0" else None


@functools.lru_cache(maxsize=4096)  # a queue holds few distinct limits: parse each once
def _limit(text: str) -> float | None:
    if text.upper() in SLURM_NO_LIMIT:
        return None
    return parse_slurm_duration(text)


def parse_squeue(text: str) -> list[QueueJob]:
    """The jobs of `squeue --format=client.SQUEUE_FORMAT` output (epoch times)."""
    jobs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        parts = line.split("|", len(FIELDS) - 1)
        if len(parts) not in (len(FIELDS), len(FIELDS) - 1):
            raise SnapshotError(f"squeue line {number}: {len(parts)} fields, expected {len(FIELDS)}: {line[:120]!r}")
        try:
            jobs.append(QueueJob(int(parts[0]), parts[1], parts[2], parts[3], int(parts[4]), int(parts[5]),
                                 _limit(parts[6]), float(parts[7]), _time(parts[8]), _time(parts[9]),
                                 int(parts[10]), int(parts[11]), parts[12], parts[13], parts[14],
                                 parts[15] if len(parts) == len(FIELDS) else ""))
        except ValueError as e:
            raise SnapshotError(f"squeue line {number}: {e}: {line[:120]!r}") from None
    return jobs


@dataclass(frozen=True)
class Machine:
    """A partition's CPUs, from sinfo."""

    allocated: int
    idle: int
    other: int
    """CPUs of drained, down or failed nodes: never scheduled, never counted."""
    total: int
    nodes: int
    max_time: float | None
    """The partition's time limit in seconds (None: UNLIMITED)."""

    @property
    def usable(self) -> int:
        return self.total - self.other


def parse_sinfo(text: str, partition: str) -> Machine:
    """The partition's CPUs from `sinfo --format=client.SINFO_FORMAT` (one line per group of like nodes)."""
    allocated = idle = other = total = nodes = 0
    max_time = None
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise SnapshotError(f"sinfo shows no partition {partition!r}: check --partition against `sinfo --summarize`")
    for line in lines:
        try:
            cpus, count, limit = line.split("|")
            a, i, o, t = (int(x) for x in cpus.split("/"))
            allocated, idle, other, total, nodes = allocated + a, idle + i, other + o, total + t, nodes + int(count)
            max_time = _limit(limit)
        except ValueError:
            raise SnapshotError(f"sinfo: cannot read {line!r} (expected CPUs A/I/O/T|nodes|time limit)") from None
    return Machine(allocated, idle, other, total, nodes, max_time)


def left_alone_reason(job: QueueJob, partition: str, usable: int) -> str | None:
    """Why pending `job` is not reordered (one phrase), or None if it is."""
    if job.partition != partition:
        return f"in partition {job.partition}, not {partition}"
    if "[" in job.label:
        return "array tasks not yet split out"
    if "+" in job.label:
        return "a heterogeneous job's component"
    if job.priority == 0 or job.reason.startswith("JobHeld"):
        return f"held ({job.reason})"
    if job.dependency not in ("(null)", "") or job.reason.startswith("Dependency"):
        return f"waits on a dependency ({job.dependency})"
    if job.reservation not in ("(null)", ""):
        return f"runs in reservation {job.reservation}"
    if job.cpus > usable:
        return f"requests {job.cpus} CPUs, more than the partition's {usable} usable"
    if job.reason not in ORDERABLE_REASONS:
        return f"cannot start now ({job.reason})"
    return None


@dataclass(frozen=True)
class Snapshot:
    """One partition at one moment."""

    time: float
    """Epoch seconds when squeue ran."""
    partition: str
    machine: Machine
    pending: tuple[QueueJob, ...]
    """The jobs an order may move, in Slurm's present order (priority, then submit, then id)."""
    running: tuple[QueueJob, ...]
    finished: tuple[QueueJob, ...]
    left_alone: tuple[tuple[QueueJob, str], ...]
    """Pending jobs (of any partition) left alone, each with why."""
    other_cpus: int = 0
    """CPUs of the partition's nodes held by other partitions' jobs."""
    jobs: dict[int, QueueJob] = field(default_factory=dict, repr=False)
    """Every job squeue showed, by id."""

    def limit_of(self, job: QueueJob) -> float:
        """The job's time limit in seconds: its own, else the partition's, else `UNLIMITED_S`."""
        return job.limit if job.limit is not None else (self.machine.max_time or UNLIMITED_S)

    @classmethod
    def read(cls, squeue: str, sinfo: str, partition: str, now: float, ignore: frozenset[int] = frozenset()
             ) -> "Snapshot":
        """`ignore`: job ids left out altogether (the adapters' held lock jobs)."""
        machine = parse_sinfo(sinfo, partition)
        pending, running, finished, alone = [], [], [], []
        jobs = [j for j in parse_squeue(squeue) if j.job_id not in ignore and j.name != LOCK_NAME]
        for job in jobs:
            if job.state == "PENDING":
                why = left_alone_reason(job, partition, machine.usable)
                (pending.append(job) if why is None else alone.append((job, why)))
            elif job.partition != partition:
                continue
            elif job.state in RUNNING_STATES:
                running.append(job)
            elif job.state in FINISHED_STATES:
                finished.append(job)
        pending.sort(key=lambda j: (-j.priority, j.submit, j.job_id))
        own = sum(j.cpus for j in running)
        return cls(now, partition, machine, tuple(pending), tuple(running), tuple(finished), tuple(alone),
                   max(machine.allocated - own, 0), {j.job_id: j for j in jobs})


def simulator(snapshot: Snapshot, config: SimConfig = SimConfig()) -> Simulator:
    """A simulator paused at the snapshot: its running jobs running, its pending jobs queued (FCFS), nothing more to
    come. Job i of its workload is `workload.job_id[i]` (-1: other partitions' CPUs)."""
    now = snapshot.time
    running = list(snapshot.running)
    ends = [now + max((j.start or now) + snapshot.limit_of(j) - now, 1.0) if j.state == "RUNNING" else now + 1.0
            for j in running]
    rows = [(j.job_id, j.submit, j.start or now, j.cpus, snapshot.limit_of(j), end) for j, end in zip(running, ends)]
    if snapshot.other_cpus:
        last = max(ends, default=now + 3600.0)
        rows.append((-1, now, now, snapshot.other_cpus, last - now, last))
    n_run = len(rows)
    rows += [(j.job_id, j.submit, -1.0, j.cpus, snapshot.limit_of(j), -1.0) for j in snapshot.pending]
    if not rows:
        raise ValueError(f"partition {snapshot.partition} has neither running nor pending jobs")
    table = np.array(rows, dtype=np.float64)
    # running jobs on nodes drained since they started can hold more than the usable CPUs: then the machine is full
    capacity = max(snapshot.machine.usable, int(table[:n_run, 3].sum()), 1)
    t0 = min(float(table[:, 1].min()), now)
    by_submit = np.argsort(table[:, 1], kind="stable")
    table = table[by_submit]
    is_running = by_submit < n_run
    n = len(table)
    cols = {f.name: np.full(n, -1, dtype=f.dtype) for f in SWF_FIELDS}
    limit = np.maximum(np.ceil(table[:, 4]), 1).astype(np.int64)
    cols.update(job_id=table[:, 0].astype(np.int64), submit=np.round(table[:, 1] - t0).astype(np.int64),
                run=limit, time_req=limit, procs_req=table[:, 3].astype(np.int64),
                procs_alloc=table[:, 3].astype(np.int64), status=np.ones(n, np.int64))
    workload = Workload(cols, max_procs=capacity, max_nodes=max(snapshot.machine.nodes, 1),
                        name=f"slurm:{snapshot.partition}")
    sim = Simulator(workload, config)
    s = sim.state
    running_idx = np.flatnonzero(is_running)
    ends_rel = table[running_idx, 5] - t0
    heap = running_idx[np.argsort(ends_rel, kind="stable")]  # a sorted array is a valid min-heap
    s.status[:] = QUEUED
    s.status[heap] = RUNNING
    s.start[running_idx] = table[running_idx, 2] - t0
    s.end[running_idx] = ends_rel
    s.heap_t[:len(heap)] = s.end[heap]
    s.heap_s[:len(heap)] = np.arange(len(heap))
    s.heap_j[:len(heap)] = heap
    queued = np.flatnonzero(~is_running)  # already in FCFS order: submit, then position
    s.queue[:len(queued)] = queued
    s.free[0] = s.cap[0] - float(table[running_idx, 3].sum())
    s.iv[Q_LEN], s.iv[HEAP_LEN], s.iv[SEQ], s.iv[NEXT_ARRIVAL] = len(queued), len(heap), len(heap), n
    s.fv[NOW] = now - t0
    return sim
