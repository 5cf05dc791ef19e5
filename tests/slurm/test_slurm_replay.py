"""`schedrl slurm replay`: each job's sbatch line (compressed sleep, uncompressed limit in whole minutes), and the
refusals that come before any job is submitted. The replay on a real Slurm: tests/slurm/test_slurm_live.py."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.cli.main import main
from schedrl.slurm.replay import Replay
from schedrl.workload import read_swf
from schedrl.workload.catalog import resolve_trace


def test_a_job_sleeps_its_compressed_run_under_its_trace_limit():
    jobs = read_swf(resolve_trace("default"))[37_600:37_603]
    replay = Replay(client=None, workload=jobs, partition="debug", scale=4e-4)
    for k in range(3):
        argv = replay.command(k)
        run = min(float(jobs.run[k]), float(jobs.time_req[k])) * 4e-4
        assert argv[:2] == ["sbatch", "--parsable"] and "--partition=debug" in argv
        assert f"--ntasks={int(jobs.procs_req[k])}" in argv
        assert f"--time={max(1, int(np.ceil(jobs.time_req[k] / 60)))}" in argv  # minutes, not compressed
        assert argv[-1] == f"sleep {run:.2f}" and f"--job-name=swf-{int(jobs.job_id[k])}" in argv
    with pytest.raises(ValueError, match="--scale must be a positive number"):
        Replay(client=None, workload=jobs, partition="debug", scale=0.0)


@pytest.mark.parametrize("args, message", [
    (["--first", "99999999"], "--first 99999999 is past the trace's"),
    (["--jobs", "0"], "argument --jobs: must be a whole number >= 1"),
])
def test_bad_windows_are_one_error_line(capsys, args, message):
    try:
        status = main(["slurm", "replay", "default", "--scale", "1e-3", "--partition", "p", *args])
    except SystemExit as e:  # refused while the command line is parsed
        status = e.code
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
