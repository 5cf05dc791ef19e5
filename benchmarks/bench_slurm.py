"""One decision cycle of `schedrl slurm run` on a large queue, and the cost of applying its changes.

The cycle, timed on squeue/sinfo output in the adapter's format (client.SQUEUE_FORMAT, lines as the private Slurm of
tests/slurm_cluster.py prints them) for 5,000 pending and 1,000 running jobs on a 100,000-core partition: parse
(`Snapshot.read`), the simulator at the snapshot (`snapshot.simulator`), the policy's top K (`order.rank`: pick,
remove, pick again), and the nice changes to make (`NiceBands.plan`). The jobs are the default trace's, sizes scaled
to the machine (x390), submitted over the last day; the running ones hold 98% of the cores. Timed for SJF, F1 and
RLScheduler's kernel network (untrained weights: the same cost as trained ones), for K = 32 and 128, first cycle
(every ranked job changes) and steady state (the head started, one job entered: few change). Target: <= 100 ms.

Applying is timed apart, on a private Slurm when one is installed: one scontrol process fed `update JobId=J Nice=N`
lines for the changed jobs only (32 and 128 of them), as the adapter does.
Run: `python benchmarks/bench_slurm.py [--repeats 20] [--quick]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

PENDING, RUNNING, CORES = 5_000, 1_000, 100_000
NOW = 1_795_000_000


def queue_text(seed: int = 0) -> tuple[str, str]:
    """squeue and sinfo output of the large partition."""
    from schedrl.workload import read_swf
    from schedrl.workload.catalog import resolve_trace

    rng = np.random.default_rng(seed)
    wl = read_swf(resolve_trace("default"))
    rows = rng.choice(len(wl), PENDING + RUNNING, replace=False)
    procs = np.minimum(np.asarray(wl.procs_req)[rows] * (CORES // 256), CORES)
    limits = np.asarray(wl.time_req)[rows]
    submit = NOW - rng.integers(60, 86_400, len(rows))
    running_cpus = procs[PENDING:]
    running_cpus = np.maximum(running_cpus * (0.98 * CORES / running_cpus.sum()), 1).astype(int)
    lines = []
    for k in range(PENDING + RUNNING):
        job = 1_000_000 + k
        limit = f"{int(limits[k]) // 60}:{int(limits[k]) % 60:02d}"
        if k < PENDING:
            lines.append(f"{job}|{job}|batch|PENDING|{procs[k]}|{max(procs[k] // 128, 1)}|{limit}|{submit[k]}|N/A|N/A|"
                         f"{int(rng.integers(1, 20_000))}|0|{'Resources' if k == 0 else 'Priority'}|(null)|(null)")
        else:
            start = submit[k] + int(rng.integers(0, 3_600))
            cpus = running_cpus[k - PENDING]
            lines.append(f"{job}|{job}|batch|RUNNING|{cpus}|{max(cpus // 128, 1)}|{limit}|{submit[k]}|{start}|"
                         f"{start + int(limits[k])}|1|0|None|(null)|(null)")
    used = int(running_cpus.sum())
    return "\n".join(lines) + "\n", f"{used}/{CORES - used}/0/{CORES}|{CORES // 128}|2-00:00:00\n"


def kernel_policy():
    """RLScheduler's kernel network with untrained weights, as a policy."""
    import gymnasium as gym
    import torch

    from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE, OBS_ACTION_MASK, OBS_JOBS
    from schedrl.agents.rlscheduler.modules import module_spec
    from schedrl.agents.rlscheduler.observation import JobFeatures, n_features
    from schedrl.agents.rlscheduler.policy import CheckpointPolicy

    torch.set_num_threads(1)
    f = n_features(1)
    space = gym.spaces.Dict({OBS_JOBS: gym.spaces.Box(0.0, 1.0, (MAX_OBSV_SIZE, f), np.float32),
                             OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, (MAX_OBSV_SIZE,), np.float32)})
    spec = module_spec("kernel")
    spec.observation_space, spec.action_space, spec.inference_only = space, gym.spaces.Discrete(MAX_OBSV_SIZE), True
    norm = JobFeatures(time_scale=130_000.0, user_scale=1.0, group_scale=1.0, app_scale=1.0, id_fields=())
    policy = CheckpointPolicy(spec.build().eval(), {"norm": norm.to_dict()})
    policy.name = "RLScheduler kernel"
    return policy


