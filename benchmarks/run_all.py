"""Every benchmark, one after the other, as one command.

    python benchmarks/run_all.py [load sim policy scaling agents ... slurm] [--quick]

Runs each `bench_*.py` of this folder with this interpreter (its own process, so one benchmark's
compiled code, threads or Ray instance never skews the next), streams its table, and ends with a
summary of what ran, how long it took, and whether it succeeded. The exit status is 1 if any
benchmark failed. `--quick` gives every benchmark a tiny budget (one repeat, one scaling
combination): a smoke run that checks the benchmarks still work, not numbers to report.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

BENCHMARKS = {
    "load": ("bench_load.py", ["--repeats", "1"]),
    "sim": ("bench_sim.py", ["--repeats", "1"]),
    "policy": ("bench_policy.py", ["--repeats", "200"]),
    "scaling": ("bench_scaling.py", ["--runners", "0", "--envs", "8", "--iterations", "1"]),
    "agents": ("bench_agents.py", ["--quick"]),
    "dtsim": ("bench_dtsim.py", ["--repeats", "1", "--sequences", "4"]),
    "train": ("bench_train.py", ["--quick"]),
    "leaderboard": ("bench_leaderboard.py", ["--quick"]),
    "slurm": ("bench_slurm.py", ["--quick"]),
    "slurm-report": ("bench_slurm_report.py", ["--quick"]),
    "bound": ("bench_bound.py", ["--quick"]),
    "slurm-backfill": ("bench_slurm_backfill.py", ["--quick"]),
}
"""name -> (script, its arguments under --quick)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to run, from {', '.join(BENCHMARKS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="tiny budgets: check that each benchmark runs")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    names = list(dict.fromkeys(args.names)) or list(BENCHMARKS)
    summary = []
    for name in names:
        script, quick = BENCHMARKS[name]
        command = [sys.executable, str(HERE / script), *(quick if args.quick else [])]
        print(f"== {name}: {' '.join(command[1:])}", flush=True)
        t0 = time.perf_counter()
        status = subprocess.run(command).returncode
        summary.append((name, time.perf_counter() - t0, status))
        print(flush=True)
    print("== summary")
    for name, seconds, status in summary:
        print(f"{name:<8} {seconds:7.1f} s  {'ok' if status == 0 else f'FAILED (exit {status})'}")
    return 1 if any(status for _, _, status in summary) else 0


if __name__ == "__main__":
    sys.exit(main())
