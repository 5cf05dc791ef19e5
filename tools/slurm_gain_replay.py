"""Does a simulated gain survive on Slurm? A policy live on a private Slurm against Slurm's own order on the same jobs,
beside the simulator's predicted gain for those jobs under `--backfill slurm` and under EASY (issue 59, item 4).

Two partitions of one 256-CPU node each replay the same trace window at once in compressed time (`--scale`, 4e-4 as
the live tests by default; a larger scale replays more slowly, so that waits are long against Slurm's 1-s passes): on
`debug` the adapter runs the policy live (its top K first through SiteFactor), on `other` Slurm keeps
its own order (priority/multifactor with the age weight alone: submit order in 40 s of replay). The measured gain is
the policy's mean wait against Slurm's own on the same jobs, with a 95% t interval over `--groups` groups of consecutive
jobs (10 by default); the predicted gains are the simulator's, the policy against FCFS on the jobs as Slurm ran them on `other`
(slurmctld's millisecond submits and run times), under `SimConfig.slurm(bf_interval=1, bf_resolution=60,
node_procs=256)` with the policy's pick held (the pick-and-wait discipline) and with its top 16 first at each pass
(`policy_top`, the adapter's interface), and under EASY, on the same groups. Needs what the Slurm tests need
(tests/slurm_cluster.py). `--analyse` reads a replay's OUT again (its slurmctld.log and submitted.json).
`--choose` runs nothing either: it lists the windows where `--backfill slurm --policy-top 16` and EASY disagree most
about the policy's gain, on the trace's own times compressed as a replay at `--scale` compresses them (jobs replayable
in under 15 minutes, clear of `--avoid`'s), so that a replay's window is declared before it runs.

    python tools/slurm_gain_replay.py OUT [--first 37600] [--jobs 500] [--policy sjf] [--scale 4e-4] [--groups 10]
                                          [--analyse | --choose [--avoid 34500,37600]]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "slurm")]

CONF = ("PriorityType=priority/multifactor\nPriorityCalcPeriod=1\nPriorityWeightAge=1000\n"
        "DebugFlags=Backfill")
SCALE = 4e-4
GROUPS = 10
MS = 1000


def arm(ctld, submitted: dict[int, str], sequence) -> dict[int, tuple[float, float, float]]:
    """Trace job id -> (submit, start, end) in epoch seconds, for the jobs slurmctld's log has whole."""
    out = {}
    for job in sequence.job_id:
        i = int(submitted.get(int(job), -1))
        if i in ctld.submit and i in ctld.start and i in ctld.end:
            out[int(job)] = (ctld.submit[i], ctld.start[i], ctld.end[i])
    return out


def wait_done(log: Path, runs, timeout_s: float) -> None:
    """Until every job the replays submitted has ended by slurmctld's log (`_job_complete: JobId=N done`): squeue (what
    `Replay.finished` polls) forgets a job MinJobAge (300 s here) after it ends, which a slower replay outlives."""
    deadline = time.monotonic() + timeout_s
    for run in runs:
        run.thread.join(max(deadline - time.monotonic(), 0.0))
    while True:
        done = set(re.findall(r"_job_complete: JobId=(\d+) done", log.read_text(errors="replace")))
        missing = {i for run in runs for i in run.submitted.values()} - done
        if not missing and not any(run.thread.is_alive() for run in runs):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(missing)} replayed jobs had not ended within {timeout_s:g} s")
        time.sleep(2.0)


def by_partition(log: Path, sequence) -> list[dict[int, str]]:
    """Each arm's trace job id -> Slurm id from slurmctld's log alone (a replay from before submitted.json): the
    partition each job started in, and within a partition, Slurm's ids in submission order (one thread submits an
    arm's jobs in trace order)."""
    import re

    found = {"debug": set(), "other": set()}
    for line in log.read_text(errors="replace").splitlines():
        m = re.search(r"Started JobId=(\d+) in (\w+)", line) or re.search(r"Allocate JobId=(\d+) NodeList=n(\d)", line)
        if m:
            part = m.group(2)
            found[{"1": "debug", "2": "other"}.get(part, part)].add(int(m.group(1)))
    ids = [int(j) for j in sequence.job_id]
    return [dict(zip(ids, (str(i) for i in sorted(found[p])))) for p in ("debug", "other")]


