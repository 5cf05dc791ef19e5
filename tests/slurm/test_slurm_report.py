"""`schedrl slurm report`: agreement of a cycle log's order with Slurm's starts, judged as the module says, and
the replay of the logged jobs under the policy and under Slurm's own ordering."""

from __future__ import annotations

import json

import pytest

from schedrl.cli.main import main
from schedrl.slurm.report import Log, ReportError, agreement, estimate, report

T = 1_000_000.0


def write_log(path, jobs, starts, ends, cycles, policy="sjf", mode="shadow"):
    lines = [{"kind": "header", "time": T, "cluster": "c", "partition": "p", "policy": policy, "top": 4,
              "mode": mode}]
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
    cycles = [(T - 1.5, [2, 4, 3], [2, 3, 4]), (T + 8.5, [2, 4], [2, 4]), (T + 18.5, [2], [2])]
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
    replay = next(line for line in lines if line.startswith("replay of 40 jobs"))
    assert "under the policy" in replay and "the model of Slurm's own ordering" in replay
    # Slurm ran these FCFS with no priorities: the model (every priority equal) is FCFS, one pass late
    checked = next(line for line in lines if line.startswith("model of Slurm's order against what Slurm did"))
    assert "(40 jobs)" in checked and "FCFS on the same jobs" in checked
    assert any(line.startswith("to tell a 10% gain from zero (80% power): ") for line in lines)
    assert any(line.startswith("go-live gate (upper end <= +5%, >= 1,000 jobs): not passed: it covers 40 jobs")
               for line in lines)


def test_a_live_log_says_live_things(tmp_path):
    jobs = [(k + 1, T + k, 2, 60) for k in range(20)]
    starts = {k + 1: T + k for k in range(20)}
    ends = {k + 1: T + k + 5 for k in range(20)}
    write_log(tmp_path / "live.jsonl", jobs, starts, ends, [(T, [1], [1])], mode="live")
    lines = report(tmp_path / "live.jsonl", metric="wait", windows=4).lines()
    assert not any("shadow longer" in line or line.startswith("go-live gate") for line in lines), lines
    assert any(line.startswith("model of Slurm's order: not checked on a live log") for line in lines), lines


def test_the_model_check_and_kendalls_tau():
    from schedrl.slurm.model import TARGET_MEDIAN_S, TARGET_TAU, check

    actual = [0.0, 1.0, 2.0, 3.0, 10.0]
    exact = check(actual, actual)
    assert (exact.mae_s, round(exact.tau, 9), exact.bias_s, exact.meets) == (0.0, 1.0, 0.0, True)
    reversed_ = check(actual[::-1], actual)
    assert round(reversed_.tau, 9) == -1.0 and not reversed_.meets
    late = check([a + 3 * TARGET_MEDIAN_S for a in actual], actual)  # the right order, starts far off
    assert round(late.tau, 9) == 1.0 and late.mae_s == 3 * TARGET_MEDIAN_S and not late.meets
    assert 0 < TARGET_TAU < 1


def test_the_model_prices_priorities_as_multifactor_does():
    from schedrl.slurm.model import priorities

    config = {"PriorityWeightAge": "1000", "PriorityMaxAge": "1-00:00:00"}
    jobs = [{"submit": 100.0, "static": 1500.0}, {"submit": 0.0, "priority": 1300, "seen": 43_200.0}]
    prio = priorities(jobs, config, 0.0)
    assert list(prio.static) == [1500.0, 1300.0 - 500.0]  # an old log: the age at first sight taken off
    import numpy as np

    assert list(prio.at(86_400.0 + 100.0, np.array([0, 1]))) == [2500.0, 1800.0]  # age capped at PriorityMaxAge


def test_the_gate_passes_a_non_inferior_report_only(tmp_path):
    from schedrl.slurm import gate

    def saved(ci, jobs=1500, policy="sjf"):
        path = gate.path_for(tmp_path, "c", "p")
        path.write_text(json.dumps({"policy": policy, "estimate": {"jobs": jobs, "metric": "bsld",
                                                                   "difference_pct": sum(ci) / 2, "ci95_pct": ci}}))

    with pytest.raises(gate.GateError, match="needs a shadow report of sjf on c/p: none in"):
        gate.check(tmp_path, "c", "p", "sjf")
    saved([-12.0, 4.9])  # crosses zero, but probably not more than 5% worse: passes
    assert gate.check(tmp_path, "c", "p", "sjf").startswith("go-live gate passed")
    saved([-3.0, 5.1])
    with pytest.raises(gate.GateError, match=r"upper end of its 95% interval is \+5.1% \(bsld\), above the \+5%"):
        gate.check(tmp_path, "c", "p", "sjf")
    saved([-30.0, -10.0], jobs=999)
    with pytest.raises(gate.GateError, match="it covers 999 jobs, fewer than the 1,000"):
        gate.check(tmp_path, "c", "p", "sjf")
    assert gate.check(tmp_path, "c", "p", "sjf", min_jobs=500).startswith("go-live gate passed")
    saved([-30.0, -10.0], policy="f1")
    with pytest.raises(gate.GateError, match="is of 'f1', not 'sjf'"):
        gate.check(tmp_path, "c", "p", "sjf")


