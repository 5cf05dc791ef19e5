"""Where the inspector may reject (`mask.RejectMask`, issue 55): `reject_where="pays"` offers a rejection only where
another waiting job competes with the proposal; the env, the trained policy and the teacher's labels read the one
rule, and on a machine where no two jobs compete the policy is its base rule whatever its network says."""

from __future__ import annotations

import numpy as np
import pytest

import base_rule_cases
from base_rule_cases import OFFSET, block_then_burst, make_workload
from schedrl.agents.inspector.config import InspectorEnvConfig, make_base
from schedrl.agents.inspector.env import REJECT, InspectorEnv
from schedrl.agents.inspector.mask import RejectMask, rejection_can_pay
from schedrl.agents.inspector.observation import Normalisation, Observer
from schedrl.sim import DECIDE_PICK, Simulator, SimConfig


def at_first_decision(workload, base="fcfs") -> tuple[Simulator, int]:
    """The simulator at its first pick with at least two jobs queued (or the first pick), and the base's proposal."""
    sim = Simulator(workload, SimConfig())
    assert sim.advance() == DECIDE_PICK
    return sim, int(make_base(base).pick(sim))


def decision_at(workload, time: float, base="fcfs") -> tuple[Simulator, int]:
    """The simulator at the first pick at or after `time` (the base's own choices before it), and the proposal."""
    sim = Simulator(workload, SimConfig())
    rule = make_base(base)
    while True:
        assert sim.advance() == DECIDE_PICK
        j = int(rule.pick(sim))
        if sim.now >= time:
            return sim, j
        sim.pick(j)


def test_a_proposal_alone_in_the_queue_cannot_be_rejected_where_it_must_pay():
    sim, j = at_first_decision(block_then_burst())  # the whole-machine job, alone, the burst still to come
    assert j == 0 and sim.has_event
    assert not rejection_can_pay(sim, j)
    assert RejectMask(0.0, "any").allows(sim, j) and not RejectMask(0.0, "pays").allows(sim, j)


def test_a_job_that_fits_beside_the_proposal_is_no_reason_to_reject():
    # 10 processors, idle: job 0 (4 procs) and job 1 (6 procs) arrive together; both fit at once
    sim, j = at_first_decision(make_workload([OFFSET, OFFSET, OFFSET + 500], [100, 100, 10], [4, 6, 1], 10))
    assert j == 0 and len(sim.queue) == 2
    assert not rejection_can_pay(sim, j)


def test_a_job_the_proposal_would_crowd_out_now_is_a_reason():
    # job 1 (7 procs) fits in the 10 free processors, but not beside job 0's 4
    sim, j = at_first_decision(make_workload([OFFSET, OFFSET, OFFSET + 500], [100, 100, 10], [4, 7, 1], 10))
    assert j == 0 and rejection_can_pay(sim, j)


def test_a_running_job_that_ends_while_the_proposal_would_run_counts_by_its_estimate():
    # t0: job 0 (6 of 10 procs, requested 300 s) starts. t0+10: job 1 (3 procs) is proposed (FCFS) and job 2
    # (8 procs) waits; job 2 does not fit now (4 free) but would once job 0 ends (estimated t0+300), unless job 1 still
    # holds 3: with job 1 requesting 1,000 s it would, with job 1 requesting 100 s it would be gone by then
    def case(job1_request: float):
        w = make_workload([OFFSET, OFFSET + 10, OFFSET + 10], [300, 50, 100], [6, 3, 8], 10,
                          time_req=[300, job1_request, 100])
        return decision_at(w, OFFSET + 10)

    sim, j = case(1000.0)
    assert j == 1 and list(sim.running()) == [0] and rejection_can_pay(sim, j)
    sim, j = case(100.0)
    assert j == 1 and not rejection_can_pay(sim, j)


def test_a_proposal_that_does_not_fit_may_be_rejected_only_for_a_job_that_fits_now():
    # t0: job 0 (6 of 10 procs) starts; t0+10: job 1 (8 procs) is proposed and does not fit
    fitting = make_workload([OFFSET, OFFSET + 10, OFFSET + 10], [300, 50, 100], [6, 8, 2], 10)
    sim, j = decision_at(fitting, OFFSET + 10)
    assert j == 1 and rejection_can_pay(sim, j)  # job 2 (2 procs) could use the 4 free ones
    none_fits = make_workload([OFFSET, OFFSET + 10, OFFSET + 10], [300, 50, 100], [6, 8, 5], 10)
    sim, j = decision_at(none_fits, OFFSET + 10)
    assert j == 1 and not rejection_can_pay(sim, j)


def test_several_resources_must_all_fit():
    # processors fit two at once (2 + 2 of 10), memory does not (6 + 6 of 10): job 1 is crowded out
    w = make_workload([OFFSET, OFFSET, OFFSET + 500], [100, 100, 10], [2, 2, 1], 10)
    sim = Simulator(w.with_resources({"mem": np.array([6.0, 6.0, 1.0])}, {"mem": 10.0}), SimConfig())
    assert sim.advance() == DECIDE_PICK and sim.state.req.shape[1] == 2
    assert rejection_can_pay(sim, 0)
    sim = Simulator(w.with_resources({"mem": np.array([4.0, 6.0, 1.0])}, {"mem": 10.0}), SimConfig())
    assert sim.advance() == DECIDE_PICK
    assert not rejection_can_pay(sim, 0)


