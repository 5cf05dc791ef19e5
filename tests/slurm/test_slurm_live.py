"""The adapter on a real Slurm 22.05 (tests/slurm_cluster.py): a 100-job SWF sequence replayed in compressed time
(slurm_replay.py says how) under the live adapter with SJF and with a policy trained in this session, the same
sequence in shadow mode and its report, the adapter killed mid-run and restarted, an expired lease reset, and the
failures that must cost one line and no cycle.

The cluster: two nodes of 256 CPUs, partition `debug` on n1 and `other` on n2, so two replays run side by side
without touching each other; slurmdbd and PriorityType=priority/multifactor with the age, job-size and fair-share
weights at 1,000 each (Slurm's own order: larger jobs first, as PriorityFavorSmall=NO weighs them; one user, so
fair share ties; age counts for nothing in 40 s against PriorityMaxAge's 7 days); the main scheduler and the
backfill scheduler every second (sched_interval=1, bf_interval=1). The adapter orders through SiteFactor, and holds
the cluster with its lock job: one live adapter at a time.

How "each job Slurm started from the head of its queue was the policy's highest-ranked pending job that fitted" is
checked: slurmctld's log says which scheduler started each job (`sched: Allocate` for the main scheduler, which
walks the queue from the head and stops at the first job that does not fit; `sched/backfill: ... Started` for
backfilling, counted apart). For every start by the main scheduler, `schedrl.slurm.report.agreement` takes the
adapter's order in force at that second (from the cycle log: each cycle's order and when it was applied), the jobs
pending then and the CPUs free then, and requires the started job to be the first job of that order that fitted
(module docstring of schedrl/slurm/report.py for the one-second readings). Every main-scheduler start must agree.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schedrl.slurm.adapter import Adapter, AdapterOptions
from schedrl.slurm.client import SlurmClient
from schedrl.slurm.lease import Lease
from schedrl.slurm.report import Log, agreement, classify_starts
from schedrl.eval.policies import resolve_policy
from schedrl.workload import read_swf
from schedrl.workload.catalog import resolve_trace
from slurm_cluster import private_slurm
from slurm_replay import NAME_PREFIX, Replay, final_jobs, replay

pytestmark = pytest.mark.slurm  # and `integration`: tests/conftest.py applies it to tests/slurm

SCALE = 4e-4
"""Trace seconds to replay seconds: the sequence's 89,000 s take about 36 s."""
WINDOW = slice(37_600, 37_700)
"""The default trace's jobs 37,600..37,699: past the training zone of `schedrl train --trace default`, and a busy
stretch (FCFS 164 vs SJF 60 in bounded slowdown under EASY in the simulator)."""
TOP = 16
WEIGHTS = ("PriorityType=priority/multifactor\nPriorityCalcPeriod=1\nPriorityWeightAge=1000\n"
           "PriorityWeightJobSize=1000\nPriorityWeightFairShare=1000\n"
           # slurmctld logs each backfill pass: the report's model of Slurm runs at Slurm's own passes
           "DebugFlags=Backfill")
REPORTS: dict[str, list[str]] = {}
"""The reports of this module's replays, printed at its end (pytest -s shows them)."""


@pytest.fixture(scope="module")
def slurm():
    with private_slurm(cpus=256, nodes=2, accounting=True,
                       partitions={"debug": "Nodes=n1 MaxTime=INFINITE", "other": "Nodes=n2 MaxTime=INFINITE"},
                       scheduler_parameters="bf_interval=1,sched_interval=1,bf_resolution=60",
                       extra_conf=WEIGHTS) as cluster:
        yield cluster
    for name, lines in REPORTS.items():
        print(f"\n== {name}\n" + "\n".join(lines))


@pytest.fixture(scope="module")
def sequence():
    return read_swf(resolve_trace("default"))[WINDOW]


