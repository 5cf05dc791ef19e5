"""Fixtures for the RLlib algorithm tests.

``ray_session`` belongs in tests/conftest.py once more test packages need Ray; it lives here
until then. One local Ray instance serves the whole pytest session.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def ray_session():
    """A 2-CPU local Ray instance, started once per pytest session and shut down at its end."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