def gain(policy_wait: np.ndarray, base_wait: np.ndarray, groups: int = GROUPS) -> tuple[float, float, float]:
    """The policy's mean wait against the base's, in %, with a 95% t interval over `groups` groups of consecutive
    jobs."""
    from schedrl.eval.paired import t975

    groups = np.array_split(np.arange(len(base_wait)), groups)
    diff = np.array([policy_wait[g].mean() - base_wait[g].mean() for g in groups])
    base = float(base_wait.mean())
    half = t975(len(diff) - 1) * float(diff.std(ddof=1)) / math.sqrt(len(diff))
    mean = float(diff.mean())
    return 100 * mean / base, 100 * (mean - half) / base, 100 * (mean + half) / base


def simulated_waits(submit, run, cpus, limit, policy: str, config) -> np.ndarray:
    """Each job's wait (seconds) under `policy` and `config` (Slurm's parameters in seconds), on a millisecond
    workload (a workload holds whole units; slurmctld's log has milliseconds)."""
    from schedrl.heuristics import get_heuristic
    from schedrl.sim import Simulator
    from schedrl.workload import Workload
    from schedrl.workload.fields import FIELD_NAMES

    n = len(submit)
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=np.round(submit * MS), run=np.round(run * MS),
                   time_req=limit * MS, procs_req=cpus, procs_alloc=cpus, status=np.ones(n))
    workload = Workload(columns, max_procs=256, max_nodes=1)
    if config.backfill == "slurm":
        config = replace(config, bf_interval=config.bf_interval * MS, bf_resolution=config.bf_resolution * MS,
                         bf_window=config.bf_window * MS)
    schedule = get_heuristic(policy).run(Simulator(workload, config))
    return (schedule.start - workload.submit) / MS


