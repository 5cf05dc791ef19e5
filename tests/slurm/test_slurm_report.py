"""`schedrl slurm report`: agreement of a cycle log's order with Slurm's starts, judged as the module says, and
the replay of the logged jobs under the policy and under Slurm's own ordering."""

from __future__ import annotations

import json

import pytest

from schedrl.cli.main import main
from schedrl.slurm.report import Log, ReportError, agreement, estimate, report

T = 1_000_000.0


def write_log(path, jobs, starts, ends, cycles, policy="sjf"):
    lines = [{"kind": "header", "time": T, "cluster": "c", "partition": "p", "policy": policy, "top": 4,
              "mode": "shadow"}]
    lines += [{"kind": "job", "job": j, "submit": s, "cpus": c, "limit": lim, "priority": 1} for j, s, c, lim in jobs]
    lines += [{"kind": "started", "job": j, "start": t} for j, t in starts.items()]
    lines += [{"kind": "ended", "job": j, "end": t, "state": "COMPLETED", "exact": True} for j, t in ends.items()]
    lines += [{"kind": "cycle", "n": k, "time": t, "usable": 10, "order": o, "slurm": s}
              for k, (t, o, s) in enumerate(cycles, 1)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"kind": "cyc')  # a torn last line
    return path


def test_a_start_agrees_when_it_was_the_highest_ranked_pending_job_that_fitted(tmp_path):
    # job 1 runs on 6 of 10 CPUs until T+10; jobs 2 (8 CPUs), 3 (4) and 4 (2) wait; the policy ranks 2, 4, 3
    jobs = [(1, T - 5, 6, 600), (2, T, 8, 60), (3, T, 4, 300), (4, T, 2, 120)]
    starts = {1: T - 5, 3: T + 1, 4: T + 10, 2: T + 20}
    ends = {1: T + 10, 3: T + 15, 4: T + 20, 2: T + 30}
    cycles = [(T + 0.5, [2, 4, 3], [2, 3, 4]), (T + 9.5, [2, 4], [2, 4]), (T + 19.5, [2], [2])]
    log = Log.read(write_log(tmp_path / "log.jsonl", jobs, starts, ends, cycles))
    a = agreement(log)
    # at T+1 the 4 free CPUs fit 3 and 4, and 4 ranks higher: job 3 disagrees; at T+10, job 1 ended in that
    # second (either reading), 4 is the highest-ranked that fits beside 3; at T+20 job 2 is first
    assert a.starts == {"all": 3} and a.agreed == {"all": 2}
    assert a.disagreed == [{"job": 3, "time": T + 1, "scheduler": "all", "policy_choice": [4]}]
    assert (a.cycles, a.first_choice) == (3, 3)
    by_scheduler = agreement(log, {3: ("backfill", 1), 4: ("main", 2), 2: ("main", 3)})
    assert by_scheduler.starts == {"backfill": 1, "main": 2} and by_scheduler.agreed == {"main": 2}


def test_the_replay_pairs_the_policy_with_slurms_order_over_windows(tmp_path):
    # a 10-CPU machine, jobs arriving 1 s apart: long wide ones first, then short ones, FCFS as Slurm ran them
    jobs, starts, ends = [], {}, {}
    t = T
    for k in range(40):
        wide = k % 4 == 0
        jobs.append((k + 1, T + k, 10 if wide else 2, 600 if wide else 60))
        run = 50.0 if wide else 5.0
        t = max(t, T + k)
        starts[k + 1], ends[k + 1] = t, t + run
        t += run if wide else 0
    log = Log.read(write_log(tmp_path / "log.jsonl", jobs, starts, ends, [(T, [1], [1])]))
    e = estimate(log, __import__("schedrl.eval.policies", fromlist=["x"]).resolve_policy("sjf"), "wait", windows=4)
    assert e.jobs == 40 and e.windows == 4 and e.policy < e.slurm and e.difference_pct < 0
    assert e.ci95_pct[0] <= e.difference_pct <= e.ci95_pct[1]
    with pytest.raises(ReportError, match="only 40 logged jobs both started and ended: too few for 30 windows"):
        estimate(log, None, "wait", windows=30)
    lines = report(tmp_path / "log.jsonl", metric="wait", windows=4).lines()
    assert lines[0].startswith(f"{tmp_path / 'log.jsonl'}: shadow run of sjf on c/p, top 4, 1 cycles")
    assert "under the policy" in lines[-2] and "Slurm's own ordering" in lines[-2]


def test_report_cli_prints_it_and_refuses_what_is_not_a_cycle_log(tmp_path, capsys):
    (tmp_path / "x.jsonl").write_text('{"kind": "job", "job": 1}\n')
    assert main(["slurm", "report", str(tmp_path / "x.jsonl")]) == 2
    assert "not a cycle log of `schedrl slurm run --log` (no header line)" in capsys.readouterr().err
