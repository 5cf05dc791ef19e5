"""The test tiers' rules (tests/tiers.py, CONTRIBUTING.md), checked on small generated suites run by pytest in this
process (pytester): where a test lands, the fast tier's guard against processes, and `-m` naming no marker."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

INI = """[pytest]
markers =
    integration: starts processes
    slow: long
    cluster: a Ray cluster
    slurm: a Slurm
"""

SUITE = {
    "conftest.py": """
import pytest

@pytest.fixture(scope="session")
def ray_session():
    yield

@pytest.fixture
def uses_ray(ray_session):
    yield
""",
    "test_mixed.py": """
import subprocess, sys
import pytest

def test_pure():
    assert 1 + 1 == 2

def test_fixture_reaches_ray(uses_ray):
    pass

@pytest.mark.slow
def test_slow_is_integration():
    pass

@pytest.mark.integration
def test_marked_may_start_a_process():
    assert subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True).returncode == 0

def test_unmarked_starts_a_process():
    try:  # the guard's failure is not an Exception: code under test cannot swallow it
        subprocess.run([sys.executable, "-c", "print(1)"])
    except Exception:
        pass
""",
    "integration/test_in_folder.py": "def test_in_the_integration_folder():\n    pass\n",
}


@pytest.fixture
def suite(pytester):
    pytester.makefile(".ini", pytest=INI)
    for name, text in SUITE.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pytester


def selected(result) -> set[str]:
    return {r.nodeid.split("::")[-1] for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "call"}


def test_fixtures_folders_and_markers_put_tests_in_the_integration_tier(suite):
    result = suite.runpytest_inprocess("-p", "tiers", "-m", "integration and not slow", "-p", "no:cacheprovider")
    assert selected(result) == {"test_fixture_reaches_ray", "test_marked_may_start_a_process",
                                "test_in_the_integration_folder"}
    result.assert_outcomes(passed=3)


def test_the_fast_tier_fails_a_test_that_starts_a_process_and_says_to_mark_it(suite):
    result = suite.runpytest_inprocess("-p", "tiers", "-m", "not integration", "-p", "no:cacheprovider")
    assert selected(result) == {"test_pure", "test_unmarked_starts_a_process"}
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_unmarked_starts_a_process is in the fast tier but started a subprocess*"
                                 "mark it @pytest.mark.integration*"])


@pytest.mark.parametrize(("expression", "unknown"), [("integraton", "integraton"), ("not integraton", "integraton"),
                                                    ("slow or fats", "fats")])
def test_a_marker_expression_naming_no_known_marker_is_a_usage_error(suite, expression, unknown):
    result = suite.runpytest_inprocess("-p", "tiers", "-m", expression, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # not an empty run that passes
    result.stderr.fnmatch_lines([f"*-m '{expression}' names unknown marker(s) {unknown}; known: cluster, *integration, "
                                 "slow, slurm*"])


def test_a_marker_expression_of_known_markers_runs(suite):
    result = suite.runpytest_inprocess("-p", "tiers", "-m", "slow or (cluster and not slurm)", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_an_unknown_marker_on_a_test_is_an_error(pytester):
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile("import pytest\n\n@pytest.mark.integraton\ndef test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "tiers", "--strict-markers", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*'integraton' not found in `markers` configuration option*"])
