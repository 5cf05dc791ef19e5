"""A user's fresh clone has no ../shared beside it: the trace-dependent tests must skip there, not fail.

Runs the CLI, catalog, sweep and discrete-time-cluster tests in a child pytest with ../shared hidden
(`SCHEDRL_SHARED_DIR` pointing at an empty directory, no `SCHEDRL_TRACE_PATH`, `CI` unset), as
`git clone` + the README's test command would on a laptop. Under CI the same tests run with the traces.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODULES = ["tests/cli/test_tune_cli.py", "tests/test_readme_usage.py", "tests/cli/test_traces_cli.py",
           "tests/cli/test_simulate_compare_cli.py", "tests/workload/test_catalog.py", "tests/training/test_sweep.py",
           "tests/dtsim", "tests/scenarios", "tests/eval", "tests/training/test_sweep_scenario.py"]


def test_trace_dependent_tests_skip_cleanly_without_shared(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "SCHEDRL_TRACE_PATH", "PYTEST_ADDOPTS")}
    env.update(SCHEDRL_SHARED_DIR=str(tmp_path / "no-shared"), SCHEDRL_CACHE_DIR=str(tmp_path / "cache"),
               RAY_BACKEND_LOG_LEVEL="fatal")
    # the project's addopts (-q, not slow) are replaced so that the summary line is printed whatever the caller's -q
    proc = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-m", "not slow", "-q", "-rs",
                           "-p", "no:cacheprovider", "-k", "not tiny_sweep", *MODULES],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1500)
    summary = next((line for line in reversed(proc.stdout.splitlines()) if re.search(r"\d+ (passed|failed)", line)),
                   proc.stdout[-2000:] + proc.stderr[-2000:])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    skipped = re.search(r"(\d+) skipped", summary)
    assert skipped and int(skipped.group(1)) > 0, f"nothing skipped without ../shared: {summary}"
    assert re.search(r"(\d+) passed", summary), summary
