"""Write a new heuristic in Python and compare it with schedrl's own on the same sequences.

    python examples/new_heuristic.py
    python examples/new_heuristic.py --trace SDSC-SP2 --backfill none,easy --sequences 10 --jobs 1024

A heuristic is any object with a `pick(sim)` method (and a `name` for its column): at every decision the simulator
asks it which waiting job runs next. This one is LXF, "largest expansion factor first" (the expansion factor of a
waiting job is (wait + requested time) / requested time, the slowdown it would have if it started now): short jobs
rank high at once, long ones as their wait grows, so no job waits for ever, as it can under SJF.

What `pick` may read, and how a rule becomes a compiled built-in with a name on the command line:
docs/guides/add-a-heuristic.md.
"""

from __future__ import annotations

import argparse

import numpy as np

from schedrl.eval.compare import choose_starts, compare
from schedrl.workload.catalog import load_trace


class LargestExpansionFactor:
    """The waiting job with the largest (wait + requested time) / requested time runs next; ties to the earlier."""

    name = "LXF"

    def pick(self, sim) -> int:
        queue = sim.queue  # waiting jobs (indices into sim.workload), first come first
        requested = sim.workload.time_req[queue]
        wait = sim.now - sim.workload.submit[queue]
        return int(queue[np.argmax((wait + requested) / requested)])  # argmax: the first of equal ones


def main(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="default", help="catalog name or SWF file (default: the embedded trace)")
    parser.add_argument("--backfill", default="none,easy", help="backfilling strategies, comma-separated")
    parser.add_argument("--sequences", type=int, default=5, help="sequences compared (default 5)")
    parser.add_argument("--jobs", type=int, default=1024, help="jobs per sequence (default 1024)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    workload = load_trace(args.trace)
    starts = choose_starts(workload, args.jobs, args.sequences, args.seed)
    # names run schedrl's compiled heuristics; an object runs through its pick(sim)
    result = compare(workload, ["fcfs", "sjf", "f1", LargestExpansionFactor()], args.backfill.split(","), starts,
                     args.jobs, progress=False)
    print(result.to_text())
    return result


if __name__ == "__main__":
    main()
