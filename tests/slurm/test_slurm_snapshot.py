"""The snapshot: squeue/sinfo output read into the partition's jobs, the jobs left alone and why, the simulator
paused at that moment, and a policy's order for the top K (schedrl.slurm.snapshot, schedrl.slurm.order)."""

from __future__ import annotations

import pytest

from schedrl.eval.policies import resolve_policy
from schedrl.sim.state import QUEUED, RUNNING
from schedrl.slurm.order import PolicyMachineError, check_machine, rank
from schedrl.slurm.snapshot import Snapshot, SnapshotError, parse_sinfo, parse_squeue, simulator

NOW = 1795693403.0
# recorded from the private Slurm 22.05 of tests/slurm_cluster.py (client.SQUEUE_FORMAT, SLURM_TIME_FORMAT=%s)
SQUEUE = """\
6|6|debug|PENDING|8|1|4:00|1795693402|1795694100|1795694340|1|0|Priority|(null)|(null)
5|5|debug|PENDING|50|1|1:00|1795693402|1795693560|1795693620|1|0|Priority|(null)|(null)
4|4|debug|PENDING|30|1|9:00|1795693401|1795693560|1795694100|1|0|Resources|(null)|(null)
10|10|debug|PENDING|1|1|UNLIMITED|1795693402|N/A|N/A|1|0|Dependency|afterok:1(unfulfilled)|(null)
9|9|debug|PENDING|100|1|UNLIMITED|1795693402|N/A|N/A|1|0|PartitionConfig|(null)|(null)
8|8|debug|PENDING|2|1|UNLIMITED|1795693402|N/A|N/A|0|0|JobHeldUser|(null)|(null)
7|7|other|PENDING|2|1|UNLIMITED|1795693402|N/A|N/A|1|0|None|(null)|(null)
12|12_[3-5]|debug|PENDING|1|1|5:00|1795693402|N/A|N/A|1|0|Priority|(null)|(null)
13|13|debug|PENDING|1|1|5:00|1795693402|N/A|N/A|1|0|Priority|(null)|maint
14|14|debug|PENDING|1|1|5:00|1795693402|N/A|N/A|1|0|BeginTime|(null)|(null)
1|1|debug|RUNNING|40|1|3:00|1795693300|1795693343|1795693523|1|0|None|(null)|(null)
2|2|debug|COMPLETED|4|1|3:00|1795693300|1795693301|1795693310|1|0|None|(null)|(null)
3|3|other|RUNNING|8|1|3:00|1795693300|1795693301|1795693481|1|0|None|(null)|(null)
"""
SINFO = "48/16/0/64|1|infinite\n"


def snapshot() -> Snapshot:
    return Snapshot.read(SQUEUE, SINFO, "debug", NOW)


def test_squeue_lines_are_read_field_by_field():
    jobs = {j.job_id: j for j in parse_squeue(SQUEUE)}
    assert jobs[6].cpus == 8 and jobs[6].limit == 240.0 and jobs[6].submit == 1795693402.0
    assert jobs[10].limit is None and jobs[10].start is None and jobs[10].dependency.startswith("afterok")
    assert jobs[1].state == "RUNNING" and jobs[1].start == 1795693343.0
    assert jobs[12].label == "12_[3-5]" and jobs[13].reservation == "maint"


def test_unreadable_output_names_the_line():
    with pytest.raises(SnapshotError, match=r"squeue line 1: 3 fields, expected 16"):
        parse_squeue("1|2|3\n")
    with pytest.raises(SnapshotError, match=r"sinfo shows no partition 'gpu'"):
        parse_sinfo("", "gpu")
    assert parse_sinfo("10/20/4/34|2|1-00:00:00\n30/0/0/30|1|1-00:00:00\n", "a").usable == 60


