"""What a user meets on a fresh clone without ../shared: the README's test command (the fast tier) passes with the
trace tests skipped, and the README's main job runs (on a tiny budget).

The clone is a copy of the files git tracks or would track (the working tree as committed or about to be), in a
directory with no ../shared beside it, run with the current environment (reinstalling torch inside a test would pull
the wrong build) but importing the clone's own `schedrl` (PYTHONPATH), with `CI` and the trace path unset. This runs
once here, in the integration tier, instead of re-running modules of the fast tier with the traces hidden.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.integration
# the main job on a tiny budget (as tests/docs/test_doc_commands.py runs it): one 128-step iteration, a 1-sequence table
TINY_TRAINING = ["--iterations", "1", "--batch-size", "128", "--epochs", "1", "--sequence-length", "32",
                 "--eval-sequences", "1", "--eval-jobs", "64", "--filter-iterations", "1"]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The repository's tracked and untracked-but-not-ignored files copied under a fresh directory, and the
    environment a user's shell would have there."""
    root = tmp_path_factory.mktemp("fresh")
    dest = root / "schedrl"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the working tree is not there
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    assert not (root / "shared").exists()
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "SCHEDRL_TRACE_PATH", "SCHEDRL_SHARED_DIR", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER",
                        "PYTEST_XDIST_TESTRUNUID", "PYTEST_CURRENT_TEST")}
    env.update(PYTHONPATH=str(dest), SCHEDRL_CACHE_DIR=str(root / "cache"), RAY_BACKEND_LOG_LEVEL="fatal")
    return dest, env


def test_the_fast_tier_passes_on_a_fresh_clone_without_shared(clone):
    dest, env = clone
    # the README's test command after its set-up: `python -m pytest` (the project's addopts: the fast tier, -n 2)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider"], cwd=dest, env=env,
                          capture_output=True, text=True, timeout=1200)
    summary = next((line for line in reversed(proc.stdout.splitlines()) if re.search(r"\d+ (passed|failed)", line)),
                   proc.stdout[-2000:] + proc.stderr[-2000:])
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    skipped = re.search(r"(\d+) skipped", summary)
    assert skipped and int(skipped.group(1)) > 0, f"nothing skipped without ../shared: {summary}"
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) > 1000, summary
    # every skip says why, and the trace skips name the missing folder
    assert "shared" in proc.stdout, proc.stdout[-3000:]


def test_the_main_job_runs_on_a_fresh_clone(clone):
    dest, env = clone
    proc = subprocess.run([sys.executable, "-m", "schedrl", "train", "rlscheduler", "--scenario", "default", "--out",
                           "runs/default", *TINY_TRAINING], cwd=dest, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "iter    1" in proc.stdout and "RL vs" in proc.stdout, proc.stdout[-2000:]
    run = dest / "runs" / "default"
    assert (run / "evaluation.md").exists() and (run / "summary.json").exists()
