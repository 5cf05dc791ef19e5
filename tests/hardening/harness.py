"""Running `schedrl` in-process for the hardening tests, and the two outcomes they accept.

Every run either succeeds (exit 0) or is refused as bad input (exit 2 with exactly one `error:`
line). Anything else — another exit status, a traceback, an exception out of `main`, a run that
does not finish within `TIME_LIMIT_S` — fails the test that made it.
"""

from __future__ import annotations

import contextlib
import io
import signal

import numpy as np

from schedrl.cli.main import main

# a generated input is at most a few dozen jobs: anything this slow is a hang
TIME_LIMIT_S = 30


class Hang(Exception):
    """A run went past TIME_LIMIT_S."""


def _alarm(signum, frame):
    raise Hang(f"schedrl did not finish within {TIME_LIMIT_S} s")


def run_cli(*argv: str) -> tuple[int, str, str]:
    """`schedrl ARGV` in-process: (exit status, stdout, stderr); argparse's rejections exit via SystemExit."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(argv))
            except SystemExit as e:
                status = e.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return status, out.getvalue(), err.getvalue()


def assert_clean_outcome(status: int, out: str, err: str, argv) -> None:
    """Exit 0, or exit 2 with one `error:` line (argparse adds its usage lines) and nothing on stdout."""
    assert "Traceback" not in err, (argv, err)
    assert status in (0, 2), (argv, status, err)
    if status == 2:
        errors = [line for line in err.splitlines() if "error:" in line]
        assert len(errors) == 1, (argv, err)
        assert out == "", (argv, out)


def assert_consistent_schedule(schedule) -> None:
    """Every job completed, none before its submit, and no resource ever over capacity."""
    assert schedule.unfinished.size == 0
    assert (schedule.start >= schedule.submit).all()
    assert (schedule.end >= schedule.start).all()
    # capacity at each start instant: running jobs are those with start <= t < end
    for t in np.unique(schedule.start):
        running = (schedule.start <= t) & (schedule.end > t)
        used = schedule.req[running].sum(axis=0)
        assert (used <= schedule.capacity + 1e-9).all(), (t, used, schedule.capacity)
