"""What the terminal shows is part of the manual: a short `schedrl train` run, as a user starts it, prints schedrl's
own lines, none of Ray's, Tune's or RLlib's notices (`schedrl/training/quiet.py` says which and how), and no line
over and over.

The run is a subprocess, as from a shell, on the session's Ray instance (`RAY_ADDRESS`, so it starts no Ray of its
own); the variables this process has that would quiet a notice for it are removed from its environment. Ray's
token notice, printed where a run starts a Ray instance of its own, is checked on Ray's own function that prints it.
A checkpoint at every iteration with one kept makes Tune snapshot its experiment state after every iteration: the
condition of its "snapshotting has been triggered multiple times" warning, within one short run.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections import Counter

from shared_traces import REPO

from schedrl.training.quiet import ENVIRONMENT

TINY = ["--trace", "default", "--iterations", "4", "--batch-size", "128", "--epochs", "1", "--sequence-length", "32",
        "--envs-per-runner", "1", "--num-env-runners", "0", "--trial-cpus", "1", "--no-filtering",
        "--warm-start", "none",
        "--validation-sequences", "1", "--validation-jobs", "64", "--validate-every", "1", "--checkpoint-every", "1",
        "--keep-checkpoints", "1", "--eval-sequences", "1", "--eval-jobs", "64"]

NOTICES = (
    "Token authentication is enabled",  # Ray, at every start
    "new API stack",  # RLlib, at every start
    "Experiment state snapshotting",  # Tune, every few seconds
    "Configuration for experiment", "View detailed results here", "TensorBoard",  # Tune's console reporter
    "Started a local Ray instance", "Connecting to existing Ray cluster",  # Ray's INFO lines
    "logging.cc",  # Ray's C++ logger, announcing RAY_BACKEND_LOG_LEVEL
)
"""Text of the notices that no run may print."""

ALLOWANCE = 2
"""A line may appear at most this many times (after its timestamp is removed)."""

STAMP = re.compile(r"^(\(\w+ pid=\d+\)\s*)?\[?\d{4}-\d\d-\d\d[ T][\d:,.]+\]?\s*(\S+ \d+ \d+\]\s*)?")
"""A log line's leading process tag, timestamp and level fields: two copies of one warning differ only there."""


def train_output(tmp_path, env: dict[str, str]) -> tuple[int, str]:
    """Exit status and combined stdout and stderr of a tiny `schedrl train rlscheduler` run in a subprocess."""
    argv = [sys.executable, "-m", "schedrl", "train", "rlscheduler", *TINY, "--out", str(tmp_path / "run")]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300, cwd=REPO,
                          env=env)
    return proc.returncode, proc.stdout


def user_environment() -> dict[str, str]:
    """This process's environment without what quiets a notice (the quiet module's variables, Ray's backend log level),
    with the session's Ray as the address. `RAY_AUTH_MODE`, which Ray set here when it started the session, stays: a
    process joining a cluster that uses tokens needs it (and Ray prints its token notice only where it starts one:
    `test_the_token_notice_is_dropped_and_its_opposite_kept`)."""
    import ray

    env = {k: v for k, v in os.environ.items() if k not in ENVIRONMENT and k != "RAY_BACKEND_LOG_LEVEL"}
    env["RAY_ADDRESS"] = ray.get_runtime_context().gcs_address
    return env


def repeated(output: str, allowance: int = ALLOWANCE) -> dict[str, int]:
    """Lines (timestamps removed) printed more than `allowance` times, with their counts."""
    counts = Counter(STAMP.sub("", line).strip() for line in output.splitlines())
    return {line: n for line, n in counts.items() if line and n > allowance}


def test_a_training_run_prints_its_own_lines_once(ray_session, tmp_path):
    code, output = train_output(tmp_path, user_environment())
    assert code == 0, output[-3000:]
    shown = [notice for notice in NOTICES if notice in output]
    assert not shown, f"library notices in the output: {shown}\n{output}"
    assert not repeated(output), f"lines repeated more than {ALLOWANCE} times: {repeated(output)}\n{output}"
    # and schedrl's own lines are all there: one per iteration, the end, the final table
    for i in range(1, 5):
        assert re.search(rf"^iter +{i} \|", output, re.M), output
    assert "training finished in" in output and "RL vs " in output, output


def test_repeated_finds_a_warning_printed_again_with_another_timestamp():
    warning = "WARNING experiment_state.py:210 -- Experiment state snapshotting has been triggered multiple times"
    output = "\n".join([f"2026-11-26 14:1{i}:00,00{i}\t{warning}" for i in range(3)] + ["iter 1", "iter 2", "", "", ""])
    assert repeated(output) == {warning: 3}
    assert repeated(output, allowance=3) == {}
    assert repeated("[2026-11-26 14:25:49,503 I 23060 23060] logging.cc:303: x\n" * 3) == {"logging.cc:303: x": 3}


def test_the_token_notice_is_dropped_and_its_opposite_kept(caplog):
    """Ray's own functions print the two notices: the one that token authentication is on (Ray's default for a new
    local instance: nothing to do) is dropped, the warning that a cluster runs without it passes."""
    from ray._private.authentication import authentication_token_setup as setup

    from schedrl.training.quiet import install_filters

    install_filters()
    with caplog.at_level(logging.WARNING):
        setup._warn_token_auth_enabled()
        setup._warn_token_auth_disabled()
    messages = [r.getMessage() for r in caplog.records]
    assert not any("Token authentication is enabled" in m for m in messages), messages
    assert any("Token authentication is disabled" in m for m in messages), messages


def test_the_api_stack_notice_is_dropped_and_the_loggers_other_records_kept(caplog):
    from schedrl.training.quiet import install_filters

    install_filters()
    name = "ray.rllib.algorithms.algorithm_config"
    logger = logging.getLogger(name)
    # caplog's handler on the logger itself: once Ray has configured its loggers (earlier tests in the session),
    # they no longer propagate to the root logger where caplog listens by default
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING, logger=name):
            logger.warning("You are running PPO on the new API stack! This is the new default behavior for this "
                           "algorithm.")
            logger.warning("`lr_schedule` is deprecated")
    finally:
        logger.removeHandler(caplog.handler)
    messages = {r.getMessage() for r in caplog.records if r.name == name}  # a record may reach caplog's handler twice
    assert messages == {"`lr_schedule` is deprecated"}
