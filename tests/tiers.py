"""Test tiers (CONTRIBUTING.md says the rule): the default `pytest` runs the fast tier; `pytest -m integration` runs
everything that starts Ray, Slurm, a subprocess, a training or a documented command. A test lands in the
integration tier when it is marked `integration` (or `slow`, `cluster`, `slurm`: all three are integration tests),
uses one of INTEGRATION_FIXTURES, or lives in one of INTEGRATION_DIRS. A fast-tier test that starts a process
anyway (Ray's `ray.init` does, through subprocess) fails with a message saying to mark it.

Used as the conftest's hooks (tests/conftest.py imports them) and as a plugin (`-p tiers`, tests/test_tiers.py).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest


INTEGRATION_MARKERS = ("integration", "slow", "cluster", "slurm")
INTEGRATION_FIXTURES = frozenset({"ray_session", "ray_cluster", "slurm", "slurm_cluster", "live_slurm"})
INTEGRATION_DIRS = ("integration",)
# names pytest itself accepts in a -m expression beside the registered markers
_BUILTIN_MARKERS = frozenset({"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings",
                              "tryfirst", "trylast", "no_cover", "xdist_group"})


def _is_integration(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(name) for name in INTEGRATION_MARKERS):
        return True
    if INTEGRATION_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    try:  # tests/integration/... (or integration/... where the tests are the root's own)
        parts = Path(str(item.path)).resolve().relative_to(item.config.rootpath.resolve()).parts
    except ValueError:
        return False
    parts = parts[1:] if parts[:1] == ("tests",) else parts
    return len(parts) > 1 and parts[0] in INTEGRATION_DIRS


# tests that share one instance run on one xdist worker (`--dist loadgroup`): the session's Ray (`ray_session`), the
# two-node cluster, the private Slurm. Two Ray instances on two cores would each starve the other.
XDIST_GROUPS = {"ray_session": "ray", "ray_cluster": "ray", "slurm": "slurm", "slurm_cluster": "slurm"}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: the marker must be on the item by then
def pytest_collection_modifyitems(config, items):
    groups: dict[pytest.Item, str] = {}
    for item in items:
        if _is_integration(item) and not item.get_closest_marker("integration"):
            item.add_marker(pytest.mark.integration)
        fixtures = set(getattr(item, "fixturenames", ()))
        group = next((g for f, g in XDIST_GROUPS.items() if f in fixtures), None)
        if group is None and item.get_closest_marker("slurm"):
            group = "slurm"
        if group is None and item.get_closest_marker("cluster"):
            group = "ray"
        if group:
            groups[item] = group
    # a module's other integration tests may reach its Ray fixture through `request.getfixturevalue`: keep the
    # whole module on the group's worker
    by_module = {item.module.__name__: g for item, g in groups.items() if getattr(item, "module", None)}
    for item in items:
        module = getattr(item, "module", None)
        group = groups.get(item) or (by_module.get(module.__name__) if module and item.get_closest_marker(
            "integration") else None)
        if group and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))


def _marker_names(config) -> set[str]:
    names = set(_BUILTIN_MARKERS)
    for line in config.getini("markers"):
        names.add(re.split(r"[:(]", line, maxsplit=1)[0].strip())
    return names


def pytest_configure(config):
    """`-m` naming no known marker is a usage error: pytest would silently deselect every test (`-m integraton`)."""
    expression = config.getoption("markexpr", default="") or ""
    # drop keyword arguments of parametrised markers (`-m "foo(x=1)"`), then the boolean words
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"\([^)]*\)", "", expression))) - {"and", "or", "not"}
    unknown = sorted(words - _marker_names(config))
    if unknown:
        raise pytest.UsageError(f"-m {expression!r} names unknown marker(s) {', '.join(unknown)}; known: "
                                f"{', '.join(sorted(_marker_names(config) - _BUILTIN_MARKERS))} (see CONTRIBUTING.md)")


class _TierGuard:
    """While a fast-tier test runs, starting a process fails it (and cannot be swallowed by `except Exception`)."""

    def __init__(self):
        self.item: pytest.Item | None = None
        self._execute_child = subprocess.Popen._execute_child
        self._system = os.system

    def _refuse(self, what: str):
        name = self.item.nodeid if self.item else "this test"
        pytest.fail(f"{name} is in the fast tier but {what}: mark it @pytest.mark.integration "
                    f"(tests that start Ray, Slurm, a subprocess or a training belong there; see CONTRIBUTING.md)",
                    pytrace=False)

    def install(self):
        guard = self

        def execute_child(popen, args, *rest, **kwargs):
            if guard.item is not None:
                shown = args if isinstance(args, str) else " ".join(map(str, args))[:120]
                guard._refuse(f"started a subprocess ({shown})")
            return guard._execute_child(popen, args, *rest, **kwargs)

        def system(command):
            if guard.item is not None:
                guard._refuse(f"ran os.system({command!r})")
            return guard._system(command)

        subprocess.Popen._execute_child = execute_child
        os.system = system


_GUARD = _TierGuard()


def pytest_sessionstart(session):
    _GUARD.install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    previous = _GUARD.item  # a test running pytest in-process (tests/test_tiers.py) gets its own guard back
    _GUARD.item = None if item.get_closest_marker("integration") else item
    try:
        yield
    finally:
        _GUARD.item = previous
