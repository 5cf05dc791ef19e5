"""The discrete-time cluster on hand-built cases: earliest fit, estimates, kill-and-requeue, masks, config."""

from __future__ import annotations

import numpy as np
import pytest
from builders import sim_of, table_of

from schedrl.dtsim import DTSim, DTSimConfig, JobSequence, synthetic_jobs

SMALL = dict(res_slot=10, time_horizon=10, job_len=10, simu_len=1, max_seq=100, estimates="prerun")
VOID = 5  # num_nw = 5
# (real, prerun, cores, re-estimates); 10 cores = 1 unit
A, B, C, D, E = (2, 4, 60, []), (3, 3, 60, []), (2, 2, 40, []), (2, 2, 50, []), (3, 3, 10, [])


def test_allocation_takes_the_earliest_fit_in_the_horizon():
    sim = sim_of([A, B, C, D, E], **SMALL)
    sim.step(0)  # A: 6 units x 4 steps at offset 0, starts now
    assert sim.free.tolist() == [4, 4, 4, 4, 10, 10, 10, 10, 10, 10]
    assert sim.start[0] == 0
    sim.step(0)  # B: 6 units x 3 steps fits first at offset 4 (a ready job)
    assert sim.free.tolist() == [4, 4, 4, 4, 4, 4, 4, 10, 10, 10]
    assert sim.start[1] == -1
    sim.step(0)  # C: 4 units x 2 steps fits beside A at offset 0
    assert sim.free.tolist() == [0, 0, 4, 4, 4, 4, 4, 10, 10, 10]
    assert sim.visible == [3, 4]
    assert sim.start_offsets() == [7, 2]  # D: 5 units x 2 steps; E: 1 unit x 3 steps
    sim.step(0)
    assert sim.free.tolist() == [0, 0, 4, 4, 4, 4, 4, 5, 5, 10]


def test_a_job_that_fits_nowhere_in_the_horizon_is_masked():
    sim = sim_of([(9, 9, 100, []), (5, 5, 10, [])], **SMALL)
    sim.step(0)  # the whole pool for 9 of the 10 steps
    assert sim.start_offsets() == [-1]  # 1 unit x 5 steps would need steps 9..13
    assert not sim.valid_actions()[0]
    with pytest.raises(ValueError, match="does not fit within the 10-step horizon"):
        sim.step(0)


def test_ready_jobs_move_earlier_when_a_job_ends_before_its_estimate():
    sim = sim_of([A, B, C, D, E], **SMALL)
    for _ in range(4):
        sim.step(0)  # A, C now; B at step 4, D at step 7
    sim.step(VOID)
    sim.step(VOID)  # A (real 2, estimated 4) and C end at step 2
    assert sim.finish[0] == 2 and sim.finish[2] == 2
    assert sim.start[1] == 2  # B starts at once instead of at step 4
    assert sim.free.tolist()[:3] == [4, 4, 4]
    assert sim.earliest_fit(5, 2) == 3 and sim._placed[3] == 2 + 3  # D re-placed after B


def test_the_canvas_follows_the_running_re_estimates():
    job = (6, 2, 10, [2, 5, 5, 5, 5])  # estimated 2 steps before it runs, 5 after two steps
    sim = sim_of([job], **{**SMALL, "estimates": "running"})
    sim.step(0)
    assert sim.free.tolist()[:3] == [9, 9, 10]
    sim.step(VOID)
    assert sim.estimate(0) == 2 and sim.remaining(0) == 1  # overrun: held one step at a time
    sim.step(VOID)
    assert sim.estimate(0) == 5 and sim.free.tolist()[:4] == [9, 9, 9, 10]
    for _ in range(4):
        sim.step(VOID)
    assert sim.finish[0] == 6 and sim.done  # true completion follows the real length
    prerun = sim_of([job], **SMALL)
    prerun.step(0)
    prerun.step(VOID)
    prerun.step(VOID)
    assert prerun.estimate(0) == 2  # DeepRM: the pre-run prediction only


