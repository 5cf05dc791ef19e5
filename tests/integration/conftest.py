"""The `ray_cluster` fixture: a private two-node Ray cluster, stopped process by process at the end."""

from __future__ import annotations

import subprocess

import pytest

from ray_nodes import LocalCluster


@pytest.fixture(scope="module")
def ray_cluster():
    """Head (1 CPU, `head_node`) + worker (2 CPUs, `worker_node`) started with `ray start`, auth disabled.

    Never the session's in-process Ray (`ray_session`): tests drive it through subprocesses with
    `cluster.popen(...)`, which sets `RAY_ADDRESS` and registers the process for teardown.
    """
    cluster = LocalCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        survivors = cluster.stop()
        sessions = set(cluster.roles)
        # an independent look with ps: nothing of ours may outlive the fixture
        ps = subprocess.run(["ps", "-e", "-o", "pid=,sid=,stat=,args="], capture_output=True, text=True).stdout
        left = [line for line in ps.splitlines()
                if int(line.split()[1]) in sessions and not line.split()[2].startswith("Z")]
        assert not survivors and not left, f"test cluster processes left running: {survivors} {left}"