def test_the_env_policy_and_teacher_read_the_same_mask():
    """On block-then-burst under `pays` the env never offers the rejection, a network that always rejects runs the
    base's schedule, and the teacher labels nothing at the points the mask forbids."""
    from schedrl.agents.inspector.policy import InspectorPolicy
    from schedrl.agents.inspector.teacher import Demonstrations, label_window

    jobs = block_then_burst()
    env = base_rule_cases.env_on(InspectorEnv, jobs, base="f1", reject_where="pays")
    obs, _ = env.reset()
    assert list(obs["action_mask"]) == [1.0, 0.0]
    with pytest.raises(ValueError, match="not allowed"):
        env.step(REJECT)

    cfg = InspectorEnvConfig(trace="default", sequence_length=len(jobs), train_fraction=1.0,
                             norm={"time_scale": 10_000.0}, reject_where="pays")

    from test_inspector_teacher import constant_logits

    policy = InspectorPolicy(constant_logits(0.0, 10.0), cfg.to_dict())
    schedule = Simulator(jobs, cfg.sim_config()).run(policy)
    base = make_base("f1").run(Simulator(jobs, cfg.sim_config()))
    assert np.array_equal(schedule.start, base.start)
    # the burst's eight jobs fit beside one another: no point offers a rejection; the whole-machine job's does not
    assert policy.totals["inspections"] == 0 and policy.totals["masked"] >= 1

    observer = Observer(Normalisation.from_dict({"time_scale": 10_000.0}), False)
    demos = Demonstrations()
    label_window(jobs, cfg.sim_config(), "f1", "bsld", 1, observer, RejectMask.of(cfg), None, demos)
    assert len(demos) == 0
    demos_any = Demonstrations()
    label_window(jobs, cfg.sim_config(), "f1", "bsld", 1, observer, RejectMask(0.0, "any"), None, demos_any)
    assert len(demos_any) >= 1 and 1 in demos_any.labels


def test_a_mask_out_of_its_choices_is_refused():
    with pytest.raises(ValueError, match="reject_where must be one of any, pays"):
        InspectorEnvConfig(reject_where="sometimes")
    assert RejectMask.of({"starvation_wait": 60.0}) == RejectMask(60.0, "any")  # records before issue 55


def test_cheap_also_needs_the_next_event_soon_against_the_proposals_request():
    from schedrl.agents.inspector.mask import expected_delay, rejection_is_cheap

    # t0: job 0 (6 of 10 procs, requested 300 s) starts; t0+10: job 1 (3 procs) proposed, job 2 (8 procs) blocked by
    # it. The next completion is expected at t0+300 (290 s away); arrivals so far: gaps of 0 and 10 s (mean 5 s)
    def case(job1_request: float):
        w = make_workload([OFFSET, OFFSET + 10, OFFSET + 10], [300, 50, 100], [6, 3, 8], 10,
                          time_req=[300, job1_request, 100])
        return decision_at(w, OFFSET + 10)

    sim, j = case(1000.0)
    assert expected_delay(sim) == pytest.approx(5.0)
    assert rejection_is_cheap(sim, j) and RejectMask(0.0, "cheap").allows(sim, j)
    sim, j = case(40.0)  # 5 s is more than a tenth of 40 s (and job 1 would no longer block job 2)
    assert not rejection_is_cheap(sim, j) and not RejectMask(0.0, "cheap").allows(sim, j)
    # alone on an idle machine with no arrival seen before: nothing known to wait for soon
    sim, j = at_first_decision(block_then_burst())
    assert expected_delay(sim) == np.inf and not rejection_is_cheap(sim, j)


def test_the_queue_guard_forbids_every_rejection_while_a_waiting_job_has_waited_that_long():
    """The queue guard protects the jobs a policy keeps rejecting: job 0 (6 of 10 processors) runs from t0 to t0+5000,
    job 1 (8 processors) is rejected at t0, and at t0+2000, when job 2 arrives, it has waited 2000 s; the proposal
    (job 2, SJF's choice) has not waited at all."""
    from schedrl.agents.inspector.distill import guard_text
    from schedrl.agents.inspector.policy import InspectorPolicy
    from test_inspector_teacher import constant_logits

    w = make_workload([OFFSET, OFFSET, OFFSET + 2000, OFFSET + 9000], [5000, 100, 50, 10], [6, 8, 1, 1], 10)
    sim = Simulator(w, SimConfig())
    assert sim.advance() == DECIDE_PICK
    sim.pick(0)
    assert sim.advance() == DECIDE_PICK and list(sim.queue) == [1]
    sim.defer()
    assert sim.advance() == DECIDE_PICK and sim.now == OFFSET + 2000
    j = int(make_base("sjf").pick(sim))
    assert j == 2 and list(sim.queue) == [1, 2] and sim.has_event
    for seconds, allowed in ((0.0, True), (1999.0, False), (2000.0, False), (2001.0, True)):
        mask = RejectMask(0.0, "any", seconds)
        assert mask.allows(sim, j) is allowed and mask.queue_guarded(sim) is (not allowed)
    assert RejectMask.of({"queue_starvation_wait": 1800.0}) == RejectMask(0.0, "any", 1800.0)
    with pytest.raises(ValueError, match="queue_starvation_wait must be >= 0"):
        InspectorEnvConfig(queue_starvation_wait=-1.0)

    cfg = InspectorEnvConfig(trace="default", sequence_length=len(w), train_fraction=1.0,
                             norm={"time_scale": 10_000.0}, queue_starvation_wait=1800.0)
    policy = InspectorPolicy(constant_logits(0.0, 10.0), cfg.to_dict())  # a network that always rejects
    said = policy.explain(sim, j)
    assert said["decide"] == "accept" and said["by"] == "guard" and "queue guard (30 min)" in said["path"][0]
    assert not policy.defer(sim) and policy.totals["guarded"] == 1
    assert "nothing is rejected while a waiting job has waited 30 min" in guard_text(cfg.to_dict())