class Training:
    """A tiny `schedrl train rlscheduler` run in the background (one iteration after the warm start), started by the
    first test that asks for it so that it overlaps the first replays."""

    def __init__(self, out: Path):
        self.out = out
        argv = [sys.executable, "-m", "schedrl", "train", "rlscheduler", "--trace", "default", "--iterations", "1",
                "--batch-size", "128", "--epochs", "1", "--sequence-length", "32", "--envs-per-runner", "1",
                "--no-filtering", "--eval-sequences", "1", "--eval-jobs", "64", "--out", str(out)]
        self.proc = subprocess.Popen(argv, stdout=open(out.parent / "train.out", "w"), stderr=subprocess.STDOUT,
                                     env={**os.environ, "RAY_BACKEND_LOG_LEVEL": "fatal"})

    def checkpoint(self) -> str:
        assert self.proc.wait(timeout=600) == 0, (self.out.parent / "train.out").read_text()[-3000:]
        return json.loads((self.out / "summary.json").read_text())["checkpoint"]


@pytest.fixture(scope="module")
def training(tmp_path_factory):
    run = Training(tmp_path_factory.mktemp("train") / "run")
    yield run
    if run.proc.poll() is None:
        run.proc.kill()
        run.proc.wait()


class AdapterProcess:
    """`schedrl slurm run` as a process of its own, as a site runs it."""

    def __init__(self, cluster, tmp: Path, name: str, partition: str, policy: str, *options: str):
        self.cluster, self.name = cluster, name
        self.out, self.log, self.state = tmp / f"{name}.out", tmp / f"{name}.jsonl", tmp / f"{name}-state"
        # live: --max-bonus above 64 (K + 1) (W + 2), the policy's order over job size and age, as these tests check it
        strict = [] if "--shadow" in options else ["--max-bonus", "10000000"]
        self.argv = [sys.executable, "-m", "schedrl", "slurm", "run", "--policy", policy, "--partition", partition,
                     "--top", str(TOP), "--interval", "1s", "--log", str(self.log), "--state-dir", str(self.state),
                     *strict, *options]
        self.start()

    def start(self) -> None:
        logged = len(self.cycles_text())
        self.proc = subprocess.Popen(self.argv, env=self.cluster.env(), stdout=open(self.out, "a"),
                                     stderr=subprocess.STDOUT)
        self.cluster.wait_for(lambda: self.proc.poll() is not None or '"cycle"' in self.cycles_text()[logged:], 120,
                              f"{self.name}'s first cycle")
        assert self.proc.poll() is None, self.text()

    def cycles_text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def text(self) -> str:
        return self.out.read_text()

    def stop(self, sig=signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=60)


def replay_in_force(cluster, sequence, partition: str) -> Replay:
    return replay(cluster, sequence, partition, SCALE)


def check_completed(replay: Replay, final: dict[str, dict], partition: str) -> None:
    """Every trace job became one Slurm job that completed: none lost, none duplicated."""
    assert not replay.errors, replay.errors
    expected = {f"{NAME_PREFIX}{int(j)}" for j in replay.workload.job_id}
    assert len(replay.submitted) == len(expected) == 100
    mine = {job_id: final[job_id] for job_id in replay.submitted.values()}
    assert sorted(job["name"] for job in mine.values()) == sorted(expected)  # one Slurm job per trace job
    assert {job["state"] for job in mine.values()} == {"COMPLETED"}
    assert {job["partition"] for job in mine.values()} == {partition}


def check_order(cluster, adapter: AdapterProcess, name: str, unseen_at_most: int = 0) -> dict:
    """Every main-scheduler start was the head of the adapter's order (module docstring); returns the counts.
    `unseen_at_most`: how many jobs started while no adapter ran; the cycle log of an adapter killed and restarted
    may lack some of them (seen once in CI: 2 of 100 absent from the log after a SIGKILL; the cause is not found
    yet), and only those may be missing."""
    log = Log.read(adapter.log)
    found = agreement(log, classify_starts(cluster.logs / "slurmctld.log"))
    bad = [d for d in found.disagreed if d["scheduler"] == "main"]
    assert not bad, f"{name}: main-scheduler starts that were not the order's first fitting job: {bad}"
    total = sum(found.starts.values())
    assert found.starts.get("main", 0) > 0 and 100 - unseen_at_most <= total <= 100, (found.starts, unseen_at_most)
    return {"starts": found.starts, "agreed": found.agreed}


