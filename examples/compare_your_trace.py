"""Bring your own SWF trace: read it, see what cleaning did to it, and compare the heuristics on it.

    python examples/compare_your_trace.py my_cluster.swf.gz                   # your log (.swf or .swf.gz)
    python examples/compare_your_trace.py                                     # a stand-in trace, written first

The same as `schedrl compare --trace my_cluster.swf.gz --backfill none,easy --sequences 10 --jobs 1024`, as library
calls:

1. `load_trace(path)` reads the Standard Workload Format (the 18 fields, one job a line; header comments such as
   `; MaxProcs: 128` give the machine's size) and applies the default cleaning rules. `workload.report` says what
   they dropped or repaired: real logs hold cancelled jobs, jobs wider than the machine, missing requested times.
2. `choose_starts` draws the windows the policies are compared on: `--sequences` windows of `--jobs` consecutive
   jobs, seeded, so the same command gives the same windows.
3. `compare` schedules every window with every policy under every backfilling strategy and tabulates the metric's
   mean (`to_text`, `to_markdown`, `to_csv`, `to_json`; `per_sequence` values in `values`).

Without a path the script writes a stand-in: 2,000 jobs of the Lublin-Feitelson model for a 128-processor machine
(what `schedrl traces generate lublin --jobs 2000 --nodes 128` writes), plus two lines as real logs have them, a
cancelled job and a job wider than the machine, for the cleaning to deal with.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from schedrl.eval.compare import choose_starts, compare
from schedrl.workload.catalog import load_trace
from schedrl.workload.lublin import generate_lublin
from schedrl.workload.swf import write_swf

# two job lines as logs have them (the 18 SWF fields): job 2001 was cancelled before it ran (run time -1,
# status 5); job 2002 asks for 256 processors of a 128-processor machine
DIRTY_LINES = ("2001 1700000 -1 -1 -1 -1 -1 8 3600 -1 5 -1 -1 -1 -1 -1 -1 -1\n"
               "2002 1700100 -1 600 256 -1 -1 256 3600 -1 1 -1 -1 -1 -1 -1 -1 -1\n")


def write_stand_in(path: Path) -> Path:
    """A 2,000-job Lublin-model trace for 128 processors, with `DIRTY_LINES` appended, as an SWF file."""
    write_swf(generate_lublin(2000, nodes=128, seed=3), path)
    with open(path, "a") as f:
        f.write(DIRTY_LINES)
    return path


def main(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", help="an SWF file (default: write the stand-in to a temporary folder)")
    parser.add_argument("--policies", default="fcfs,sjf,wfp3,unicep,f1", help="heuristics, comma-separated")
    parser.add_argument("--backfill", default="none,easy", help="backfilling strategies, comma-separated")
    parser.add_argument("--metric", default="bsld", help="bsld, wait, turnaround, slowdown, utilization, fairness")
    parser.add_argument("--sequences", type=int, default=10, help="windows compared (default 10)")
    parser.add_argument("--jobs", type=int, default=1024, help="jobs per window (default 1024)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the windows' starts (default 1)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.trace) if args.trace else write_stand_in(Path(tmp) / "stand_in.swf")
        workload = load_trace(path)  # parsed once, then cached by content
    print(workload.report.summary())
    starts = choose_starts(workload, args.jobs, args.sequences, args.seed)
    result = compare(workload, args.policies.split(","), args.backfill.split(","), starts, args.jobs, args.metric,
                     progress=False)
    print(result.to_text())
    return result


if __name__ == "__main__":
    main()
