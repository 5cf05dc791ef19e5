"""The whole leaderboard's wall time: every standard scenario (or `--scenarios`), each scored in this one process.

    python benchmarks/bench_leaderboard.py [--scenarios default,lublin1] [--quick]

Real traces come from ../shared/traces and ../shared/data (via `SCHEDRL_TRACE_PATH`, set here when it is unset);
a scenario whose data is absent is skipped and said. Prints, per scenario, the seconds its board took (trace
parsing from the parse cache, every baseline and every zoo policy and tuned rule that can run there, trained here
or transferred, on its evaluation sequences), how many methods ran and how many sequences, and the total, with the
machine's load average before and after (other processes on a shared machine slow it down: compare runs at
similar loads). The target (issue 45: the whole leaderboard in at most 10 minutes on the 2-core machine) is printed
beside it. `--quick`: the `default` scenario only, three sequences.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

TARGET_S = 600.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default=None, help="comma-separated scenario names (default: every standard one)")
    parser.add_argument("--quick", action="store_true", help="the default scenario, three sequences: a smoke run")
    args = parser.parse_args(argv)
    shared = Path(__file__).resolve().parents[2] / "shared"
    if not os.environ.get("SCHEDRL_TRACE_PATH"):
        os.environ["SCHEDRL_TRACE_PATH"] = os.pathsep.join(str(shared / d) for d in ("traces", "data"))
    from schedrl.eval import leaderboard as lb
    from schedrl.scenarios import get_scenario, standard

    names = ["default"] if args.quick else (args.scenarios.split(",") if args.scenarios else list(standard()))
    scenarios = [get_scenario(n) for n in names]
    before = os.getloadavg()
    started = time.perf_counter()
    result = lb.leaderboard(scenarios, lb.zoo_entrants() + lb.entry_points(), sequences=3 if args.quick else None,
                            skipped=lambda name, why: print(f"{name:16s} skipped: {why}", flush=True))
    total = time.perf_counter() - started
    after = os.getloadavg()
    print(f"{'scenario':18s} {'methods':>7s} {'cannot':>6s} {'sequences':>9s} {'seconds':>8s}")
    for b in result["scenarios"]:
        print(f"{b['scenario']:18s} {len(b['rows']):7d} {len(b.get('not_run', [])):6d} "
              f"{len(b['sequences']['ids']):9d} {b['seconds']:8.1f}")
    print(f"load average (1 min) {before[0]:.1f} before, {after[0]:.1f} after, on {os.cpu_count()} CPUs")
    print(f"total {total:.1f} s for {len(result['scenarios'])} scenarios "
          f"({len(result['skipped'])} skipped); target <= {TARGET_S:.0f} s: {'met' if total <= TARGET_S else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
