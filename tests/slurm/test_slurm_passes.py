"""The model of Slurm's backfill scheduler (`schedrl.slurm.passes`): its plan of nodes on the bf_resolution grid, its
passes, and the times slurmctld's log gives it."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.slurm.passes import BackfillParams, CtldTimes, pass_times, plan

PARAMS = BackfillParams(interval_s=1.0, resolution_s=60.0)


def by_priority(values):
    values = np.asarray(values, float)
    return lambda t, pending, start: values[pending]


def run_plan(jobs, passes, usable=8, node_cpus=8, params=PARAMS, epoch=0.0):
    """jobs: (submit, run, cpus, limit, priority) rows."""
    a = np.array(jobs, float)
    return plan(a[:, 0], a[:, 1], a[:, 2].astype(int), a[:, 3], by_priority(a[:, 4]), np.asarray(passes, float),
                usable, node_cpus, params, epoch=epoch)


# A holds 6 of 8 CPUs (limit 10 min, runs 100 s); B (4 CPUs, top priority) cannot start, so it is reserved for A's
# planned end; C (1 CPU, 1 min) ends long before that; D (1 CPU, 20 min) would run into B's reservation.
HOLD = [(0, 100, 6, 600, 9), (1, 5, 4, 60, 5), (1, 5, 1, 60, 4), (1, 5, 1, 1200, 3)]


def test_a_reservation_holds_the_whole_node_for_its_window():
    start = run_plan(HOLD, [0, 2])
    assert start[0] == 0 and start[2] == 2  # C fits before B's reservation
    assert np.isnan(start[1]) or start[1] > 2
    assert start[3] > 2  # D is held though a CPU is idle: B's reservation takes the node for [600, 660)


def test_without_nodes_a_reservation_blocks_only_its_cpus():
    start = run_plan(HOLD, [0, 2], node_cpus=None)
    assert start[2] == 2 and start[3] == 2  # at A's planned end 8 CPUs free: B's 4 and D's 1 both fit


def test_reservations_start_on_the_resolution_grid():
    # the pass is 30 s into a minute; B's earliest start (A's planned end, 75 s on) is rounded down to the next
    # minute, 30 s on, where C's 1-minute limit (ending 60 s on) overlaps it
    jobs = [(0, 100, 6, 75, 9), (0, 5, 4, 60, 5), (0, 5, 2, 60, 4)]
    grid = run_plan(jobs, [0, 120], epoch=30.0)
    assert grid[0] == 0 and grid[2] > 0
    fine = run_plan(jobs, [0, 120], epoch=30.0, params=BackfillParams(interval_s=1.0, resolution_s=1.0))
    assert fine[2] == 0  # to the second, C ends (60 s) before B's reservation (75 s)


def test_a_pass_takes_the_jobs_that_arrived_since_in_priority_order():
    # small jobs arrive first, the wide one just before the pass: the pass starts the wide one (higher priority)
    jobs = [(0.2, 3, 2, 60, 1), (0.3, 3, 2, 60, 1), (0.9, 3, 8, 60, 9)]
    start = run_plan(jobs, [1.0, 2.0, 3.0, 4.0, 5.0])
    assert start[2] == 1.0 and start[0] >= 4.0 and start[1] >= 4.0
    # an event simulator would have started the small jobs at 0.2 and 0.3; a pass before the wide one arrives does too
    early = run_plan(jobs, [0.5, 1.0, 2.0, 3.0, 4.0, 5.0])
    assert early[0] == 0.5 and early[2] > 1.0


def test_passes_go_on_every_interval_until_every_job_started():
    start = run_plan([(0, 30, 8, 60, 1), (1, 5, 8, 60, 1)], [0.0])
    assert start[0] == 0 and start[1] == 30.0  # the first pass after the first job's end, at the 1 s cadence


def test_a_job_wider_than_the_partition_is_refused():
    with pytest.raises(ValueError, match="9 CPUs cannot start on 8"):
        run_plan([(0, 1, 9, 60, 1)], [0])


def test_pass_times_fill_the_gaps_between_known_passes():
    times = pass_times(0.0, 10.0, 2.0, known=(0.5, 6.5))
    assert times.tolist() == [0.5, 2.5, 4.5, 6.5, 8.5, 10.5]
    assert pass_times(0.0, 4.0, 2.0).tolist() == [0.0, 2.0, 4.0]


def test_backfill_params_from_scontrol_show_config():
    p = BackfillParams.from_config({"SchedulerParameters": "bf_interval=1,sched_interval=1,bf_resolution=600,"
                                                           "bf_window=60,bf_max_job_test=50,bf_continue"})
    assert (p.interval_s, p.resolution_s, p.window_s, p.max_job_test) == (1.0, 600.0, 3600.0, 50)
    assert BackfillParams.from_config({}) == BackfillParams()  # Slurm's defaults: 30 s, 60 s, a day, 500
    assert BackfillParams.from_config({"SchedulerParameters": "bf_interval=x"}).interval_s == 30.0


def test_slurmctlds_log_gives_millisecond_times_and_passes(tmp_path):
    log = tmp_path / "slurmctld.log"
    log.write_text(
        "[2026-11-28T05:05:33.178] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=1250 usec=1301\n"
        "[2026-11-28T05:05:33.629] sched/backfill: _attempt_backfill: beginning\n"
        "[2026-11-28T05:05:33.631] sched/backfill: _start_job: Started JobId=1 in other on n2\n"
        "[2026-11-28T05:05:34.102] _job_complete: JobId=1 WEXITSTATUS 0\n"
        "[2026-11-28T05:05:34.102] _job_complete: JobId=1 done\n"
        "[2026-11-28T05:05:35.500] sched: Allocate JobId=2 NodeList=n2 #CPUs=16 Partition=other\n"
        "not a log line\n")
    times = CtldTimes.read(log)
    assert round(times.start[1] - times.submit[1], 3) == 0.453 and round(times.end[1] - times.start[1], 3) == 0.471
    assert times.logged_passes and len(times.passes) == 3 and 2 in times.start
