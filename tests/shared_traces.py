"""Where the real traces live for tests: ../shared/traces beside the repository, or any directory of
`$SCHEDRL_TRACE_PATH`, where users' commands find them too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schedrl import paths

REPO = Path(__file__).resolve().parents[1]
# `$SCHEDRL_SHARED_DIR` stands in for ../shared (tests/test_fresh_clone.py points it nowhere to run
# the trace-dependent tests as a user's plain clone would)
SHARED = paths.env_path(paths.SHARED_DIR) or REPO.parent / "shared"
SHARED_TRACES = SHARED / "traces"
SHARED_DATA = SHARED / "data"


def shared_trace(filename: str, root: Path = SHARED_TRACES) -> Path:
    """Path of a real trace in ../shared/traces (or `root`, e.g. SHARED_DATA), else in a directory of
    `$SCHEDRL_TRACE_PATH` (as `schedrl` commands look there); skip when absent, but fail under CI (it must be
    there)."""
    path = root / filename
    if path.exists():
        return path
    found = next((d / filename for d in paths.env_paths(paths.TRACE_PATH) if (d / filename).is_file()), None)
    if found is not None:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail(f"{path} is missing, and CI=true requires ../shared/traces beside the repository")
    pytest.skip(f"{filename} not found in {root} or on $SCHEDRL_TRACE_PATH: real traces live in "
                f"{root.parent.name}/{root.name} beside the repository (absent in a plain clone), or in a directory "
                "of $SCHEDRL_TRACE_PATH")
