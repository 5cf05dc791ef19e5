"""`Simulator.defer` and the policy's optional `defer` hook: start nothing now, decide again at the next event
(the inspector agent's rejection, issue 37). Existing behaviour is unchanged for policies without the hook."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.heuristics import get_heuristic
from schedrl.metrics import summarize
from schedrl.sim import DECIDE_PICK, FINISHED, SimConfig, Simulator
from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES
from schedrl.workload.lublin import generate_lublin
from schedrl.workload.sampling import sequence


def make_workload(submit, run, procs, max_procs) -> Workload:
    n = len(submit)
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=submit, run=run, procs_req=procs, procs_alloc=procs,
                   time_req=run, status=np.ones(n))
    return Workload(columns, max_procs=max_procs, max_nodes=max_procs)


CONFIGS = [SimConfig(), SimConfig(backfill="easy"), SimConfig.preset("rlscheduler"),
           SimConfig(discipline="list", window=3, backfill="easy")]


@pytest.mark.parametrize("config", CONFIGS, ids=["paw", "paw-easy", "rlscheduler", "list-easy"])
def test_defer_moves_to_the_next_arrival_then_the_next_completion(config):
    # 4 procs. t=0: job 0 (2 procs, 100 s); t=30: job 1 (2 procs, 10 s); t=50: job 2 (4 procs, 10 s)
    sim = Simulator(make_workload([0, 30, 50], [100, 10, 10], [2, 2, 4], 4), config)
    assert sim.advance() == DECIDE_PICK and sim.now == 0 and list(sim.queue) == [0]
    sim.defer()  # nothing runs: the next event is job 1's arrival
    assert sim.now == 30 and list(sim.queue) == [0, 1] and sim.state.start[0] == -1
    assert sim.advance() == DECIDE_PICK and sim.now == 30
    sim.pick(0)  # job 0 runs 30-130
    assert sim.advance() == DECIDE_PICK and list(sim.queue) == [1]
    sim.defer()  # the next event is job 2's arrival at 50
    assert sim.now == 50 and list(sim.queue) == [1, 2]
    assert sim.advance() == DECIDE_PICK
    sim.defer()  # no arrival left: job 0's completion at 130
    assert sim.now == 130 and list(sim.queue) == [1, 2] and len(sim.running()) == 0
    assert sim.has_event is False
    with pytest.raises(ValueError, match="no job is running and none will arrive"):
        sim.defer()
    assert sim.now == 130  # a refused defer changes nothing
    sim.pick(2)
    assert sim.advance() == DECIDE_PICK
    assert sim.has_event is True  # job 2 runs
    sim.pick(1)
    while sim.advance() != FINISHED:
        sim.pick(int(sim.queue[0]))
    s = sim.schedule()
    assert list(s.start) == [30, 140, 130]


def test_defer_is_refused_while_a_job_is_held():
    sim = Simulator(make_workload([0, 1], [100, 10], [4, 4], 4))
    assert sim.advance() == DECIDE_PICK
    sim.pick(0)
    assert sim.advance() == DECIDE_PICK  # job 1 arrived; job 0 runs
    sim.pick(1)  # does not fit: held
    with pytest.raises(ValueError, match="no job held or reserved"):
        sim.defer()


class Deferring:
    """A heuristic that defers its first `times` decisions where it may, and counts them."""

    def __init__(self, name: str, times: int):
        self.base = get_heuristic(name)
        self.times = times
        self.deferred = 0

    def defer(self, sim) -> bool:
        if self.deferred < self.times and sim.has_event:
            self.deferred += 1
            return True
        return False

    def pick(self, sim) -> int:
        return self.base.pick(sim)


@pytest.mark.parametrize("config", CONFIGS, ids=["paw", "paw-easy", "rlscheduler", "list-easy"])
def test_a_policy_that_never_defers_schedules_as_the_heuristic(config):
    jobs = sequence(generate_lublin(400, seed=3), 0, 300)
    alone = get_heuristic("f1").run(Simulator(jobs, config))
    hooked = Simulator(jobs, config).run(Deferring("f1", 0))
    np.testing.assert_array_equal(alone.start, hooked.start)
    deferring = Deferring("f1", 50)
    later = Simulator(jobs, config).run(deferring)
    assert deferring.deferred == 50 and not len(later.unfinished)
    # deferring starts nothing earlier than the heuristic alone at its first decision, and changes the schedule
    assert not np.array_equal(alone.start, later.start)
    assert summarize(later).value("wait") != summarize(alone).value("wait")
