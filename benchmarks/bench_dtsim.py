"""Discrete-time cluster (schedrl.dtsim) throughput: stepped from Python as an RL env would, and heuristic runs.

    python benchmarks/bench_dtsim.py [--repeats 5] [--sequences 16]

Every case runs once untimed first (numba compilation and cache loading are excluded), then
`--repeats` times; the table shows the median. Jobs are RLSchert's VASP jobs from
`../shared/data` when present, else the synthetic stand-in; sequences at the paper's settings
(res_slot 20, job_rate 0.7, simu_len 200, num_nw 5, time_horizon 120). Times include building a
`DTSim` for each sequence but not reading the job file.

- Stepped: `valid_actions()` then `step()` with a uniformly random valid action, every step, until
  the episode ends; env steps per second, on the first 4 sequences (random kills keep these
  episodes long, many reach the 3,000-step cap, so this is mostly steady-state stepping).
- Heuristic runs: `run(sim, policy)` over all sequences; actions (decisions) per second and
  episodes per second, for SJF, Tetris and SJF with RLSchert's kill rule.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from schedrl.dtsim import DTSim, DTSimConfig, load_jobs, sample_sequence, synthetic_jobs
from schedrl.dtsim.heuristics import make_policy, run
from schedrl.dtsim.jobs import VASP_FILENAME, shared_data_dir


def _median_time(fn, repeat: int) -> tuple[float, object]:
    result = fn()  # warm-up: compilation / cache load
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _stepped(table, sequences, config):
    def go() -> int:
        rng = np.random.default_rng(0)
        steps = 0
        for seq in sequences:
            sim = DTSim(table, seq, config)
            while not sim.done:
                valid = np.flatnonzero(sim.valid_actions())
                sim.step(int(valid[int(rng.random() * len(valid))]))
                steps += 1
        return steps

    return go


def _heuristic(table, sequences, config, name: str, kill: bool):
    def go() -> int:
        actions = 0
        for i, seq in enumerate(sequences):
            sim = DTSim(table, seq, config)
            policy = make_policy(name, seed=i, kill=kill)
            while not sim.done:
                sim.step(policy.act(sim))
                actions += 1
        return actions

    return go


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per case; the median is reported")
    parser.add_argument("--sequences", type=int, default=16, help="job sequences (RLSchert's test set: 16)")
    args = parser.parse_args()
    path = shared_data_dir() / VASP_FILENAME
    table = load_jobs(path) if path.is_file() else synthetic_jobs(5000, seed=0)
    config = DTSimConfig()
    rng = np.random.default_rng(0)
    sequences = [sample_sequence(table, config, rng) for _ in range(args.sequences)]
    # sanity: a heuristic run finishes every job
    summary = run(DTSim(table, sequences[0], config), make_policy("sjf"))

    rows = []
    t, steps = _median_time(_stepped(table, sequences[:4], config), args.repeats)
    rows.append((f"stepped, random valid actions x{len(sequences[:4])}", f"{steps / t:,.0f} steps/s", f"{t * 1e3:.1f} ms"))
    for name, kill, label in (("sjf", False, "SJF"), ("tetris", False, "Tetris"), ("sjf", True, "SJF + kill rule")):
        t, actions = _median_time(_heuristic(table, sequences, config, name, kill), args.repeats)
        rows.append((f"run {label} x{len(sequences)}", f"{actions / t:,.0f} actions/s",
                     f"{t * 1e3:.1f} ms ({len(sequences) / t:,.1f} episodes/s)"))

    print(f"median of {args.repeats} runs; python {sys.version.split()[0]}; jobs {table.source} ({len(table)})")
    widths = [max(len(r[i]) for r in rows + [("case", "throughput", "median time")]) for i in range(3)]
    print(f"{'case':<{widths[0]}}  {'throughput':>{widths[1]}}  {'median time':>{widths[2]}}")
    for case, rate, wall in rows:
        print(f"{case:<{widths[0]}}  {rate:>{widths[1]}}  {wall:>{widths[2]}}")
    print(f"SJF on sequence 0: {summary.finished}/{summary.jobs} jobs finished, average slowdown {summary.avg_slowdown:.2f}")


if __name__ == "__main__":
    main()
