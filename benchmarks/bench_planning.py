"""Decision latency of the inspector's online planning baseline (`plan:BASE`, `schedrl.eval.planning`) on a large queue.

The queue is `bench_slurm.py`'s: squeue/sinfo output for 5,000 pending and 1,000 running jobs on a 100,000-core
partition (the default trace's jobs, sizes scaled to the machine), read by the Slurm adapter (`Snapshot.read`) into a
simulator paused at the snapshot (`snapshot.simulator`). One planning decision at that point (accept or reject the
base's proposal: its model of what is known, `samples` x (`depth` + 1) rollouts) is timed for several settings. In a
Slurm cycle the inspector decides for the head of the queue once: its latency is one decision (plus the adapter's
cycle, 31-65 ms, `bench_slurm.py`). Target: <= 1 s per cycle at 5,000 pending jobs.
Run: `python benchmarks/bench_planning.py [--repeats 5]`.
"""

from __future__ import annotations

import argparse
import statistics
import time

SETTINGS = ("plan:f1", "plan:f1:samples=8", "plan:f1:depth=3", "plan:f1:max_queue=1024",
            "plan:f1:max_queue=5000", "plan:f1:max_queue=5000:horizon=256", "plan:sjf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="decisions timed per setting (default 5)")
    args = parser.parse_args()
    from bench_slurm import NOW, queue_text

    from schedrl.eval.planning import from_spec
    from schedrl.sim import DECIDE_PICK
    from schedrl.slurm.snapshot import Snapshot, simulator

    squeue, sinfo = queue_text()
    snap = Snapshot.read(squeue, sinfo, "batch", float(NOW))
    print(f"queue: {len(snap.pending):,} pending and {len(snap.running):,} running jobs on {snap.machine.usable:,} "
          f"cores")
    print(f"{'setting':38s} {'median ms':>10s} {'max ms':>8s} {'rollouts':>9s} {'decision':>9s}")
    for spec in SETTINGS:
        times, decision = [], None
        for r in range(args.repeats + 1):  # the first compiles
            sim = simulator(snap)
            code = sim.advance()
            assert code == DECIDE_PICK, code
            policy = from_spec(spec)
            policy.seed = r
            t0 = time.perf_counter()
            decision = policy.defer(sim)
            if r:
                times.append(time.perf_counter() - t0)
        print(f"{spec:38s} {1e3 * statistics.median(times):10.1f} {1e3 * max(times):8.1f} {policy.rollouts:9d} "
              f"{'reject' if decision else 'accept':>9s}")
    print("target: <= 1,000 ms per Slurm cycle (one decision per cycle)")


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
