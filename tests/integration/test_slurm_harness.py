"""The test Slurm of tests/slurm_cluster.py: jobs submitted with sbatch show in `squeue --json` and complete."""

from __future__ import annotations

import json

import pytest

from slurm_cluster import slurm_cluster  # noqa: F401  (the session fixture)

pytestmark = pytest.mark.slurm


def squeue_jobs(cluster) -> dict[str, dict]:
    """Every job slurmctld still holds (finished ones for MinJobAge), by id, from `squeue --json`."""
    return {str(job["job_id"]): job for job in json.loads(cluster.run("squeue", "--json").stdout)["jobs"]}


def test_three_batch_jobs_are_queued_and_complete(slurm_cluster):
    ids = [slurm_cluster.sbatch(f"--job-name=schedrl-{k}", "--time=1", "--wrap", "sleep 1") for k in range(3)]
    queued = squeue_jobs(slurm_cluster)
    assert set(ids) <= set(queued)
    assert [queued[i]["name"] for i in ids] == ["schedrl-0", "schedrl-1", "schedrl-2"]
    assert {queued[i]["job_state"] for i in ids} <= {"PENDING", "RUNNING", "COMPLETING", "COMPLETED"}

    def done() -> dict[str, dict] | None:
        jobs = squeue_jobs(slurm_cluster)
        return jobs if all(jobs[i]["job_state"] == "COMPLETED" for i in ids) else None

    finished = slurm_cluster.wait_for(done, 20, "three 1-second jobs COMPLETED")
    assert [finished[i]["exit_code"] for i in ids] == [0, 0, 0]
    assert all(finished[i]["partition"] == "debug" for i in ids)