def test_kill_returns_the_job_to_the_queue_and_it_restarts_from_zero():
    long_one = (5, 2, 10, [2, 12, 12, 12])
    sim = sim_of([long_one, E], **{**SMALL, "estimates": "running", "time_horizon": 20, "job_len": 20})
    sim.step(0)  # long_one starts at 0
    sim.step(VOID)
    sim.step(VOID)
    assert sim.elapsed[0] == 2 and sim.slots[0] == 0
    assert sim.valid_actions()[VOID + 1]
    sim.step(VOID + 1)  # kill running slot 0
    assert sim.queue == [1, 0] and sim.slots[0] == -1
    assert sim.start[0] == -1 and sim.elapsed[0] == 0 and sim.kills[0] == 1
    assert sim.len_param[0] == 12  # requeued with its latest re-estimate
    assert sim.free.tolist() == [10] * 20  # its allocation is gone
    sim.step(1)  # reallocate it at step 2
    assert sim.start[0] == 2
    while not sim.done:
        sim.step(0 if sim.visible else VOID)
    records = sim.records()
    assert records.finish[0] == 2 + 5  # a full run from zero after the restart
    assert records.kills.tolist() == [1, 0]


def test_killing_a_ready_job_only_undoes_its_allocation():
    sim = sim_of([A, B], **SMALL)
    sim.step(0)
    sim.step(0)  # B ready at offset 4
    sim.step(VOID + 2)
    assert sim.queue == [1] and sim.kills[1] == 0
    assert sim.free.tolist()[:5] == [4, 4, 4, 4, 10]


def test_masked_actions_raise_with_the_reason():
    sim = sim_of([A, B], **{**SMALL, "num_kill": 1})
    mask = sim.valid_actions()
    assert mask.tolist() == [True, True, False, False, False, True, False]
    with pytest.raises(ValueError, match="visible slot 2 is empty"):
        sim.step(2)
    with pytest.raises(ValueError, match="running slot 0 is empty"):
        sim.step(VOID + 1)
    with pytest.raises(ValueError, match="action 7 is out of range: 0..6"):
        sim.step(7)
    sim.step(0)
    assert not sim.valid_actions()[0]
    with pytest.raises(ValueError, match="all 1 running slots are held"):
        sim.step(0)
    while not sim.done:
        sim.step(int(np.flatnonzero(sim.valid_actions()[:VOID])[0]) if sim.valid_actions()[:VOID].any() else VOID)
    assert not sim.valid_actions().any()
    with pytest.raises(ValueError, match="the episode is over"):
        sim.step(VOID)


def test_arrivals_beyond_the_backlog_are_dropped_and_counted():
    sim = sim_of([E] * 5, arrivals=[0, 0, 0, 0, 0], **{**SMALL, "num_nw": 2, "backlog": 1})
    assert sim.queue == [0, 1, 2]
    records = sim.records()
    assert records.dropped.tolist() == [False, False, False, True, True]


@pytest.mark.parametrize("field, value, match", [
    ("job_rate", 0.0, r"job_rate must be in \(0, 1\], got 0.0"),
    ("job_rate", 1.5, r"job_rate must be in \(0, 1\], got 1.5"),
    ("res_slot", 0, "res_slot must be a positive integer, got 0"),
    ("job_len", 200, "job_len=200 exceeds time_horizon=120"),
    ("estimates", "oracle", "estimates must be one of running, prerun"),
])
def test_config_rejects_bad_values(field, value, match):
    with pytest.raises(ValueError, match=match):
        DTSimConfig(**{field: value})


def test_res_slot_below_the_largest_job_is_rejected_by_name():
    table = table_of([(3, 3, 96, []), (3, 3, 10, [])])
    seq = JobSequence(arrival=np.zeros(1, dtype=np.int32), row=np.zeros(1, dtype=np.int64))
    with pytest.raises(ValueError, match=r"res_slot=8 is smaller than the largest job of hand-built \(10 units\)"):
        DTSim(table, seq, DTSimConfig(res_slot=8))


def test_reward_sums_minus_one_over_estimated_length_of_jobs_in_the_system():
    sim = sim_of([A, B, C], **SMALL)
    sim.step(0)
    assert sim.slowdown_penalty() == pytest.approx(-(1 / 4 + 1 / 3 + 1 / 2))


def test_same_sequence_same_episode():
    from schedrl.dtsim import sample_sequence
    table, config = synthetic_jobs(300, seed=1), DTSimConfig(simu_len=50)
    seq = sample_sequence(table, config, np.random.default_rng(5))
    assert np.array_equal(seq.row, sample_sequence(table, config, np.random.default_rng(5)).row)
    ends = []
    for _ in range(2):
        sim = DTSim(table, seq, config)
        while not sim.done:
            sim.step(0 if sim.valid_actions()[0] else config.void_action)
        ends.append(sim.records().finish)
    assert np.array_equal(*ends)