def record_report(name: str, adapter: AdapterProcess, cluster, policy: str | None = None) -> list[str]:
    """`schedrl slurm report` of an adapter's log (waits: in compressed time bounded slowdown's 10 s threshold hides
    every difference, runs last seconds), as a site runs it; a shadow log's is kept in its state directory."""
    argv = ["report", str(adapter.log), "--metric", "wait", "--windows", "5", "--slurmctld-log",
            str(cluster.logs / "slurmctld.log"), "--state-dir", str(adapter.state), "--gate-jobs", "100",
            *(["--policy", policy] if policy else [])]
    done = schedrl_slurm(cluster, *argv)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    REPORTS[name] = lines
    return lines


def test_live_sjf_and_the_same_sequence_in_shadow(slurm, sequence, training, tmp_path):
    live = AdapterProcess(slurm, tmp_path, "sjf-live", "debug", "sjf", "--force")
    assert "going live with --force; the go-live gate would refuse: live mode needs a shadow report of sjf" in live.text()
    shadow = AdapterProcess(slurm, tmp_path, "sjf-shadow", "other", "sjf", "--shadow")
    runs = [replay_in_force(slurm, sequence, "debug"), replay_in_force(slurm, sequence, "other")]
    finals = [run.finished(240) for run in runs]
    assert live.stop() == 0 and shadow.stop() == 0
    check_completed(runs[0], finals[0], "debug")
    check_completed(runs[1], finals[1], "other")
    counts = check_order(slurm, live, "sjf live")
    assert "stopped:" in live.text()  # a clean stop gives the jobs their own nice values back
    assert Lease.load(live.state, "schedrltest").original == {}
    audit = [json.loads(line) for line in (live.state / "schedrltest.audit.jsonl").read_text().splitlines()]
    # the value changes (records without a `kind`: notes such as `explain`, why a job moved, change nothing); a job
    # may start or end between the snapshot and scontrol: "Job has already finished", not a refusal
    changes = [r for r in audit if "kind" not in r]
    assert changes and {r["result"] for r in changes} <= {"ok", "Job has already finished",
                                                          "Job is no longer pending execution"}, audit
    assert not (shadow.state / "schedrltest.audit.jsonl").exists()  # shadow changed nothing
    lines = record_report("sjf live", live, slurm)
    shadow_lines = record_report("sjf shadow", shadow, slurm)
    REPORTS["sjf live"].append(f"main-scheduler starts: {counts}")
    # each report replays the logged jobs that both started and ended: all 100, or (a job the log caught only in part,
    # seen in CI) nearly all, and says how many it left out
    replayed = [int(m.group(1)) for m in (re.match(r"replay of (\d+) jobs", line) for line in lines + shadow_lines) if m]
    assert len(replayed) == 2 and min(replayed) >= 95, lines + shadow_lines
    # the shadow report classifies Slurm's starts; under load every start can be a backfilled one (then the report
    # has no main-scheduler line), so either kind of line counts
    assert any(line.startswith(("starts by the main scheduler", "backfilled starts")) for line in shadow_lines), \
        shadow_lines
    # the model of Slurm's own order against what Slurm did, on the shadow log; live logs say live things
    checked = next(line for line in shadow_lines if line.startswith("model of Slurm's order against what Slurm did"))
    assert re.search(r"\((9[5-9]|100) jobs\)", checked) and "Kendall tau" in checked, checked
    # on slurmctld's millisecond times and its logged passes, the model of Slurm's backfill scheduler meets its targets
    assert "the model ran on slurmctld's times (to the millisecond) and its logged backfill passes" in shadow_lines, \
        shadow_lines
    assert "meets the targets" in checked, checked
    assert not any("shadow longer" in line or line.startswith("go-live gate") for line in lines), lines
    assert any(line.startswith("model of Slurm's order: not checked on a live log") for line in lines), lines
    # the go-live gate reads the shadow report kept in the state directory: live SJF on `other` starts if it passed
    saved = json.loads((shadow.state / "schedrltest.other.shadow-report.json").read_text())
    passes = saved["estimate"]["ci95_pct"][1] <= 5.0 and saved["estimate"]["jobs"] >= 100
    gate = schedrl_slurm(slurm, "run", "--policy", "sjf", "--partition", "other", "--cycles", "1", "--gate-jobs",
                         "100", "--state-dir", str(shadow.state), "--no-watch")
    if passes:
        assert gate.returncode == 0 and "go-live gate passed" in gate.stdout, gate.stdout + gate.stderr
    else:
        assert gate.returncode == 2 and "live mode refused by the shadow report" in gate.stderr, gate.stderr
    refused = schedrl_slurm(slurm, "run", "--policy", "fcfs", "--partition", "other", "--cycles", "1",
                            "--state-dir", str(shadow.state), "--no-watch")
    assert refused.returncode == 2 and "is of 'sjf', not 'fcfs'" in refused.stderr, refused.stderr
    REPORTS["sjf shadow"].append(f"gate ({'passed' if passes else 'refused'}): "
                                 + (gate.stdout.splitlines()[0] if passes else gate.stderr.strip()))


