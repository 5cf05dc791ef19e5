"""`Simulator.run`'s policy protocol: `pick` required, `backfill` and `kill` optional; and what the
simulator refuses instead of leaving jobs unfinished (issue 9 item 1)."""

from __future__ import annotations

import numpy as np
import pytest

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


class ShortestFirst:
    """Picks the shortest queued job (a plain Python policy: no compiled fast path)."""

    def pick(self, sim: Simulator) -> int:
        window = sim.window
        return int(window[np.argmin(sim.state.run[window])])


class KillLongJobs(ShortestFirst):
    """Kills a running job longer than `limit` seconds, once per job, when another job waits."""

    def __init__(self, limit: float):
        self.limit = limit
        self.asked = 0
        self.killed: list[int] = []

    def kill(self, sim: Simulator) -> int | None:
        self.asked += 1
        long = [j for j in sim.running() if sim.state.run[j] > self.limit and j not in self.killed]
        if long and len(sim.queue):
            self.killed.append(int(long[0]))
            return int(long[0])
        return None


class NeverKill(ShortestFirst):
    def kill(self, sim: Simulator) -> None:
        return None


def test_a_policy_kills_a_long_job_and_it_is_requeued():
    # 4 processors. t=0: job 1 (4 procs, 1000 s) starts. t=5: job 2 (4 procs, 10 s) arrives; the
    # policy kills job 1 (5 s x 4 procs lost) and picks job 2, which runs 5-15; job 1 restarts at 15.
    wl = make_workload([0, 5], [1000, 10], [4, 4], 4)
    policy = KillLongJobs(limit=500)
    schedule = Simulator(wl).run(policy)
    assert policy.killed == [0]
    assert schedule.start.tolist() == [15.0, 5.0] and schedule.end.tolist() == [1015.0, 15.0]
    assert schedule.requeues.tolist() == [1, 0] and schedule.wasted.tolist() == [20.0, 0.0]
    m = summarize(schedule)
    assert (m.requeued, m.killed, m.max_wait) == (1, 0, 15.0)
    # asked before every pick: t=0 (job 1), t=5 (job 2), t=5 again (job 1, held until 15)
    assert policy.asked == 3


@pytest.mark.parametrize("config", [SimConfig(), SimConfig(backfill="easy"),
                                    SimConfig(discipline="list", backfill="conservative", window=8)],
                         ids=["pick-and-wait", "easy", "list-conservative"])
def test_a_policy_without_kill_or_never_killing_schedules_exactly_as_before(config):
    wl = sequence(generate_lublin(300, 64, seed=5), 0, 300)
    without = Simulator(wl, config).run(ShortestFirst())
    never = Simulator(wl, config).run(NeverKill())
    # the same pick rule driven by hand, decision by decision, as before the kill hook existed
    sim = Simulator(wl, config)
    policy = ShortestFirst()
    while (code := sim.advance()) != FINISHED:
        if code == DECIDE_PICK:
            sim.pick(policy.pick(sim))
        else:
            sim.backfill(int(sim.candidates[0]))
    by_hand = sim.schedule()
    for schedule in (never, by_hand):
        np.testing.assert_array_equal(schedule.start, without.start)
        np.testing.assert_array_equal(schedule.end, without.end)
        np.testing.assert_array_equal(schedule.mode, without.mode)
    assert without.requeues.sum() == 0


def test_a_kill_of_a_job_that_is_not_running_is_refused():
    class KillsNonsense(ShortestFirst):
        def kill(self, sim):
            return 99

    with pytest.raises(ValueError, match="job 99 is not running"):
        Simulator(make_workload([0, 5], [100, 10], [1, 1], 2)).run(KillsNonsense())


def test_negative_submit_times_are_refused_with_the_cleaning_rule_to_use():
    # issue 9 item 1: -1 marks "not ended" in the schedule, so a job ending before time 0 looked unfinished
    wl = make_workload([-1000, 0], [100, 10], [1, 1], 2)
    with pytest.raises(ValueError, match=r"job 1 has a negative submit time \(-1000\).*negative_submit"):
        Simulator(wl)


def test_an_unfinished_schedule_names_how_many_jobs_and_the_first():
    sim = Simulator(make_workload([0, 0, 50], [10, 10, 10], [1, 1, 1], 1))
    sim.advance()
    with pytest.raises(ValueError, match=r"not finished: 3 of 3 jobs have not completed \(first: job 1 at position 0\)"):
        summarize(sim.schedule())
    sim.pick(0)
    sim.advance()  # job 1 running, with an end time already set: still not complete
    with pytest.raises(ValueError, match=r"not finished: 3 of 3 jobs"):
        summarize(sim.schedule())
