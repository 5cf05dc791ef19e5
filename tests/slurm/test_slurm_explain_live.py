"""Issue 61, item 4 on a real Slurm 22.05 (tests/slurm_cluster.py): the live adapter runs the shipped distilled tree
(`zoo:inspector-lublin1-s0-tree3`) for two cycles over a queue crafted so that the tree rejects F1's first proposal,
applies the deferred order through the site factors, and `schedrl slurm explain JOBID` prints the tests that
deferred the job, with their values; a dry run with the tree beside its network says whether the two agree.

The queue: one node of 256 CPUs, 200 of them held for six hours (time limit) and 56 for five minutes; pending A
(60 CPUs, 1 minute: F1's first proposal, the lowest requested time x size; it cannot start before the six-hour job
ends, more than the tree's 4 h, so the tree rejects it), then B (40 CPUs, 2 h) and C (50 CPUs, 24 h), which can
start when the five-minute job ends (the tree accepts them). Slurm's own order (job size weighs, larger first) is
A, C, B; the tree's is B, C, A. Run under `flock /tmp/slurm.lock` where other sessions share the machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from slurm_cluster import private_slurm
from slurm_replay import final_jobs

pytestmark = pytest.mark.slurm  # and `integration`: tests/conftest.py applies it to tests/slurm

TREE = "zoo:inspector-lublin1-s0-tree3"
WEIGHTS = "PriorityType=priority/multifactor\nPriorityCalcPeriod=1\nPriorityWeightAge=1000\nPriorityWeightJobSize=1000"


@pytest.fixture(scope="module")
def slurm():
    with private_slurm(cpus=256, nodes=1, partitions={"debug": "Nodes=n1 MaxTime=INFINITE"},
                       scheduler_parameters="bf_interval=1,sched_interval=1", extra_conf=WEIGHTS) as cluster:
        yield cluster


def schedrl_slurm(cluster, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedrl", "slurm", *argv], env=cluster.env(), capture_output=True,
                          text=True, timeout=300)


def test_the_tree_defers_a_job_on_the_real_slurm_and_explain_prints_its_path(slurm, tmp_path):
    running = [slurm.sbatch("--partition", "debug", "--ntasks", str(n), f"--time={t}", "--wrap", "sleep 600")
               for n, t in ((200, 360), (56, 5))]
    slurm.wait_for(lambda: all(final_jobs(slurm)[j]["state"] == "RUNNING" for j in running), 30, "the two running")
    a, b, c = (slurm.sbatch("--partition", "debug", "--ntasks", str(n), f"--time={t}", "--wrap", "sleep 1")
               for n, t in ((60, 1), (40, 120), (50, 1440)))
    state = tmp_path / "state"
    done = schedrl_slurm(slurm, "run", "--policy", TREE, "--partition", "debug", "--cycles", "2", "--interval", "1s",
                         "--state-dir", str(state), "--force", "--no-watch", "--trained-cpus", "256")
    assert done.returncode == 0, done.stdout + done.stderr
    audit = [json.loads(line) for line in (state / "schedrltest.audit.jsonl").read_text().splitlines()]
    applied: dict[str, str] = {}  # the first bonus each job got
    for r in audit:
        if r.get("why", "").startswith("rank") and r["result"] == "ok":
            applied.setdefault(str(r["job"]), r["why"])
    assert (applied[b], applied[c], applied[a]) == ("rank 1", "rank 2", "rank 3"), audit
    explained = [e for r in audit if r.get("kind") == "explain" for e in r["jobs"]]
    deferred = [e for e in explained if str(e["job"]) == a]
    assert len(deferred) == 1 and deferred[0]["decide"] == "reject" and deferred[0]["slurm"] == 1  # once, not per cycle
    assert deferred[0]["rank"] == 3 and deferred[0]["by"] == "tree"

    shown = schedrl_slurm(slurm, "explain", a, "--state-dir", str(state))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    print(f"\n$ schedrl slurm explain {a} --state-dir {state}\n{out}")
    assert re.search(r"cycle 1: rank 3 \(Slurm's own order: 1\): deferred: zoo:inspector-lublin1-s0-tree3 rejected "
                     r"the base rule's proposal \(by its tree\)", out), out
    assert re.search(r"\n    time until the proposal could start \(by requested times\) > 4 h \(here [56] h[^)]*\)\n"
                     r"    -> reject\n", out), out
    assert re.search(r"its value \d+ -> \d+ \(rank 3, live\): ok", out), out

    unknown = schedrl_slurm(slurm, "explain", "999999", "--state-dir", str(state))
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1 and "job 999999: no change" in unknown.stderr

    beside = schedrl_slurm(slurm, "run", "--policy", "zoo:inspector-lublin1-s0", "--explain-with", TREE, "--partition",
                           "debug", "--cycles", "1", "--dry-run", "--state-dir", str(tmp_path / "dry"),
                           "--trained-cpus", "256")
    assert beside.returncode == 0, beside.stdout + beside.stderr
    print(f"\n$ schedrl slurm run --policy zoo:inspector-lublin1-s0 --explain-with {TREE} --dry-run ...\n"
          + beside.stdout)
    assert re.search(r"    the (tree and the network agree|network disagrees with the tree, and decides: (accept|reject))", beside.stdout)
    slurm.run("scancel", *running, a, b, c)