def test_live_trained_policy_and_an_adapter_killed_mid_run(slurm, sequence, training, tmp_path):
    checkpoint = training.checkpoint()
    live = AdapterProcess(slurm, tmp_path, "rl-live", "debug", f"checkpoint:{checkpoint}", "--lease", "1m", "--force")
    assert "trained for 256 CPUs, this partition has 256" in live.text()
    run = replay_in_force(slurm, sequence, "debug")

    def started() -> int:
        return sum(1 for j in final_jobs(slurm).values() if j["partition"] == "debug"
                   and j["name"].startswith(NAME_PREFIX) and j["state"] != "PENDING")

    def ordering() -> bool:  # mid-run, with pending jobs whose site factors the adapter set
        return started() >= 25 and bool(Lease.load(live.state, "schedrltest").set)

    slurm.wait_for(ordering, 120, "25 replayed jobs started on partition debug, and others ordered", interval_s=0.5)
    killed = live.proc.pid
    assert live.stop(signal.SIGKILL) == -signal.SIGKILL
    at_kill = time.time()
    started_at_kill = started()
    leftover = Lease.load(live.state, "schedrltest")
    assert leftover.set and leftover.expires > at_kill  # an order nobody maintains, for at most a minute
    before = started()
    slurm.wait_for(lambda: started() > before + 3, 60, "jobs starting with the adapter dead")
    live.start()  # restarted: it takes the killed adapter's jobs over and goes on ordering (after its first cycle)
    unseen = started() - started_at_kill  # started with no adapter running (see check_order)
    took = [line for line in live.text().splitlines() if line.startswith("continuing the order of an earlier adapter (")]
    assert took and f"(pid {killed} on " in took[0] and "no longer running" in took[0], live.text()[-2000:]
    final = run.finished(240)
    assert live.stop() == 0
    check_completed(run, final, "debug")
    counts = check_order(slurm, live, "trained live", unseen_at_most=unseen)
    record_report("trained policy live", live, slurm, policy=f"checkpoint:{checkpoint}")
    REPORTS["trained policy live"].append(f"main-scheduler starts: {counts}")
    assert Lease.load(live.state, "schedrltest").original == {}


def block(cluster, partition: str = "debug") -> str:
    """A job holding every CPU of the partition's node, so that jobs submitted after it wait."""
    job = cluster.sbatch("--partition", partition, "--ntasks", "256", "--time=10", "--wrap", "sleep 120")
    cluster.wait_for(lambda: final_jobs(cluster)[job]["state"] == "RUNNING", 30, "the blocking job running")
    return job


def nice_values(cluster, jobs) -> dict[str, int]:
    out = cluster.run("squeue", "--noheader", "--states=all", "--format=%A|%y").stdout
    values = dict(line.split("|") for line in out.splitlines())
    return {job: int(values[job]) for job in jobs}


def site_factors(cluster, jobs) -> dict[str, int]:
    """The pending jobs' site factors (sprio's SITE column)."""
    out = cluster.run("sprio", "--noheader", "--format=%i|%S").stdout
    values = dict(line.strip().split("|") for line in out.splitlines())
    return {job: int(values[job]) for job in jobs}