def test_report_keeps_a_shadow_logs_report_for_the_gate(tmp_path, capsys):
    jobs = [(k + 1, T + k, 2, 60) for k in range(20)]
    write_log(tmp_path / "s.jsonl", jobs, {k + 1: T + k for k in range(20)}, {k + 1: T + k + 5 for k in range(20)},
              [(T, [1], [1])])
    assert main(["slurm", "report", str(tmp_path / "s.jsonl"), "--metric", "wait", "--windows", "4",
                 "--state-dir", str(tmp_path / "state"), "--gate-jobs", "10"]) == 0
    out = capsys.readouterr().out
    assert "go-live gate (upper end <= +5%, >= 10 jobs): " in out
    assert f"kept for the go-live gate of `schedrl slurm run`: {tmp_path / 'state' / 'c.p.shadow-report.json'}" in out
    assert json.loads((tmp_path / "state" / "c.p.shadow-report.json").read_text())["policy"] == "sjf"
    with pytest.raises(SystemExit) as refused:  # refused while the command line is parsed
        main(["slurm", "report", str(tmp_path / "s.jsonl"), "--windows", "1"])
    assert refused.value.code == 2


def test_report_cli_prints_it_and_refuses_what_is_not_a_cycle_log(tmp_path, capsys):
    (tmp_path / "x.jsonl").write_text('{"kind": "job", "job": 1}\n')
    assert main(["slurm", "report", str(tmp_path / "x.jsonl")]) == 2
    assert "x.jsonl:1: a job record the report cannot use (KeyError: 'submit'): not a cycle log of `schedrl slurm " \
           "run --log`" in capsys.readouterr().err
    (tmp_path / "y.jsonl").write_text('{"kind": "cycle", "time": 1}\n')
    assert main(["slurm", "report", str(tmp_path / "y.jsonl")]) == 2
    assert "not a cycle log of `schedrl slurm run --log` (no header line)" in capsys.readouterr().err


def test_the_replay_runs_on_slurmctlds_times_where_its_log_has_them(tmp_path):
    from datetime import datetime

    from schedrl.slurm.passes import CtldTimes

    jobs = [(k + 1, T + 2 * k, 4, 60) for k in range(12)]
    starts = {k + 1: T + 2 * k + 1 for k in range(12)}
    ends = {j: t + 1 for j, t in starts.items()}
    log = Log.read(write_log(tmp_path / "log.jsonl", jobs, starts, ends, [(T, [1], [1])]))

    def stamp(t: float) -> str:
        return datetime.fromtimestamp(t).isoformat(timespec="milliseconds")

    def ctld(covered: int):
        lines = []
        for j, s, _, _ in jobs[:covered]:
            lines += [f"[{stamp(s + 0.25)}] _slurm_rpc_submit_batch_job: JobId={j} InitPrio=1 usec=1",
                      f"[{stamp(starts[j] + 0.5)}] sched/backfill: _start_job: Started JobId={j} in p on n1",
                      f"[{stamp(ends[j] + 0.75)}] _job_complete: JobId={j} done"]
        (tmp_path / "ctld.log").write_text("\n".join(lines) + "\n")
        return CtldTimes.read(tmp_path / "ctld.log")

    sjf = __import__("schedrl.eval.policies", fromlist=["x"]).resolve_policy("sjf")
    assert estimate(log, sjf, "wait", windows=4).times == "squeue"
    full = estimate(log, sjf, "wait", windows=4, ctld=ctld(12))
    assert full.times == "slurmctld" and full.passes == "starts"
    assert abs(full.observed_wait - 1.25) < 1e-6  # the millisecond times: started 1.25 s after submission
    assert estimate(log, sjf, "wait", windows=4, ctld=ctld(5)).times == "slurmctld for 5 of 12 jobs"