def choose(policy: str, jobs: int, scale: float, groups: int, avoid: list[int], step: int = 250,
           most_s: float = 900.0) -> list[tuple[int, float, float, float]]:
    """(first job, replay seconds, predicted gain under `slurm` with the top 16, under EASY) of each window of `jobs`
    jobs starting at a multiple of `step` whose submits span at most `most_s` of replay and that holds none of the
    windows starting at `avoid`, the two gains furthest apart first."""
    from schedrl.sim import SimConfig
    from schedrl.workload.catalog import resolve_trace
    from schedrl.workload.swf import read_swf

    trace = read_swf(resolve_trace("default"))
    slurm = replace(SimConfig.slurm(bf_interval=1, bf_resolution=60, node_procs=256), policy_top=16)
    rows = []
    for first in range(0, len(trace) - jobs, step):
        w = trace[first:first + jobs]
        span = float(w.submit[-1] - w.submit[0]) * scale
        if span > most_s or any(first < a + jobs and a < first + jobs for a in avoid):
            continue
        # as a replay runs them: submits and run times compressed, the requested times (whole minutes) not
        submit, run = (w.submit - w.submit[0]).astype(float) * scale, np.maximum(w.run.astype(float), 0.0) * scale
        limit = np.array([60.0 * max(1, math.ceil(float(t) / 60.0)) for t in w.time_req])
        cpus = w.procs_req.astype(int)
        found = []
        for config in (slurm, SimConfig(backfill="easy")):
            waits = {p: simulated_waits(submit, run, cpus, limit, p, config) for p in (policy, "fcfs")}
            found.append(gain(waits[policy], waits["fcfs"], groups)[0])
        rows.append((first, span, found[0], found[1]))
    return sorted(rows, key=lambda r: -abs(r[2] - r[3]))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--first", type=int, default=37_600)
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--policy", default="sjf")
    parser.add_argument("--scale", type=float, default=SCALE, help="replay time per trace second (default 4e-4)")
    parser.add_argument("--groups", type=int, default=GROUPS, help="groups of consecutive jobs of the intervals (10)")
    parser.add_argument("--analyse", action="store_true", help="analyse OUT's replay again; run nothing")
    parser.add_argument("--choose", action="store_true",
                        help="list the windows where slurm (top 16) and EASY disagree most; run nothing")
    parser.add_argument("--avoid", default="34500,37600", help="--choose: first jobs of windows already replayed")
    args = parser.parse_args(argv)
    if args.choose:
        rows = choose(args.policy, args.jobs, args.scale, args.groups, [int(a) for a in args.avoid.split(",") if a])
        print(f"{len(rows)} windows of {args.jobs} jobs replayable in under 15 minutes; where `slurm` (top 16) and "
              f"EASY disagree most about {args.policy} against FCFS:")
        for first, span, top, easy in rows[:5]:
            print(f"jobs {first}..{first + args.jobs - 1}: replay {span:.0f} s; slurm top 16 {top:+.1f}%, EASY {easy:+.1f}%")
        return 0
    import test_slurm_live as live
    from slurm_cluster import private_slurm
    from slurm_replay import replay

    from schedrl.sim import SimConfig
    from schedrl.slurm.model import check
    from schedrl.slurm.passes import CtldTimes

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    sequence = live.read_swf(live.resolve_trace("default"))[args.first:args.first + args.jobs]
    if not args.analyse:
        with private_slurm(cpus=256, nodes=2, accounting=True,
                           partitions={"debug": "Nodes=n1 MaxTime=INFINITE", "other": "Nodes=n2 MaxTime=INFINITE"},
                           scheduler_parameters="bf_interval=1,sched_interval=1,bf_resolution=60",
                           extra_conf=CONF) as cluster:
            adapter = live.AdapterProcess(cluster, out, "live", "debug", args.policy, "--force")
            runs = [replay(cluster, sequence, "debug", args.scale), replay(cluster, sequence, "other", args.scale)]
            try:
                wait_done(cluster.logs / "slurmctld.log", runs,
                          1800 + float(sequence.submit[-1] - sequence.submit[0]) * args.scale)
            finally:  # what ran is kept for `--analyse` even where the wait failed
                adapter.stop()
                shutil.copy(cluster.logs / "slurmctld.log", out / "slurmctld.log")
                (out / "submitted.json").write_text(json.dumps([run.submitted for run in runs]))
    ctld = CtldTimes.read(out / "slurmctld.log")
    submitted = [{int(k): v for k, v in m.items()} for m in json.loads((out / "submitted.json").read_text())] \
        if (out / "submitted.json").exists() else by_partition(out / "slurmctld.log", sequence)
    policy_arm, own_arm = (arm(ctld, m, sequence) for m in submitted)
    jobs = [int(j) for j in sequence.job_id if int(j) in policy_arm and int(j) in own_arm]
    row = {int(j): k for k, j in enumerate(sequence.job_id)}
    own = np.array([own_arm[j] for j in jobs])
    pol = np.array([policy_arm[j] for j in jobs])
    measured = gain(pol[:, 1] - pol[:, 0], own[:, 1] - own[:, 0], args.groups)
    origin = math.floor(float(own[:, 0].min()) / 60) * 60
    submit, run = own[:, 0] - origin, np.maximum(own[:, 2] - own[:, 1], 0.0)
    cpus = np.array([int(sequence.procs_req[row[j]]) for j in jobs])
    limit = np.array([60.0 * max(1, math.ceil(float(sequence.time_req[row[j]]) / 60.0)) for j in jobs])
    result = {"jobs": len(jobs), "policy": args.policy, "first": args.first, "scale": args.scale, "groups": args.groups,
              "measured_mean_wait_s": {"policy": float((pol[:, 1] - pol[:, 0]).mean()),
                                       "slurm_own": float((own[:, 1] - own[:, 0]).mean())},
              "measured_gain_pct": measured}
    order = np.argsort(submit, kind="stable")  # the simulator takes jobs in submit order
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    slurm = SimConfig.slurm(bf_interval=1, bf_resolution=60, node_procs=256)
    for label, config in (("slurm", slurm), ("slurm_top16", replace(slurm, policy_top=16)),
                          ("easy", SimConfig(backfill="easy"))):
        waits = {p: simulated_waits(submit[order], run[order], cpus[order], limit[order], p, config)[back]
                 for p in (args.policy, "fcfs")}
        result[f"predicted_gain_pct_{label}"] = gain(waits[args.policy], waits["fcfs"], args.groups)
        result[f"predicted_mean_wait_s_{label}"] = {p: float(w.mean()) for p, w in waits.items()}
        fit = check(waits["fcfs"] + submit, own[:, 1] - origin)
        result[f"model_of_slurm_own_{label}"] = {"median_start_error_s": fit.mae_s, "tau": fit.tau}
    (out / "gain.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