def test_a_dead_adapters_lease_is_reset_by_cron_at_once(slurm, tmp_path):
    blocker = block(slurm)
    jobs = [slurm.sbatch("--partition", "debug", "--ntasks", "8", f"--time={t}", "--wrap", "sleep 1")
            for t in (9, 5, 7, 1, 3)]
    slurm.run("scontrol", "update", f"JobId={jobs[0]}", "Nice=500")  # a user's own nice
    slurm.run("scontrol", "update", f"JobId={jobs[1]}", "SiteFactor=7", "AdminComment=site note")  # the site's own
    adapter = AdapterProcess(slurm, tmp_path, "killed", "debug", "sjf", "--lease", "10m", "--force")
    slurm.wait_for(lambda: min(site_factors(slurm, jobs[2:]).values()) > 0, 30, "site factors set")
    adapter.stop(signal.SIGKILL)
    assert min(site_factors(slurm, jobs[2:]).values()) > 0  # left as they were: harmless, and for 3 s only
    assert nice_values(slurm, jobs)[jobs[0]] == 500  # users' nice never touched
    comments = SlurmClient(env=slurm.env()).admin_comments()
    assert comments[int(jobs[1])].startswith("site note;schedrl:lock=") and comments[int(jobs[1])].endswith(
        ":SiteFactor=7")  # the mark appended, the site's text kept
    # its lease runs for 10 minutes, but its pid is gone on this host: --expired does not wait for the lease
    argv = [sys.executable, "-m", "schedrl", "slurm", "reset", "--expired", "--state-dir", str(adapter.state)]
    done = subprocess.run(argv, env=slurm.env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "reset: 5 pending job(s) back to their own values" in done.stdout, done.stdout
    assert f"(pid {adapter.proc.pid} on " in done.stdout and "is gone: its jobs go back now" in done.stdout
    assert site_factors(slurm, jobs) == {**dict.fromkeys(jobs, 0), jobs[1]: 7}
    assert nice_values(slurm, jobs) == {**dict.fromkeys(jobs, 0), jobs[0]: 500}
    comments = SlurmClient(env=slurm.env()).admin_comments()
    assert comments[int(jobs[1])] == "site note" and not any(comments[int(j)] for j in jobs if j != jobs[1])
    slurm.run("scancel", blocker, *jobs)


def test_failures_cost_one_line_and_the_cycles_go_on(slurm, tmp_path):
    blocker = block(slurm)
    jobs = [slurm.sbatch("--partition", "debug", "--ntasks", "8", f"--time={t}", "--wrap", "sleep 1") for t in (5, 3)]
    held = slurm.sbatch("--partition", "debug", "--hold", "--ntasks", "1", "--wrap", "sleep 1")
    elsewhere = slurm.sbatch("--partition", "other", "--hold", "--ntasks", "1", "--wrap", "sleep 1")
    wide = slurm.sbatch("--partition", "debug", "--ntasks", "300", "--wrap", "sleep 1")
    dependent = slurm.sbatch("--partition", "debug", f"--dependency=afterok:{blocker}", "--wrap", "sleep 1")
    lines: list[str] = []
    client = SlurmClient(env=slurm.env())
    a = Adapter(resolve_policy("sjf"), AdapterOptions(partition="debug", top=4, state_dir=tmp_path / "state"), client,
                say=lines.append, policy_name="sjf")
    a.start()
    assert a.cycle()["applied"] == 2
    assert {line for line in lines if line.startswith("job ")} == {
        f"job {held}: held (JobHeldUser): left alone",
        f"job {elsewhere}: in partition other, not debug: left alone",
        f"job {wide}: requests 300 CPUs, more than the partition's 256 usable: left alone",
        f"job {dependent}: waits on a dependency (afterok:{blocker}(unfulfilled)): left alone"}
    assert nice_values(slurm, [held, elsewhere, wide, dependent]) == dict.fromkeys([held, elsewhere, wide, dependent], 0)

    down = tmp_path / "down.conf"  # a controller nobody listens for: what clients see while slurmctld is down
    down.write_text(slurm.conf.read_text().replace(f"SlurmctldPort={slurm.ports['slurmctld']}", "SlurmctldPort=9"))
    client.env = {**slurm.env(), "SLURM_CONF": str(down)}
    assert a.cycle()["problem"].startswith("squeue failed")
    assert lines[-1].startswith("cycle 2: squeue failed (exit 1): slurm_load_jobs error: Unable to contact slurm "
                                "controller") and lines[-1].endswith("; nothing changed this cycle")

    wrapper = tmp_path / "bin" / "scontrol"  # scontrol as a user who may not raise priorities: slurmctld refuses
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" {slurm_bin("scontrol")} "$@"\n')
    wrapper.chmod(0o755)
    client.env = {**slurm.env(), "PATH": f"{wrapper.parent}{os.pathsep}{slurm.env()['PATH']}"}
    # undo one change: the cycle adopts 0 as the job's own (a change outside the adapter), sets its bonus again
    slurm.run("scontrol", "update", f"JobId={jobs[0]}", "SiteFactor=0")
    record = a.cycle()
    assert record["refused"] == 1 and lines[-1] == (f"cycle 3: scontrol refused 1 of 1 change(s): Invalid user id "
                                                    f"(job {jobs[0]})")
    client.env = slurm.env()
    assert a.cycle()["applied"] == 1

    # an account that may set site factors (AdminLevel=Operator) but not AdminComment: unmarked changes, one line
    slurm.run("sacctmgr", "-i", "add", "account", "ops")
    slurm.run("sacctmgr", "-i", "add", "user", "daemon", "account=ops", "adminlevel=Operator")
    operator = tmp_path / "op" / "scontrol"
    operator.parent.mkdir()
    operator.write_text(f'#!/bin/sh\nexec runuser -u daemon -- env SLURM_CONF="$SLURM_CONF" {slurm_bin("scontrol")} "$@"\n')
    operator.chmod(0o755)
    client.env = {**slurm.env(), "PATH": f"{operator.parent}{os.pathsep}{slurm.env()['PATH']}"}
    slurm.run("scontrol", "update", f"JobId={jobs[1]}", "SiteFactor=0", "AdminComment=")  # a change is due
    record = a.cycle()
    assert record["applied"] == 1 and record.get("refused", 0) == 0, (record, lines[-3:])
    assert any("slurmctld refused the marks in AdminComment" in line for line in lines), lines[-3:]
    assert site_factors(slurm, [jobs[1]])[jobs[1]] > 0
    assert not SlurmClient(env=slurm.env()).admin_comments()[int(jobs[1])]
    client.env = slurm.env()
    a.stop()
    assert site_factors(slurm, jobs) == dict.fromkeys(jobs, 0) and nice_values(slurm, jobs) == dict.fromkeys(jobs, 0)
    slurm.run("scancel", blocker, *jobs, held, elsewhere, wide, dependent)

    refused = subprocess.run([sys.executable, "-m", "schedrl", "slurm", "run", "--policy", "sjf", "--partition",
                              "debug", "--state-dir", str(tmp_path / "s2"), "--force", "--no-watch"],
                             env={**slurm.env(), "SLURM_CONF": str(down)},
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("schedrl slurm: error: scontrol show failed (exit 1)")


def slurm_bin(name: str) -> str:
    import shutil

    return shutil.which(name, path=f"/usr/bin{os.pathsep}/usr/local/bin{os.pathsep}{os.environ.get('PATH', '')}")


def schedrl_slurm(cluster, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedrl", "slurm", *argv], env=cluster.env(), capture_output=True,
                          text=True, timeout=timeout)


def test_a_second_live_adapter_and_a_reset_are_refused_while_one_runs(slurm, tmp_path):
    first = AdapterProcess(slurm, tmp_path, "first", "debug", "fcfs", "--force")
    for argv in (["run", "--policy", "sjf", "--partition", "other", "--force", "--no-watch"], ["reset"]):
        for state in (first.state, tmp_path / "elsewhere"):  # the same state directory, and another one
            done = schedrl_slurm(slurm, *argv, "--state-dir", str(state))
            assert done.returncode == 2 and "one adapter per cluster" in done.stderr, done.stderr
            if state != first.state:  # refused by Slurm's side: the first adapter's lock job
                assert "holds the cluster's lock" in done.stderr and str(first.state) in done.stderr, done.stderr
    assert first.stop() == 0
    assert not SlurmClient(env=slurm.env()).lock_jobs("schedrl-lock")  # the lock job went with it


def test_two_adapters_started_together_on_an_empty_partition_exactly_one_runs(slurm, tmp_path):
    procs = []
    for name in ("a", "b"):  # two state directories, started within a fraction of a second
        argv = ["run", "--policy", "sjf", "--partition", "debug", "--interval", "1s", "--force", "--no-watch",
                "--state-dir", str(tmp_path / name)]
        procs.append(subprocess.Popen([sys.executable, "-m", "schedrl", "slurm", *argv], env=slurm.env(),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    slurm.wait_for(lambda: any(p.poll() is not None for p in procs), 120, "one of the two adapters refused")
    time.sleep(3)  # the other goes on cycling
    assert sorted(p.poll() is None for p in procs) == [False, True], [p.poll() for p in procs]
    loser = next(p for p in procs if p.poll() is not None)
    winner = next(p for p in procs if p.poll() is None)
    err = loser.stderr.read()
    assert loser.returncode == 2 and "one adapter per cluster" in err and err.count("\n") == 1, err
    locks = SlurmClient(env=slurm.env()).lock_jobs("schedrl-lock")
    assert len(locks) == 1  # the loser cancelled its own lock job
    winner.send_signal(signal.SIGTERM)
    assert winner.wait(timeout=60) == 0
    print(f"\nrace: the loser said: {err.strip()}")


def test_reset_from_another_state_directory_finds_every_marked_job(slurm, tmp_path):
    blocker = block(slurm)
    jobs = [slurm.sbatch("--partition", "debug", "--ntasks", "8", f"--time={t}", "--wrap", "sleep 1") for t in (9, 5, 7)]
    adapter = AdapterProcess(slurm, tmp_path, "marker", "debug", "sjf", "--lease", "3s", "--force")
    slurm.wait_for(lambda: min(site_factors(slurm, jobs).values()) > 0, 30, "site factors set")
    adapter.stop(signal.SIGKILL)
    shutil.rmtree(adapter.state)  # the state directory lost with its host: the marks on Slurm's side remain
    time.sleep(3.5)
    done = schedrl_slurm(slurm, "reset", "--state-dir", str(tmp_path / "fresh"))
    assert done.returncode == 0 and "reset: 3 pending job(s) back to their own values" in done.stdout, \
        done.stdout + done.stderr
    assert site_factors(slurm, jobs) == dict.fromkeys(jobs, 0)
    comments = SlurmClient(env=slurm.env()).admin_comments()
    assert not any(comments[int(j)] for j in jobs)
    assert not SlurmClient(env=slurm.env()).lock_jobs("schedrl-lock")
    slurm.run("scancel", blocker, *jobs)


def test_the_replay_command_submits_a_window_and_says_what_became_of_it(slurm):
    done = schedrl_slurm(slurm, "replay", "default", "--first", "37600", "--jobs", "12", "--scale", "4e-4",
                         "--partition", "other", "--timeout", "2m", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("replaying 12 jobs of default (jobs 37601..37612) on partition other at scale 0.0004")
    out = json.loads(done.stdout[done.stdout.index("{"):])
    assert (out["submitted"], out["states"], out["lost"], out["duplicated"]) == (12, {"COMPLETED": 12}, 0, 0)
    final = final_jobs(slurm)
    assert {final[slurm_id]["name"] for slurm_id in out["slurm_ids"].values()} == {
        f"swf-{k}" for k in range(37601, 37613)}
    assert {final[slurm_id]["state"] for slurm_id in out["slurm_ids"].values()} == {"COMPLETED"}
    missing = schedrl_slurm(slurm, "replay", "default", "--jobs", "10", "--scale", "1e-3", "--partition", "nosuch")
    assert missing.returncode == 2 and "sinfo shows no partition 'nosuch'" in missing.stderr, missing.stderr
