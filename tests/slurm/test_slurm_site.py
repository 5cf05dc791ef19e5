"""The site keeps control, on a real Slurm 22.05 (tests/slurm_cluster.py, with slurmdbd): under the adapter's default
settings a job of a high-priority QOS stays ahead of every normal-QOS job, and a live policy built to lose (LJF on a
stream of long and short jobs) is rolled back to shadow by the watchdog on its own.

The cluster: one node of 256 CPUs, partition `debug`; priority/multifactor with the age, job-size and fair-share
weights at 1,000 each and the QOS weight at 10,000; QOS `high` (priority 100) beside `normal` (0). Every wait is on an
event (a cycle record in the adapter's log, a job's state), never on a fixed sleep.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from slurm_cluster import private_slurm

pytestmark = pytest.mark.slurm  # and `integration`: tests/conftest.py applies it to tests/slurm

WEIGHTS = ("PriorityType=priority/multifactor\nPriorityCalcPeriod=1\nPriorityWeightAge=1000\n"
           "PriorityWeightJobSize=1000\nPriorityWeightFairShare=1000\nPriorityWeightQOS=10000\nDebugFlags=Backfill")
RESULTS: dict[str, list[str]] = {}
"""What the tests measured, printed at the module's end (pytest -s shows it)."""


@pytest.fixture(scope="module")
def slurm():
    with private_slurm(cpus=256, nodes=1, accounting=True, partitions={"debug": "Nodes=n1 MaxTime=INFINITE"},
                       scheduler_parameters="bf_interval=1,sched_interval=1,bf_resolution=60",
                       extra_conf=WEIGHTS) as cluster:
        cluster.run("sacctmgr", "-i", "add", "qos", "high", "set", "priority=100")
        yield cluster
    for name, lines in RESULTS.items():
        print(f"\n== {name}\n" + "\n".join(lines))


class Adapter:
    """`schedrl slurm run` as a process of its own, with only the options given (the site's defaults otherwise)."""

    def __init__(self, cluster, tmp: Path, name: str, policy: str, *options: str):
        self.cluster = cluster
        self.out, self.log, self.state = tmp / f"{name}.out", tmp / f"{name}.jsonl", tmp / f"{name}-state"
        argv = [sys.executable, "-m", "schedrl", "slurm", "run", "--policy", policy, "--partition", "debug",
                "--interval", "1s", "--log", str(self.log), "--state-dir", str(self.state), "--force", *options]
        self.proc = subprocess.Popen(argv, env=cluster.env(), stdout=open(self.out, "w"), stderr=subprocess.STDOUT)

    def records(self, kind: str) -> list[dict]:
        text = self.log.read_text() if self.log.exists() else ""
        return [json.loads(line) for line in text.splitlines() if f'"kind":"{kind}"' in line]

    def wait_for(self, what: str, predicate, timeout: float = 180) -> None:
        self.cluster.wait_for(lambda: self.proc.poll() is not None or predicate(), timeout, what, interval_s=0.5)
        assert self.proc.poll() is None, self.out.read_text()[-3000:]

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


def priorities(cluster) -> dict[str, tuple[int, int]]:
    """Pending job -> (priority, site factor), from sprio."""
    out = cluster.run("sprio", "--noheader", "--format=%i|%Y|%S").stdout
    return {job: (int(p), int(s)) for job, p, s in (line.strip().split("|") for line in out.splitlines())}


def ranks(cluster, jobs: list[str]) -> list[str]:
    """`jobs` in Slurm's present order (priority, then job id)."""
    prio = priorities(cluster)
    return sorted(jobs, key=lambda j: (-prio[j][0], int(j)))


