"""Shared test fixtures: the real traces, an isolated parse cache, one Ray instance per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shared_traces import REPO, SHARED_DATA, SHARED_TRACES, shared_trace  # noqa: F401  (re-exported for fixtures)
# the test tiers' hooks (tests/tiers.py; CONTRIBUTING.md): registered because they are names of this conftest
from tiers import (  # noqa: F401
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_protocol,
    pytest_sessionstart,
)

# parsed-trace cache inside the repo's (git-ignored) pytest cache, never in the user's home
os.environ.setdefault("SCHEDRL_CACHE_DIR", str(REPO / ".pytest_cache" / "schedrl"))
# catalog names such as `lublin_256` resolve to ../shared/traces during tests, and `theta-cqgym`
# (file theta-cqgym/train.swf.gz) to ../shared/data
# (after the user's own $SCHEDRL_TRACE_PATH entries, which tests read as users' commands do: shared_traces.py)
_given = [d for d in os.environ.get("SCHEDRL_TRACE_PATH", "").split(os.pathsep) if d]
_shared = [str(d) for d in (SHARED_TRACES, SHARED_DATA) if d.is_dir() and str(d) not in _given]
if _shared:
    os.environ["SCHEDRL_TRACE_PATH"] = os.pathsep.join(_given + _shared)


@pytest.fixture
def lublin_256() -> Path:
    """RLScheduler's Lublin-1 trace (10,000 jobs, 256 processors)."""
    return shared_trace("lublin_256.swf.gz")


@pytest.fixture(scope="session")
def ray_session():
    """One 2-CPU local Ray instance for the whole pytest session (RLlib tests), shut down at its end."""
    import ray

    if ray.is_initialized():
        yield
        return
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
