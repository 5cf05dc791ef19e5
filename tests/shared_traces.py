"""Where the real traces live for tests: ../shared/traces beside the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_TRACES = REPO.parent / "shared" / "traces"
SHARED_DATA = REPO.parent / "shared" / "data"


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
