"""`backfill: slurm`, Slurm's backfill scheduler in the event simulator: hand-checked small schedules (a short job's
reservation rounded to bf_resolution holding a whole node, bf_interval delaying starts, bf_max_job_test limiting a
pass) and, on generated workloads, the same starts as the Slurm layer's pass model (`schedrl.slurm.passes.plan`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedrl.heuristics import get_heuristic
from schedrl.sim import SimConfig, Simulator
from schedrl.sim.slurmconf import BackfillParams, read_config_file
from schedrl.slurm.passes import plan
from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES


def workload(rows, procs: int) -> Workload:
    """rows: (submit, run, procs, requested time)."""
    submit, run, cpus, limit = (np.array(c, dtype=np.int64) for c in zip(*rows))
    n = len(rows)
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=submit, run=run, time_req=limit, procs_req=cpus,
                   procs_alloc=cpus, status=np.ones(n))
    return Workload(columns, max_procs=procs, max_nodes=procs)


def starts(rows, procs: int, config: SimConfig, policy: str = "fcfs") -> list[float]:
    return Simulator(workload(rows, procs), config).run(get_heuristic(policy)).start.tolist()


# 8 procs. A (4 procs, 90 s) runs; B (8 procs, 60 s) waits for it: earliest start 90, reserved over [60, 120) on the
# 60-s grid (the start rounded down to the minute). C (2 procs, 40 s) ends at 50, before the reservation: it starts;
# D (2 procs, 55 s) would run to 65, into it: it waits for B (90-150) and starts at 150. On a 1-s grid B's
# reservation is [90, 150) and D fits before it, as it does under EASY (D ends before B's shadow time, 90).
ROUNDED = [(0, 90, 4, 90), (0, 60, 8, 60), (10, 40, 2, 40), (10, 55, 2, 55)]


def test_a_short_jobs_reservation_is_rounded_down_to_bf_resolution():
    assert starts(ROUNDED, 8, SimConfig.slurm(bf_interval=10, bf_resolution=60)) == [0, 90, 10, 150]
    assert starts(ROUNDED, 8, SimConfig.slurm(bf_interval=10, bf_resolution=1)) == [0, 90, 10, 10]
    assert starts(ROUNDED, 8, SimConfig(backfill="easy")) == [0, 90, 10, 10]


# 8 procs. A (6 procs, 100 s of a 600-s limit) runs; B (4 procs, limit 60) can start only at A's planned end, 600:
# it is reserved over [600, 660). C (1 proc, 60 s) ends long before that and starts at 1; D (1 proc, 1,200 s) runs
# into it. In nodes of 8, B's reservation holds the whole node: D waits for A's actual end (100) though a proc sits
# idle. In nodes of 4 (or with no node plan) B holds 4 procs and D fits beside it: it starts at 1.
WHOLE_NODE = [(0, 100, 6, 600), (1, 5, 4, 60), (1, 5, 1, 60), (1, 5, 1, 1200)]


@pytest.mark.parametrize(("node_procs", "d_start"), [(8, 100), (4, 1), (0, 1)])
def test_a_reservation_holds_whole_nodes(node_procs, d_start):
    got = starts(WHOLE_NODE, 8, SimConfig.slurm(bf_interval=1, node_procs=node_procs))
    assert got == [0, 100, 1, d_start]


def test_jobs_start_only_at_the_passes_every_bf_interval():
    rows = [(5, 10, 1, 10), (47, 10, 1, 10)]
    assert starts(rows, 4, SimConfig.slurm()) == [30, 60]  # Slurm's default: a pass every 30 s
    assert starts(rows, 4, SimConfig.slurm(bf_interval=1)) == [5, 47]
    assert starts(rows, 4, SimConfig(backfill="easy")) == [5, 47]


def test_bf_max_job_test_limits_the_jobs_tested_per_pass():
    rows = [(0, 100, 1, 100)] * 3
    # two tested at the pass at 0; that pass started jobs and saw arrivals at its instant, so the next one, at 30,
    # looks again (the pass model's rule) and starts the third
    assert starts(rows, 4, SimConfig.slurm(bf_max_job_test=2)) == [0, 0, 30]
    # one a pass: the pass at 30 starts the second but sees no event at its instant; the next is the first after the
    # first job's end (100), at 120
    assert starts(rows, 4, SimConfig.slurm(bf_max_job_test=1)) == [0, 30, 120]
    assert starts(rows, 4, SimConfig.slurm()) == [0, 0, 0]


def test_bf_window_limits_how_far_ahead_a_job_is_reserved():
    # B (8 procs) can start only at 7,200, beyond a 60-min window: it is not reserved, and D (1 proc, 3 h) starts
    rows = [(0, 7200, 4, 7200), (0, 60, 8, 60), (10, 10800, 1, 10800)]
    assert starts(rows, 8, SimConfig.slurm(bf_interval=10, bf_window=60))[2] == 10
    assert starts(rows, 8, SimConfig.slurm(bf_interval=10))[2] == 7260  # a day's window: B is reserved first


def test_the_config_validates_and_records_slurms_parameters():
    config = SimConfig.slurm(BackfillParams(interval_s=1.0, resolution_s=600.0, window_s=3600.0, max_job_test=50),
                             node_procs=4)
    assert (config.bf_interval, config.bf_resolution, config.bf_window, config.bf_max_job_test) == (1, 600, 60, 50)
    assert SimConfig.from_dict(config.to_dict()) == config
    assert "bf_resolution 600 s" in config.backfill_text and "nodes of 4 procs" in config.backfill_text
    # under other backfilling the parameters mean nothing: records stay as they were unless one was given
    assert not {"bf_interval", "node_procs"} & set(SimConfig(backfill="easy").to_dict())
    assert SimConfig.from_dict(SimConfig(backfill="easy", bf_interval=5).to_dict()).bf_interval == 5
    with pytest.raises(ValueError, match="bf_resolution must be a whole number >= 1"):
        SimConfig(backfill="slurm", bf_resolution=0)
    with pytest.raises(ValueError, match="node_procs must be a whole number >= 0"):
        SimConfig(backfill="slurm", node_procs=-1)
    with pytest.raises(ValueError, match="backfill slurm needs backfill_choice first-fit"):
        SimConfig(backfill="slurm", backfill_choice="policy")
    with pytest.raises(ValueError, match="not a whole number"):
        SimConfig.slurm(BackfillParams(interval_s=0.5))


def test_slurm_config_files_are_read_strictly(tmp_path):
    path = tmp_path / "show-config.txt"
    path.write_text("Configuration data as of 2026-11-28T05:05:00\nSchedulerType           = sched/backfill\n"
                    "SchedulerParameters     = bf_interval=1,bf_resolution=600,bf_window=60,bf_continue\n")
    assert read_config_file(path) == BackfillParams(interval_s=1.0, resolution_s=600.0, window_s=3600.0)
    path.write_text("SchedulerParameters=bf_interval=x\n")
    with pytest.raises(ValueError, match=r"show-config.txt:1: bf_interval='x' is not a whole number >= 1"):
        read_config_file(path)
    path.write_text("SlurmctldPort = 6817\n")
    with pytest.raises(ValueError, match="no SchedulerParameters line"):
        read_config_file(path)
    with pytest.raises(ValueError, match="cannot read it"):
        read_config_file(tmp_path / "missing.txt")


@st.composite
def slurm_cases(draw):
    """Up to 25 jobs (run <= requested time, as Slurm kills at the limit) and Slurm's parameters."""
    usable = draw(st.sampled_from([4, 8, 16]))
    n = draw(st.integers(1, 25))
    rows, t = [], 0
    for _ in range(n):
        t += draw(st.sampled_from([0, 0, 1, 7, 30, 60, 200]))
        limit = draw(st.integers(1, 400))
        rows.append((t, draw(st.integers(0, limit)), draw(st.integers(1, usable)), limit))
    return (rows, usable, draw(st.sampled_from([1, 5, 30])), draw(st.sampled_from([1, 10, 60])),
            draw(st.sampled_from([0, 1, 2, 4])), draw(st.sampled_from([1, 2, 3, 500])), draw(st.sampled_from([5, 1440])))


