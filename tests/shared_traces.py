"""Where the real traces live for tests: ../shared/traces beside the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_TRACES = REPO.parent / "shared" / "traces"


def shared_trace(filename: str) -> Path:
    """Path of a real trace in ../shared/traces; skip when absent, but fail under CI (it must be there)."""
    path = SHARED_TRACES / filename
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing, and CI=true requires ../shared/traces beside the repository")
        pytest.skip(f"{path} not found: real traces live in ../shared/traces (absent in a plain clone)")
    return path
