"""Shared test fixtures: where the real traces live, and an isolated parse cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_TRACES = REPO.parent / "shared" / "traces"

# parsed-trace cache inside the repo's (git-ignored) pytest cache, never in the user's home
os.environ.setdefault("SCHEDRL_CACHE_DIR", str(REPO / ".pytest_cache" / "schedrl"))


def shared_trace(filename: str) -> Path:
    """Path of a real trace in ../shared/traces; skip when absent, but fail under CI (it must be there)."""
    path = SHARED_TRACES / filename
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing, and CI=true requires ../shared/traces beside the repository")
        pytest.skip(f"{path} not found: real traces live in ../shared/traces (absent in a plain clone)")
    return path


@pytest.fixture
def lublin_256() -> Path:
    """RLScheduler's Lublin-1 trace (10,000 jobs, 256 processors)."""
    return shared_trace("lublin_256.swf.gz")
