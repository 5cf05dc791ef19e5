"""`examples/new_heuristic.py`: the LXF rule picks the waiting job of largest expansion factor at every decision, and
`compare` scores it exactly as a direct simulation does, beside the compiled heuristics."""

from __future__ import annotations

import numpy as np
import pytest

from example_scripts import load_example

JOBS = 128


@pytest.fixture(scope="module")
def example():
    return load_example("new_heuristic")


class Recording:
    """LXF, checking at each decision that no waiting job has a larger expansion factor than the one it picks."""

    def __init__(self, rule):
        self.rule, self.decisions = rule, 0

    def pick(self, sim) -> int:
        j = self.rule.pick(sim)
        w = sim.workload
        factor = (sim.now - w.submit + w.time_req) / w.time_req
        queue = sim.queue
        assert j in queue and factor[j] == factor[queue].max()
        assert j == queue[np.flatnonzero(factor[queue] == factor[j])[0]]  # ties to the earlier job
        self.decisions += 1
        return j


def test_lxf_picks_the_largest_expansion_factor_and_compare_scores_it_as_a_simulation(example):
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.sampling import sequence

    workload = load_trace("default")
    result = example.main(["--sequences", "2", "--jobs", str(JOBS), "--backfill", "none"])
    assert result.policies == ["fcfs", "sjf", "f1", "LXF"]
    for start, value in zip(result.starts, result.values[("none", "LXF")]):
        recording = Recording(example.LargestExpansionFactor())
        schedule = Simulator(sequence(workload, start, JOBS)).run(recording)
        assert recording.decisions >= JOBS // 2
        assert summarize(schedule).value("bsld") == pytest.approx(value, rel=1e-12)
    # a rule of its own: neither FCFS nor SJF on these sequences
    assert result.values[("none", "LXF")] != result.values[("none", "fcfs")]
    assert result.values[("none", "LXF")] != result.values[("none", "sjf")]
