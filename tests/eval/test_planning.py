"""The online planning baseline (`schedrl.eval.planning`): its model, its decisions, its spec and its errors."""

from __future__ import annotations

import numpy as np
import pytest

from base_rule_cases import OFFSET, block_then_burst, make_workload
from schedrl.eval.hindsight import HindsightInspector
from schedrl.eval.planning import PlanningInspector, parse_spec
from schedrl.eval.policies import resolve_policy
from schedrl.heuristics import get_heuristic
from schedrl.sim import Simulator
from schedrl.sim.config import SimConfig


def random_workload(seed: int, n: int = 60, procs: int = 16):
    rng = np.random.default_rng(seed)
    submit = OFFSET + np.cumsum(rng.exponential(300.0, n))
    run = rng.integers(30, 5000, n)
    return make_workload(submit, run, rng.integers(1, procs + 1, n), procs, name=f"random-{seed}")


def test_the_known_world_alone_cannot_make_a_static_rule_reject():
    """Without arrivals, F1 proposes the same job after any completion: a rejection only delays it."""
    policy = PlanningInspector("f1", arrivals="none", guard=0)
    schedule = Simulator(block_then_burst(), SimConfig()).run(policy)
    base = get_heuristic("f1").run(Simulator(block_then_burst(), SimConfig()))
    assert policy.changed == 0 and policy.inspections > 0
    np.testing.assert_array_equal(schedule.start, base.start)


def test_with_the_burst_in_its_model_the_planner_rejects_the_blocking_job():
    policy = PlanningInspector("f1", arrivals="oracle", runtime="oracle", horizon=100, samples=1, guard=0,
                               count="all")
    schedule = Simulator(block_then_burst(), SimConfig()).run(policy)
    assert policy.changed >= 1
    assert schedule.start[0] > schedule.start[1:].max() - 1.0  # the whole-machine job ran after the burst
    # counting only the jobs known at the decision (the default), the burst competes but is not counted: accept
    known = PlanningInspector("f1", arrivals="oracle", runtime="oracle", horizon=100, samples=1, guard=0)
    Simulator(block_then_burst(), SimConfig()).run(known)
    assert known.changed == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_oracle_model_makes_the_hindsight_decisions(seed):
    """With the true future in its model (a diagnostic, not an online scheduler), every job in it and every job
    counted, the planner's rollouts are the hindsight inspector's: the same schedule."""
    wl = random_workload(seed)
    plan = PlanningInspector("f1", arrivals="oracle", runtime="oracle", horizon=10_000, max_queue=10_000, samples=1,
                             guard=0, count="all")
    hind = HindsightInspector("f1", "bsld")
    a = Simulator(wl, SimConfig()).run(plan)
    b = Simulator(wl, SimConfig()).run(hind)
    np.testing.assert_array_equal(a.start, b.start)
    assert plan.changed == hind.changed


def test_the_model_holds_only_what_is_known_now():
    """The model at a decision: the queued and running jobs and sampled arrivals from the past, no future job."""
    wl = random_workload(3, n=80)
    sim = Simulator(wl, SimConfig())
    base = get_heuristic("f1")
    for _ in range(40):
        sim.advance()
        sim.pick(base.pick(sim))
    assert sim.advance() == 1
    policy = PlanningInspector("f1", guard=0, samples=2, horizon=8)
    policy._reset(sim)
    j = int(base.pick(sim))
    future = policy._future(sim, 0.5)
    arrived = int(sim.state.iv[2])
    for f_submit, f_run, f_est, f_req, f_jobs in future:
        assert (f_jobs < arrived).all() and (f_submit > sim.now).all() and len(f_jobs) == 8
        state, k, counted, procs = policy._model(sim, j, (f_submit, f_run, f_est, f_req, f_jobs), 0.5)
        n_known = len(sim.queue) + len(sim.running())
        assert len(state.submit) == n_known + 8 and state.status[k] == 1
        queued = state.status[:n_known] == 1
        np.testing.assert_allclose(state.run[:n_known][queued], 0.5 * state.est[:n_known][queued])
        np.testing.assert_array_equal(np.sort(state.submit[:n_known][queued]), np.sort(sim.state.submit[sim.queue]))
        assert not counted[n_known:].any()  # count=known: the sampled jobs compete but are not counted
    values = policy.option_values(sim, j)
    assert values.shape == (2,) and np.isfinite(values).all()


def test_the_guard_accepts_without_planning():
    wl = random_workload(4, n=40, procs=4)
    policy = PlanningInspector("f1", guard=1.0)
    Simulator(wl, SimConfig()).run(policy)
    assert policy.guarded > 0


def test_the_spec_names_every_option_and_refuses_bad_ones():
    assert parse_spec("plan:sjf:depth=3:samples=2:arrivals=none:guard=0") == {
        "base": "sjf", "depth": 3, "samples": 2, "arrivals": "none", "guard": 0.0}
    p = resolve_policy("plan:f1:samples=2")
    assert isinstance(p, PlanningInspector) and p.samples == 2 and p.name == "plan:f1:samples=2"
    with pytest.raises(ValueError, match="depth must be between 1 and 16"):
        resolve_policy("plan:f1:depth=0")
    with pytest.raises(ValueError, match="not key=value"):
        parse_spec("plan:f1:nosuch=1")
    with pytest.raises(ValueError, match="name the base"):
        parse_spec("plan:")
    with pytest.raises(ValueError, match="unknown base"):
        resolve_policy("plan:nosuch")
    assert parse_spec("plan:tuned:/x/rule.json:depth=2") == {"base": "tuned:/x/rule.json", "depth": 2}
    with pytest.raises(ValueError, match="per-job metric"):
        PlanningInspector("f1", metric="util")


def test_compare_names_a_bad_planning_depth_in_one_error_line(capsys):
    from schedrl.cli.main import main

    assert main(["compare", "--trace", "default", "--policies", "plan:f1:depth=0", "--starts", "0",
                 "--jobs", "64"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("schedrl compare: error:") and "depth must be between 1 and 16" in err[0]
