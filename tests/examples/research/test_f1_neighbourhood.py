"""`examples/research/f1_neighbourhood.py` (docs/experiments/rlscheduler.md, "What limits the gain over F1"): its
rules and its lookahead reduce to F1 where they must, and the hindsight lookahead never does worse than F1."""

from __future__ import annotations

import numpy as np
import pytest

from example_scripts import load_example

START, JOBS = 1000, 256  # the embedded default trace: present in a fresh clone


@pytest.fixture(scope="module")
def example():
    module = load_example("research/f1_neighbourhood")
    module._setup("default", "standard", "default")
    return module


def f1_value(example, start: int) -> float:
    from schedrl.heuristics import get_heuristic
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    sim = Simulator(sequence(example._CONTEXT["workload"], start, JOBS), example._CONTEXT["sim_config"])
    return summarize(get_heuristic("f1").run(sim)).value("bsld")


@pytest.mark.parametrize("start", [START, START + 5000])
def test_zero_perturbation_is_f1(example, start):
    assert example.run_rule((np.zeros(len(example.FEATURES)), start, JOBS)) == pytest.approx(f1_value(example, start))


def test_a_perturbation_changes_the_schedule(example):
    # a large weight on "fits now" turns F1 into "F1 among the jobs that fit": a different rule, a different value
    weights = np.zeros(len(example.FEATURES))
    weights[7] = -1e6
    assert example.run_rule((weights, START, JOBS)) != pytest.approx(f1_value(example, START))


@pytest.mark.parametrize("online", [False, True])
def test_lookahead_over_one_job_is_f1(example, online):
    assert example.run_lookahead((1, online, START, JOBS)) == pytest.approx(f1_value(example, START))


@pytest.mark.parametrize("start", [START, START + 5000])
def test_hindsight_lookahead_never_worse_than_f1(example, start):
    value = example.run_lookahead((3, False, start, JOBS))
    assert value <= f1_value(example, start) + 1e-9
    assert value < f1_value(example, start)  # and on these sequences strictly better: it does look ahead
