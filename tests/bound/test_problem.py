"""The offline problem of a window: durations and demands as the simulator makes them, replay through the metric
code, feasibility."""

from __future__ import annotations

import numpy as np
import pytest
from instances import make_workload, random_problem

from schedrl.bound.problem import infeasible, objective, replay, window_problem
from schedrl.heuristics import get_heuristic
from schedrl.metrics import summarize
from schedrl.sim import SimConfig, Simulator


def test_durations_follow_the_kill_semantics_and_demands_the_allocation():
    wl = make_workload([0, 5, 9], [100, 30, 7], [50, 40, 7], [3, 8, 1], 8)
    killed = window_problem(wl, SimConfig(), "bsld")
    assert killed.duration.tolist() == [50, 30, 7] and killed.killed.tolist() == [True, False, False]
    kept = window_problem(wl, SimConfig(kill_at_limit=False), "bsld")
    assert kept.duration.tolist() == [100, 30, 7] and not kept.killed.any()
    assert killed.demand[:, 0].tolist() == [3, 8, 1] and killed.capacity.tolist() == [8]
    assert killed.slack.tolist() == [0, 0, 3]  # a 7 s job waits 3 s before its bsld passes 1


@pytest.mark.parametrize("metric", ["bsld", "wait"])
@pytest.mark.parametrize("config", [SimConfig(), SimConfig(backfill="easy"), SimConfig.rlscheduler()])
def test_a_simulated_schedule_replays_to_the_simulators_metric(metric, config):
    rng = np.random.default_rng(3)
    for _ in range(5):
        p = random_problem(rng, 12, metric, capacity=6, config=config)
        for rule in ("fcfs", "sjf", "f1"):
            sched = get_heuristic(rule, 0).run(Simulator(p.workload, config)) if hasattr(
                get_heuristic(rule, 0), "run") else Simulator(p.workload, config).run(get_heuristic(rule, 0))
            start = np.round(sched.start - p.origin).astype(np.int64)
            assert infeasible(p, start) is None
            assert replay(p, start) == pytest.approx(summarize(sched).value(metric), rel=1e-12)
            assert objective(p, start) == pytest.approx(replay(p, start), rel=1e-12)


def test_infeasible_schedules_are_named():
    wl = make_workload([0, 0, 10], [20, 20, 5], [20, 20, 5], [3, 2, 1], 4)
    p = window_problem(wl, SimConfig(), "wait")
    assert infeasible(p, np.array([0, 20, 10])) is None
    assert infeasible(p, np.array([0, 20, 9])) == "job 3 (position 2) starts at 9 before its arrival at 10"
    assert infeasible(p, np.array([0, 0, 10])) == "procs in use reaches 5 of 4 at time 0"
    assert infeasible(p, np.array([0, 19, 40])) == "procs in use reaches 5 of 4 at time 19"
    assert infeasible(p, np.array([0, 20, 40])) is None  # one ends as the other starts
    with pytest.raises(ValueError, match="not a feasible schedule: job 3"):
        replay(p, np.array([0, 20, 9]))


def test_bad_windows_are_one_line_errors():
    with pytest.raises(ValueError, match=r"job 2 \(position 1\) requests 9 procs, more than the machine's 8"):
        window_problem(make_workload([0, 1], [5, 5], [5, 5], [1, 9], 8), SimConfig(), "bsld")
    with pytest.raises(ValueError, match="solves bsld, wait; the metric is 'slowdown'"):
        window_problem(make_workload([0, 1], [5, 5], [5, 5], [1, 1], 8), SimConfig(), "slowdown")
    wl = make_workload([0, 1], [5, 5], [5, 5], [1, 1], 8).with_resources({"bb": np.array([1.0, 1 / 3])},
                                                                         capacity={"bb": 4.0})
    with pytest.raises(ValueError, match=r"job 2 \(position 1\) requests 0.3333333333333333 of bb: no decimal unit "
                                         r"down to 1e-6 makes every bb request whole"):
        window_problem(wl, SimConfig(), "bsld")
    # the request whole in hundredths is not the cause: the one whole in no decimal unit is named, printed in full
    # (MRSch's generated burst buffer: 1720.3157028120365 GB, once printed as 1720.32)
    wl = make_workload([0, 1], [5, 5], [5, 5], [1, 1], 8).with_resources({"bb": np.array([1720.32, 1 / 3])},
                                                                         capacity={"bb": 4000.0})
    with pytest.raises(ValueError, match=r"job 2 \(position 1\) requests 0.3333333333333333 of bb"):
        window_problem(wl, SimConfig(), "bsld")
    wl = make_workload([0, 1], [5, 5], [5, 5], [1, 1], 8).with_resources({"bb": np.array([1720.32, 2.5])},
                                                                         capacity={"bb": 4000.0})
    assert window_problem(wl, SimConfig(), "bsld").demand[:, 1].tolist() == [172032, 250]