def test_only_jobs_an_order_can_move_are_pending_each_other_one_says_why():
    snap = snapshot()
    assert [j.job_id for j in snap.pending] == [4, 5, 6]  # Slurm's order: priority, submit, id
    assert [j.job_id for j in snap.running] == [1] and [j.job_id for j in snap.finished] == [2]
    why = {j.job_id: reason for j, reason in snap.left_alone}
    assert why == {10: "waits on a dependency (afterok:1(unfulfilled))",
                   9: "requests 100 CPUs, more than the partition's 64 usable",
                   8: "held (JobHeldUser)", 7: "in partition other, not debug",
                   12: "array tasks not yet split out", 13: "runs in reservation maint",
                   14: "cannot start now (BeginTime)"}
    assert snap.other_cpus == 8  # job 3 of partition other holds 8 of the 48 allocated CPUs


def test_the_simulator_is_paused_at_the_snapshot():
    sim = simulator(snapshot())
    ids = list(sim.workload.job_id)
    t0 = 1795693300.0
    assert sim.now == NOW - t0
    assert sim.capacity[0] == 64 and sim.free[0] == 64 - 40 - 8
    running = {ids[j] for j in sim.running()}
    assert running == {1, -1}  # job 1 and the other partition's CPUs
    assert sim.state.end[ids.index(1)] == 1795693343.0 + 180 - t0  # start + limit
    assert [ids[j] for j in sim.queue] == [4, 5, 6]  # FCFS
    assert all(sim.state.status[j] == QUEUED for j in sim.queue)
    assert sim.state.status[ids.index(1)] == RUNNING


def test_a_policy_ranks_the_top_k_by_picking_and_removing():
    snap = snapshot()
    assert rank(resolve_policy("sjf"), snap, 3) == [5, 6, 4]  # 1, 4 and 9 minutes
    assert rank(resolve_policy("sjf"), snap, 2) == [5, 6]
    assert rank(resolve_policy("fcfs"), snap, 3) == [4, 5, 6]
    assert rank(resolve_policy("sjf"), snap, 3, first=[4]) == [4, 5, 6]  # the guard's jobs stay in front
    assert rank(resolve_policy("largest"), snap, 3) == [5, 4, 6]


def test_a_policy_picking_a_job_not_waiting_is_an_error():
    class Bad:
        name = "bad"

        def pick(self, sim):
            return int(sim.running()[0])

    with pytest.raises(ValueError, match="bad picked job index .* not waiting"):
        rank(Bad(), snapshot(), 2)


def test_a_policy_trained_for_a_machine_size_far_away_is_refused_with_both_sizes():
    sjf = resolve_policy("sjf")
    assert check_machine(sjf, 100_000, 2.0) is None  # a heuristic reads no machine size
    assert "trained for 256 CPUs, this partition has 400" in check_machine(sjf, 400, 2.0, trained=256)
    with pytest.raises(PolicyMachineError, match=r"trained for a machine of 256 CPUs; this partition has 100,000 "
                                                 r"usable CPUs \(390.6x larger, more than --size-tolerance 2\)"):
        check_machine(sjf, 100_000, 2.0, trained=256)


def test_a_checkpoint_policy_reads_its_training_machine_from_its_run_record():
    from schedrl.slurm.order import trained_cpus

    class Record:
        agent = "rlscheduler"
        env_config = {"trace": "default"}

    class Policy:
        record = Record()

    assert trained_cpus(Policy()) == 256
    assert trained_cpus(resolve_policy("f1")) is None
    assert check_machine(Policy(), 256, 2.0).endswith("(within 2x)")


def test_running_jobs_on_drained_nodes_make_the_machine_full_not_an_error():
    squeue = "1|1|debug|RUNNING|64|1|3:00|100|110|290|1|0|None|(null)|(null)\n" \
             "2|2|debug|PENDING|8|1|3:00|120|N/A|N/A|1|0|Resources|(null)|(null)\n"
    snap = Snapshot.read(squeue, "64/0/32/96|3|infinite\n", "debug", 200.0)  # one 32-CPU node drained
    sim = simulator(snap)
    assert sim.capacity[0] == 64 and sim.free[0] == 0
    assert rank(resolve_policy("sjf"), snap, 4) == [2]
