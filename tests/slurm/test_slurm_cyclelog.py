"""The cycle log's record of jobs (`schedrl.slurm.cyclelog.CycleLog.jobs`)."""

from __future__ import annotations

from schedrl.slurm.cyclelog import CycleLog, read
from schedrl.slurm.snapshot import Machine, QueueJob, Snapshot


def job(job_id: int, state: str, submit: float, start: float | None = None, end: float | None = None) -> QueueJob:
    return QueueJob(job_id, str(job_id), "batch", state, 4, 1, 600.0, submit, start, end, 100, 0, "None", "(null)",
                    "(null)")


def snapshot(now: float, *jobs: QueueJob) -> Snapshot:
    pending = tuple(j for j in jobs if j.state == "PENDING")
    finished = tuple(j for j in jobs if j.state == "COMPLETED")
    return Snapshot(now, "batch", Machine(0, 8, 0, 8, 1, None), pending, (), finished, (),
                    jobs={j.job_id: j for j in jobs})


def test_a_job_that_came_and_went_in_the_logs_first_second_is_logged(tmp_path):
    log = CycleLog(tmp_path / "cycles.jsonl")
    log.jobs(snapshot(100.4))  # the log's first snapshot, 0.4 s into second 100
    # job 1 was submitted at 100.5 and ended at 100.7: squeue says 100 for both (whole seconds, truncated);
    # job 2 ended in the second before the log began: history
    log.jobs(snapshot(101.4, job(1, "COMPLETED", 100.0, 100.0, 100.0), job(2, "COMPLETED", 98.0, 98.0, 99.0)))
    log.close()
    records = list(read(tmp_path / "cycles.jsonl"))
    assert [(r["kind"], r["job"]) for r in records] == [("job", 1), ("started", 1), ("ended", 1)]
