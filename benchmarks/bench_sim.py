"""Simulator throughput: compiled heuristic runs, a whole production trace, and step-by-step driving.

    python benchmarks/bench_sim.py [--repeats 7]

Every case runs once untimed first (numba compilation and cache loading are excluded), then
`--repeats` times; the table shows the median. Times include building the `Simulator` for each
sequence (what a training loop pays per episode) but not reading the trace.

- Lublin-1: RLScheduler's 10 evaluation sequences of 1,024 jobs (`lublin_256.swf.gz`, RLScheduler
  cleaning). Throughput in job starts per second, summed over the 10 sequences.
- HPC2N: the full cleaned HPC2N-2002 trace (202,871 jobs), FCFS with EASY backfilling, wall time.
- Step by step: the Lublin-1 sequences driven from Python as an RL environment does, reading the
  queue and which queued jobs fit at every decision; decisions per second. With EASY most jobs
  start by backfilling between decisions; without backfilling every start is a decision.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from schedrl.heuristics.heuristic import get_heuristic
from schedrl.metrics import summarize
from schedrl.sim import FINISHED, SimConfig, Simulator
from schedrl.sim.state import N_STARTS
from schedrl.workload.catalog import resolve_trace
from schedrl.workload.cleaning import CleaningRules
from schedrl.workload.swf import read_swf

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
# RLScheduler's evaluation: 10 sequences of 1,024 jobs starting at these Lublin-1 positions
LUBLIN_STARTS = (1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085)
SEQUENCE_LENGTH = 1024


def _median_time(fn, repeat: int) -> tuple[float, object]:
    result = fn()  # warm-up: compilation / cache load
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _heuristic_runs(sequences, heuristic: str, config: SimConfig):
    policy = get_heuristic(heuristic)

    def run() -> int:
        starts = 0
        for seq in sequences:
            sim = Simulator(seq, config)
            policy.run(sim)
            starts += int(sim.state.iv[N_STARTS])
        return starts

    return run


def _step_by_step(sequences, config: SimConfig):
    def run() -> int:
        decisions = 0
        for seq in sequences:
            sim = Simulator(seq, config)
            while sim.advance() != FINISHED:
                queue = sim.queue
                fits = sim.fits(queue)
                # a stand-in for the policy: the first job that fits, else the oldest
                sim.pick(int(queue[fits.argmax()]) if fits.any() else int(queue[0]))
                decisions += 1
        return decisions

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per case; the median is reported")
    args = parser.parse_args()
    if SHARED.is_dir():
        os.environ["SCHEDRL_TRACE_PATH"] = os.pathsep.join(filter(None, [os.environ.get("SCHEDRL_TRACE_PATH"), str(SHARED)]))

    lublin = read_swf(resolve_trace("lublin_256"), CleaningRules.rlscheduler())
    sequences = [lublin[st:st + SEQUENCE_LENGTH] for st in LUBLIN_STARTS]
    hpc2n = read_swf(resolve_trace("HPC2N"))

    rows = []
    for heuristic, config, label in (
        ("sjf", SimConfig(backfill="easy"), "SJF + EASY"),
        ("fcfs", SimConfig(backfill="easy"), "FCFS + EASY"),
        ("fcfs", SimConfig.rlscheduler(backfill=True), "FCFS + rlscheduler backfill"),
        ("sjf", SimConfig.rlscheduler(backfill=True), "SJF + rlscheduler backfill"),
        ("sjf", SimConfig(backfill="conservative"), "SJF + conservative"),
    ):
        t, starts = _median_time(_heuristic_runs(sequences, heuristic, config), args.repeats)
        rows.append((f"Lublin-1 x10, {label}", f"{starts / t:,.0f} starts/s", f"{t * 1e3:.1f} ms"))

    t, starts = _median_time(_heuristic_runs([hpc2n], "fcfs", SimConfig(backfill="easy")), args.repeats)
    rows.append(("HPC2N full, FCFS + EASY", f"{starts / t:,.0f} starts/s", f"{t * 1e3:.1f} ms"))
    # sanity: every job finishes, and the machine is busy a plausible share of the time
    hpc2n_metrics = summarize(get_heuristic("fcfs").run(Simulator(hpc2n, SimConfig(backfill="easy"))))

    for config, label in ((SimConfig(backfill="easy"), "EASY"), (SimConfig(), "no backfill")):
        t, decisions = _median_time(_step_by_step(sequences, config), args.repeats)
        rows.append((f"Lublin-1 x10, step by step, {label}", f"{decisions / t:,.0f} decisions/s", f"{t * 1e3:.1f} ms"))

    print(f"median of {args.repeats} runs; python {sys.version.split()[0]}")
    widths = [max(len(r[i]) for r in rows + [("case", "throughput", "median time")]) for i in range(3)]
    print(f"{'case':<{widths[0]}}  {'throughput':>{widths[1]}}  {'median time':>{widths[2]}}")
    for case, rate, wall in rows:
        print(f"{case:<{widths[0]}}  {rate:>{widths[1]}}  {wall:>{widths[2]}}")
    print(f"HPC2N FCFS + EASY: {hpc2n_metrics.jobs:,} jobs finished, utilisation {hpc2n_metrics.utilization:.3f}, "
          f"mean bounded slowdown {hpc2n_metrics.avg_bsld:.1f}")


if __name__ == "__main__":
    main()