@settings(max_examples=150, deadline=None)
@given(slurm_cases())
def test_the_simulator_starts_every_job_when_the_pass_model_does(case):
    rows, usable, interval, resolution, node_procs, max_job_test, window = case
    config = SimConfig.slurm(bf_interval=interval, bf_resolution=resolution, node_procs=node_procs,
                             bf_max_job_test=max_job_test, bf_window=window)
    a = np.array(rows, float)
    params = BackfillParams(interval_s=interval, resolution_s=resolution, window_s=60.0 * window,
                            max_job_test=max_job_test)
    # Slurm's own order under priority/basic: submit order (the plan breaks ties by submit, then index)
    model = plan(a[:, 0], a[:, 1], a[:, 2].astype(int), a[:, 3], lambda t, pending, start: np.zeros(len(pending)),
                 np.array([0.0]), usable, node_procs or None, params)
    assert starts(rows, usable, config) == model.tolist()
    # under the list discipline FCFS picks the same jobs in the same order at each pass
    assert starts(rows, usable, replace(config, discipline="list")) == model.tolist()


@settings(max_examples=100, deadline=None)
@given(slurm_cases(), st.sampled_from(["fcfs", "sjf", "f1", "wfp3", "random"]),
       st.sampled_from(["pick-and-wait", "list"]), st.booleans(), st.integers(0, 2 ** 16))
