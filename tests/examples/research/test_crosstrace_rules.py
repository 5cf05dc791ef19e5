"""`examples/research/crosstrace_rules.py` (docs/experiments/rlscheduler.md, "Cross-trace generalisation"): the
corners of its rule simplex schedule exactly as the heuristics do, and a mix is a rule of its own."""

from __future__ import annotations

import pytest

from example_scripts import load_example

START, JOBS = 1000, 256  # the embedded default trace: present in a fresh clone


@pytest.fixture(scope="module")
def example():
    return load_example("research/crosstrace_rules")


@pytest.fixture(scope="module")
def heuristics(example):
    return {start: example.heuristic_values("default", [start], JOBS) for start in (START, START + 5000)}


@pytest.mark.parametrize("start", [START, START + 5000])
@pytest.mark.parametrize("corner", ["f1", "sjf", "unicep"])
def test_corners_are_the_heuristics(example, heuristics, start, corner):
    weights = tuple(float(name == corner) for name in example.MIXED)
    assert example.run_mix(("default", weights, start, JOBS)) == pytest.approx(heuristics[start][corner], rel=1e-12)


def test_a_mix_is_none_of_its_corners(example, heuristics):
    value = example.run_mix(("default", (0.5, 0.5, 0.0), START, JOBS))
    assert all(value != pytest.approx(heuristics[START][h]) for h in example.MIXED)