def cycle(squeue: str, sinfo: str, policy, k: int, bands, nice_now: dict | None = None, original=None):
    """One decision cycle; returns (seconds of each stage, order, changes)."""
    from schedrl.slurm.order import rank
    from schedrl.slurm.snapshot import Snapshot

    t0 = time.perf_counter()
    snap = Snapshot.read(squeue, sinfo, "batch", float(NOW))
    t1 = time.perf_counter()
    order = rank(policy, snap, k)
    t2 = time.perf_counter()
    nice = {j.job_id: j.nice for j in snap.pending} if nice_now is None else nice_now
    changes = bands.plan(order, nice, original if original is not None else dict.fromkeys(order, 0))
    t3 = time.perf_counter()
    return (t1 - t0, t2 - t1, t3 - t2, t3 - t0), order, changes


def time_cycles(repeats: int, ks: list[int], quick: bool) -> None:
    from schedrl.eval.policies import resolve_policy
    from schedrl.slurm.mechanism import NiceBands
    from schedrl.slurm.snapshot import Snapshot, simulator

    squeue, sinfo = queue_text()
    snap = Snapshot.read(squeue, sinfo, "batch", float(NOW))
    simulator(snap)  # compile
    t0 = time.perf_counter()
    simulator(snap)
    print(f"queue: {len(snap.pending):,} pending and {len(snap.running):,} running jobs on {snap.machine.usable:,} "
          f"cores ({len(squeue) / 1e6:.2f} MB of squeue output); simulator at the snapshot: "
          f"{(time.perf_counter() - t0) * 1e3:.1f} ms (inside 'order' below)")
    policies = [resolve_policy("sjf"), resolve_policy("f1")]
    try:
        policies.append(kernel_policy())
    except ImportError as e:  # torch/ray missing: heuristics only
        print(f"RLScheduler kernel: skipped ({e})")
    print(f"{'policy':20s} {'K':>4s} {'cycle':>6s} {'parse':>8s} {'order':>8s} {'plan':>8s} {'total ms':>9s} "
          f"{'fastest':>8s} {'changes':>8s}")
    for policy in policies:
        name = getattr(policy, "name", type(policy).__name__).upper() if len(getattr(policy, "name", "")) <= 4 \
            else policy.name
        for k in ks:
            bands = NiceBands(k, 60_002)
            cycle(squeue, sinfo, policy, k, bands)  # compile, load
            first = [cycle(squeue, sinfo, policy, k, bands) for _ in range(repeats)]
            _, order, changes = first[0]
            # steady state: the order applied, its head started, one job entered
            nice = {j.job_id: j.nice for j in snap.pending}
            nice.update({c.job: c.new for c in changes})
            original = dict.fromkeys(order, 0)
            head = order[0]
            started = squeue.replace(f"{head}|{head}|batch|PENDING|", f"{head}|{head}|batch|RUNNING|", 1)
            nice.pop(head)
            steady = [cycle(started, sinfo, policy, k, bands, nice, original) for _ in range(repeats)]
            for label, runs in (("first", first), ("steady", steady)):
                parse, rank_s, plan, total = (statistics.median(r[0][i] for r in runs) for i in range(4))
                fastest = min(r[0][3] for r in runs)
                print(f"{name[:20]:20s} {k:4d} {label:>6s} {parse * 1e3:8.1f} {rank_s * 1e3:8.1f} {plan * 1e3:8.2f} "
                      f"{total * 1e3:9.1f} {fastest * 1e3:8.1f} {len(runs[0][2]):8d}")
    print("ms, medians of the repeats (fastest: the quickest whole cycle); target: <= 100 ms per cycle here")


def time_apply(counts: list[int]) -> None:
    """scontrol batches on a private Slurm (tests/slurm_cluster.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from slurm_cluster import SlurmCluster, missing_binaries

    from schedrl.slurm.client import SlurmClient

    missing = missing_binaries()
    if missing:
        print(f"apply: skipped (Slurm not installed: no {', '.join(missing)})")
        return
    cluster = SlurmCluster(cpus=8, extra_conf="PriorityType=priority/multifactor")
    try:
        cluster.start()
        cluster.sbatch("--ntasks", "8", "--wrap", "sleep 300")
        jobs = [int(cluster.sbatch("--ntasks", "1", "--wrap", "sleep 1")) for _ in range(max(counts))]
        client = SlurmClient(env=cluster.env())
        print(f"{'apply: changed jobs':24s} {'scontrol batch ms':>18s} {'ms per job':>11s}")
        for n in counts:
            for value in (-1000, -2000):  # twice, so each timed batch really changes every job
                t0 = time.perf_counter()
                refused = client.set_nice([(job, value - k) for k, job in enumerate(jobs[:n])])
                seconds = time.perf_counter() - t0
            assert not refused, refused
            print(f"{n:24d} {seconds * 1e3:18.1f} {seconds * 1e3 / n:11.2f}")
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="3 repeats, K = 32 only, 32 changes applied")
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    time_cycles(repeats, [32] if args.quick else [32, 128], args.quick)
    print()
    time_apply([32] if args.quick else [32, 128])


if __name__ == "__main__":
    main()