def test_any_policy_under_slurm_starts_jobs_only_at_passes_and_within_the_machine(case, policy, discipline, kill, seed):
    rows, usable, interval, resolution, node_procs, max_job_test, window = case
    rng = np.random.default_rng(seed)  # runs past the requested time too, killed at it or not
    rows = [(t, int(run * rng.choice([1, 1, 2])), c, limit) for t, run, c, limit in rows]
    config = SimConfig.slurm(bf_interval=interval, bf_resolution=resolution, node_procs=node_procs,
                             bf_max_job_test=max_job_test, bf_window=window, discipline=discipline,
                             kill_at_limit=kill, window=3 if discipline == "list" else 0)
    schedule = Simulator(workload(rows, usable), config).run(get_heuristic(policy, seed=1))
    submit, run, cpus, limit = (np.array(c, float) for c in zip(*rows))
    start, end = schedule.start, schedule.end
    assert np.all(start >= submit) and np.all(start % interval == 0)
    np.testing.assert_array_equal(end - start, np.minimum(run, limit) if kill else run)
    # procs in use at every start instant, from the runs [start, end)
    active = (start[None, :] <= start[:, None]) & (start[:, None] < end[None, :])
    assert np.all(active.astype(float) @ cpus <= usable)


def top_k_sjf(limit: np.ndarray, submit: np.ndarray, k: int):
    """The pass model's order with a policy's top K first: the K shortest requests pending at the pass (ties: submit,
    then index), then Slurm's own (submit order), as the adapter's bonuses order a live queue."""
    def key(t, pending, start):
        ranked = pending[np.lexsort((pending, submit[pending], limit[pending]))][:k]
        values = np.zeros(len(pending))
        position = {int(j): i for i, j in enumerate(pending)}
        for rank, j in enumerate(ranked):
            values[position[int(j)]] = 2.0 * len(pending) - rank
        return values
    return key


@settings(max_examples=150, deadline=None)
@given(slurm_cases(), st.sampled_from([1, 2, 4, 16]))
def test_the_policys_top_k_tested_first_at_each_pass_is_the_pass_models_order(case, k):
    rows, usable, interval, resolution, node_procs, max_job_test, window = case
    config = SimConfig.slurm(bf_interval=interval, bf_resolution=resolution, node_procs=node_procs,
                             bf_max_job_test=max_job_test, bf_window=window, policy_top=k)
    a = np.array(rows, float)
    params = BackfillParams(interval_s=interval, resolution_s=resolution, window_s=60.0 * window,
                            max_job_test=max_job_test)
    model = plan(a[:, 0], a[:, 1], a[:, 2].astype(int), a[:, 3], top_k_sjf(a[:, 3], a[:, 0], k), np.array([0.0]),
                 usable, node_procs or None, params)
    assert starts(rows, usable, config, "sjf") == model.tolist()


def test_under_the_policys_top_k_a_pick_that_cannot_start_is_reserved_not_held():
    # 8 procs: A (8 procs, 100 s) runs; C (8 procs, 50 s) arrives at 1, D (8 procs, 10 s) at 2. SJF held: C, picked
    # at 1, is held and starts at A's end, D after it. SJF's top 1 re-picked at every pass: D, the shortest from 2 on,
    # goes first at each pass and starts at 100, C after it.
    rows = [(0, 100, 8, 100), (1, 50, 8, 50), (2, 10, 8, 10)]
    assert starts(rows, 8, SimConfig.slurm(bf_interval=1), "sjf") == [0, 100, 150]
    assert starts(rows, 8, SimConfig.slurm(bf_interval=1, policy_top=1), "sjf") == [0, 110, 100]
    with pytest.raises(ValueError, match="policy_top applies to backfill slurm under the pick-and-wait discipline"):
        SimConfig.slurm(policy_top=2, discipline="list")
