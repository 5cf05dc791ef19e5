"""Where the real traces live for tests: ../shared/traces beside the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# `$SCHEDRL_SHARED_DIR` stands in for ../shared (tests/test_fresh_clone.py points it nowhere to run
# the trace-dependent tests as a user's plain clone would)
SHARED = Path(os.environ.get("SCHEDRL_SHARED_DIR") or REPO.parent / "shared")
SHARED_TRACES = SHARED / "traces"
SHARED_DATA = SHARED / "data"


def shared_trace(filename: str, root: Path = SHARED_TRACES) -> Path:
    """Path of a real trace in ../shared/traces (or `root`, e.g. SHARED_DATA); skip when absent, but fail
    under CI (it must be there)."""
    path = root / filename
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing, and CI=true requires ../shared/traces beside the repository")
        pytest.skip(f"{path} not found: real traces live in {root.parent.name}/{root.name} beside the repository "
                    f"(absent in a plain clone)")
    return path
