"""Where RLSchert's VASP job file lives for tests: ../shared/data beside the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schedrl.dtsim.jobs import VASP_FILENAME, shared_data_dir

SHARED_DATA = shared_data_dir()


def shared_data(filename: str = VASP_FILENAME) -> Path:
    """Path of a file in ../shared/data; skip when absent, but fail under CI (it must be there)."""
    path = SHARED_DATA / filename
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing, and CI=true requires ../shared/data beside the repository")
        pytest.skip(f"{path} not found: RLSchert's job data lives in ../shared/data (absent in a plain clone)")
    return path