def test_a_high_qos_job_stays_ahead_of_every_normal_qos_job_under_the_defaults(slurm, tmp_path):
    blocker = slurm.sbatch("--partition", "debug", "--ntasks", "256", "--time=10", "--wrap", "sleep 300")
    slurm.wait_for(lambda: "RUNNING" in slurm.run("squeue", "-h", "-j", blocker, "-o", "%T").stdout, 30,
                   "the blocking job running")
    normal = [slurm.sbatch("--partition", "debug", "--ntasks", "8", f"--time={t}", "--wrap", "sleep 1")
              for t in (8, 7, 6, 5, 4, 3, 2, 1)]  # Slurm's own order (FCFS here) is the reverse of SJF's
    high = slurm.sbatch("--partition", "debug", "--qos", "high", "--ntasks", "8", "--time=60", "--wrap", "sleep 1")
    jobs = [high, *normal]
    slurm.wait_for(lambda: set(jobs) <= set(priorities(slurm)), 30, "sprio showing every job")
    before = ranks(slurm, jobs)
    adapter = Adapter(slurm, tmp_path, "qos", "sjf")
    adapter.wait_for("a cycle that changed site factors",
                     lambda: any(r.get("applied") for r in adapter.records("cycle")))
    after = ranks(slurm, jobs)
    prio = priorities(slurm)
    cycle = next(r for r in adapter.records("cycle") if r.get("applied"))
    assert adapter.stop() == 0
    restored = priorities(slurm)
    RESULTS["QOS"] = [f"high-QOS job {high}, normal-QOS jobs {', '.join(normal)} (SJF wants the 60-minute one last)",
                      f"Slurm's order before the adapter: {', '.join(before)} (high-QOS rank {before.index(high) + 1})",
                      f"with the adapter live (default --max-bonus): {', '.join(after)} (high-QOS rank "
                      f"{after.index(high) + 1}); priorities {[prio[j][0] for j in after]}, site factors "
                      f"{[prio[j][1] for j in after]}",
                      f"the policy's order {cycle['order']}, in force {cycle.get('bonus_order', cycle['order'])}",
                      adapter.out.read_text().splitlines()[-2][:300]]
    assert before[0] == high and after[0] == high, RESULTS["QOS"]
    assert [j for j in after if j != high] == normal[::-1], RESULTS["QOS"]  # SJF's order behind it
    assert cycle["lifted"] == [int(high)] and cycle["bonus_order"][0] == int(high), RESULTS["QOS"]
    # the default --max-bonus: the age and job-size weights (2,000), at least 2 x 64 (K + 1) = 4,224 for K = 32
    assert max(prio[j][1] for j in jobs) <= 4224, RESULTS["QOS"]
    assert all(restored[j][1] == 0 for j in jobs)  # a clean stop gives every site factor back
    # bonuses far above the QOS weight (the strict bands of before): the QOS tier still holds
    strict = Adapter(slurm, tmp_path, "qos-strict", "sjf", "--max-bonus", "100000000")
    strict.wait_for("a cycle that changed site factors", lambda: any(r.get("applied") for r in strict.records("cycle")))
    crossed = ranks(slurm, jobs)
    top = max(priorities(slurm)[j][1] for j in jobs)
    assert strict.stop() == 0
    RESULTS["QOS"].append(f"with --max-bonus 100000000 (site factors up to {top:,}): {', '.join(crossed)} (high-QOS "
                          f"rank {crossed.index(high) + 1})")
    assert crossed == after and top > 10000, RESULTS["QOS"]
    slurm.run("scancel", blocker, *jobs)


def test_the_watchdog_rolls_a_losing_live_policy_back_to_shadow(slurm, tmp_path):
    """LJF (longest requested time first) on jobs of half the node arriving 1 s apart on average (more work than the
    node does), one in four asking 10 minutes and sleeping 10 s, the rest asking 1 minute and sleeping 1 s: the
    short jobs wait behind the long ones, and over the last 40 jobs seen the watchdog finds LJF worse than Slurm's
    own order (FCFS here: one user, one size) beyond the 5% margin, on slurmctld's times."""
    adapter = Adapter(slurm, tmp_path, "ljf", "ljf", "--watch-jobs", "40", "--watch-metric", "wait",
                      "--watch-margin", "5", "--slurmctld-log", str(slurm.logs / "slurmctld.log"))
    adapter.wait_for("the adapter's first cycle", lambda: bool(adapter.records("cycle")))
    rnd = random.Random(57)
    submitted: list[str] = []
    began = time.monotonic()
    at = 0.0
    while len(submitted) < 80 and not adapter.records("rollback"):
        long = rnd.random() < 0.25
        while time.monotonic() - began < at:
            time.sleep(0.05)
        submitted.append(slurm.sbatch("--partition", "debug", "--ntasks", "128", f"--time={10 if long else 1}",
                                      "--wrap", f"sleep {10 if long else 1}"))
        at += rnd.expovariate(1.0)
    adapter.wait_for("the watchdog's rollback", lambda: bool(adapter.records("rollback")), timeout=120)
    rollback = adapter.records("rollback")[0]
    looks = adapter.records("watch")
    seen = sum(1 for line in adapter.log.read_text().splitlines()
               if '"kind":"job"' in line and json.loads(line)["seen"] <= rollback["time"])
    ended = sum(1 for line in adapter.log.read_text().splitlines()
                if '"kind":"ended"' in line and json.loads(line)["end"] <= rollback["time"])
    now = priorities(slurm)  # once: a job may start between two calls (it did: KeyError on the second)
    sites = {job: now[job][1] for job in submitted if job in now}
    status = adapter.stop()
    out = adapter.out.read_text()
    RESULTS["watchdog"] = [f"{len(submitted)} jobs submitted; the rollback at cycle {rollback['n']}, after {seen} jobs "
                           f"seen ({ended} ended), {len(looks)} look(s)",
                           *(f"look at cycle {r['n']}: {r['difference_pct']:+.1f}%, 95% interval "
                             f"[{r['ci95_pct'][0]:+.1f}%, {r['ci95_pct'][1]:+.1f}%]" for r in looks),
                           rollback["why"], f"exit status {status}"]
    assert status == 3, out[-3000:]
    assert "rolled back to shadow: watchdog: over the last 40 jobs" in out and "worse beyond the +5% margin" in out
    assert all(v == 0 for v in sites.values()), sites  # every pending job's own site factor back at the rollback
    audit = [json.loads(line) for line in (adapter.state / f"{slurm.cluster_name}.audit.jsonl").read_text()
             .splitlines()]
    assert [r.get("kind") for r in audit].count("watchdog") == 1
    assert not subprocess.run(["squeue", "-h", "--name=schedrl-lock", "-t", "PD"], env=slurm.env(),
                              capture_output=True, text=True).stdout.strip()  # the lock given back at the rollback
    slurm.run("scancel", *submitted, check=False)
