"""`schedrl slurm replay TRACE --scale S`: a trace's jobs submitted to a Slurm in compressed time, to rehearse the
adapter on a test cluster before shadowing production.

Time: a job is submitted at its trace submit time x `scale` (seconds after the replay starts) and sleeps its run
time x `scale` (the trace's run, at most its request); its time limit is its trace request in whole minutes
(`--time`, Slurm's resolution), uncompressed. Slurm's backfilling and the adapter's snapshot thus see the trace's
own requests, in the trace's units (a policy sees the requests it was trained on); only the real run times are
shorter. Elapsed times are tiny next to the limits, so Slurm's estimate of when a running job ends is its start plus
its full request: the same plan, relative to its time limits, as on the uncompressed trace.

What does not compress: Slurm's scheduling passes (`sched_interval`, `bf_interval`: at least a second each), its
one-second timestamps, and the age factor (PriorityMaxAge in real time; priorities recomputed every
PriorityCalcPeriod, at least a minute). At scale 4e-4 a trace day lasts 35 s: jobs of under a second start up to a
pass late, and age orders nothing. docs/slurm.md says what that does to a rehearsal's numbers.

Each job is named `<prefix><trace job id>` (`swf-123`), so a replay's jobs are found in squeue and sacct.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from schedrl.slurm.client import SlurmClient, SlurmError

NAME_PREFIX = "swf-"
ENDED = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                   "BOOT_FAIL", "DEADLINE"})


@dataclass
class Replay:
    """The jobs of a workload submitted to one partition; `start()` submits them in a thread, `finished()` waits."""

    client: SlurmClient
    workload: object
    """A `schedrl.workload.Workload` (the jobs, in submit order)."""
    partition: str
    scale: float
    prefix: str = NAME_PREFIX
    sbatch_options: Sequence[str] = ()
    """More sbatch options for every job (`--account=...`, `--qos=...`)."""
    submitted: dict[int, str] = field(default_factory=dict)
    """Trace job id -> Slurm job id."""
    errors: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None
    started_at: float = 0.0
    late_s: float = 0.0
    """How late the latest submission was against its compressed time (sbatch's own time, a loaded controller)."""

    def __post_init__(self) -> None:
        if not (self.scale > 0 and math.isfinite(self.scale)):
            raise ValueError(f"--scale must be a positive number, got {self.scale}")

    def command(self, k: int) -> list[str]:
        w = self.workload
        run = float(min(w.run[k], w.time_req[k]) if w.time_req[k] > 0 else w.run[k]) * self.scale
        request = float(w.time_req[k]) if w.time_req[k] > 0 else float(w.run[k])
        limit = max(1, math.ceil(request / 60.0))
        return ["sbatch", "--parsable", f"--partition={self.partition}", f"--ntasks={int(w.procs_req[k])}",
                f"--time={limit}", f"--job-name={self.prefix}{int(w.job_id[k])}", "--output=/dev/null",
                *self.sbatch_options, "--wrap", f"sleep {max(run, 0.0):.2f}"]

    def start(self) -> "Replay":
        offsets = (np.asarray(self.workload.submit, dtype=float) - float(self.workload.submit[0])) * self.scale
        self.started_at = time.monotonic()

        def submit_all():
            for k, offset in enumerate(offsets):
                wait = self.started_at + offset - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                else:
                    self.late_s = max(self.late_s, -wait)
                job = int(self.workload.job_id[k])
                try:
                    done = self.client.run(self.command(k))
                    self.submitted[job] = done.stdout.strip().split(";")[0]
                except SlurmError as e:  # reported by the caller, which sees the missing job
                    self.errors.append(f"job {job}: {e}")

        self.thread = threading.Thread(target=submit_all, name="swf-replay", daemon=True)
        self.thread.start()
        return self

    def states(self) -> dict[str, dict]:
        """Slurm id -> {name, state, partition, start, end} of every job slurmctld still holds."""
        out = self.client.run(["squeue", "--noheader", "--all", "--states=all", "--format=%A|%j|%T|%P|%S|%e"]).stdout
        jobs = {}
        for line in out.splitlines():
            parts = line.split("|")
            if len(parts) == 6:
                jobs[parts[0]] = dict(zip(("name", "state", "partition", "start", "end"), parts[1:]))
        return jobs

    def finished(self, timeout_s: float, progress: Callable[[str], None] | None = None,
                 poll_s: float = 1.0) -> dict[str, dict]:
        """Wait until every job is submitted and has ended; returns Slurm id -> its final squeue record (jobs that
        slurmctld no longer holds, past MinJobAge, are left out); TimeoutError naming how many had not ended."""
        deadline = time.monotonic() + timeout_s
        self.thread.join(max(deadline - time.monotonic(), 0.0))
        said = -1
        while True:
            jobs = self.states()
            ids = set(self.submitted.values())
            mine = {i: jobs[i] for i in ids if i in jobs}
            ended = sum(1 for j in mine.values() if j["state"] in ENDED)
            if progress is not None and ended != said and (ended == len(ids) or ended - said >= max(len(ids) // 10, 1)):
                progress(f"{ended} of {len(self.workload.job_id)} jobs ended ({len(ids)} submitted)")
                said = ended
            if not self.thread.is_alive() and ended == len(mine) == len(ids):
                return mine
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(ids) - ended} of {len(ids)} replayed jobs had not ended within "
                                   f"{timeout_s:g} s")
            time.sleep(poll_s)


def summary(replay: Replay, final: dict[str, dict]) -> dict:
    """What became of the trace's jobs: submitted, each state's count, lost (never submitted) and duplicated (one
    trace job, several Slurm jobs)."""
    names = [j["name"] for j in final.values()]
    states: dict[str, int] = {}
    for j in final.values():
        states[j["state"]] = states.get(j["state"], 0) + 1
    return {"jobs": int(len(replay.workload.job_id)), "submitted": len(replay.submitted), "states": states,
            "lost": int(len(replay.workload.job_id)) - len(replay.submitted),
            "duplicated": len(names) - len(set(names)), "late_s": round(replay.late_s, 3), "errors": replay.errors}


class ReplayError(ValueError):
    """Why a replay cannot start or could not follow its jobs (`replay_trace`): one line."""


def replay_trace(trace: str, partition: str, scale: float, first: int = 0, jobs: int = 100,
                 sbatch_options: Sequence[str] = (), timeout_s: float = 3600.0, wait: bool = True,
                 say: Callable[[str], None] = print, client: SlurmClient | None = None) -> tuple[Replay, dict]:
    """`schedrl slurm replay`: jobs `first`.. `first + jobs` of `trace` (a file or a catalog name) submitted to
    `partition` at `scale` (`Replay`), then, where `wait`, followed until they have ended (`timeout_s`). `say` hears
    what is replayed and the progress. Returns the replay and its `summary` (with `seconds`: the wall time); ReplayError
    on a bad window, trace, partition or scale, a job wider than the partition, or a replay that could not follow its
    jobs."""
    from schedrl.slurm.snapshot import SnapshotError, parse_sinfo
    from schedrl.workload import TraceError, read_swf
    from schedrl.workload.catalog import resolve_trace

    if jobs < 1 or first < 0:
        raise ReplayError(f"--jobs must be >= 1 and --first >= 0; got {jobs}, {first}")
    try:
        workload = read_swf(resolve_trace(trace))
    except (TraceError, FileNotFoundError, ValueError) as e:
        raise ReplayError(str(e).splitlines()[0]) from None
    if workload.report.dropped:  # --first and --jobs count the cleaned trace's jobs: said, never silent
        say(f"{workload.report.summary().splitlines()[0]}; the window is of the jobs kept (`schedrl traces info "
            f"{trace}` says why)")
    n = len(workload.job_id)
    if first >= n:
        raise ReplayError(f"--first {first} is past the trace's {n:,} jobs")
    window = workload[first:first + jobs]
    client = client or SlurmClient()
    try:
        machine = parse_sinfo(client.sinfo(partition), partition)
        replay = Replay(client, window, partition, scale, sbatch_options=tuple(sbatch_options))
    except (SlurmError, SnapshotError, ValueError) as e:
        raise ReplayError(str(e)) from None
    wide = [int(window.job_id[k]) for k in range(len(window.job_id)) if window.procs_req[k] > machine.usable]
    if wide:
        raise ReplayError(f"{len(wide)} job(s) of the window request more CPUs than partition {partition} has "
                          f"({machine.usable:,} usable), e.g. job {wide[0]}: pick another window or partition")
    span = float(window.submit[-1] - window.submit[0])
    say(f"replaying {len(window.job_id)} jobs of {trace} (jobs {int(window.job_id[0])}..{int(window.job_id[-1])}) "
        f"on partition {partition} at scale {scale:g}: {span:,.0f} s of trace arrivals in {span * scale:,.1f} s")
    t0 = time.monotonic()
    replay.start()
    try:
        if wait:
            final = replay.finished(timeout_s, progress=say)
        else:
            replay.thread.join()
            final = {}
    except TimeoutError as e:
        raise ReplayError(str(e)) from None
    except SlurmError as e:
        raise ReplayError(f"the replay could not follow its jobs: {e}") from None
    out = summary(replay, final)
    out["seconds"] = round(time.monotonic() - t0, 1)
    return replay, out


def outcome(replay: Replay, out: dict, as_json: bool = False) -> list[str]:
    """What `schedrl slurm replay` prints of `out` (`replay_trace`'s summary): the JSON (with trace id -> Slurm id), or
    a line with the counts and up to five errors."""
    import json

    if as_json:
        return [json.dumps({**out, "slurm_ids": {str(k): v for k, v in replay.submitted.items()}}, indent=2)]
    states = ", ".join(f"{count} {state}" for state, count in sorted(out["states"].items())) or "not waited for"
    return [f"replay: {out['submitted']} of {out['jobs']} submitted ({states}); {out['lost']} lost, "
            f"{out['duplicated']} duplicated; in {out['seconds']:g} s, submissions at most {out['late_s']:.2f} s late",
            *(f"  {error}" for error in out["errors"][:5])]


__all__ = ["ENDED", "NAME_PREFIX", "Replay", "ReplayError", "outcome", "replay_trace", "summary"]
