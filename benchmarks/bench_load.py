"""Trace load time, cold (first load: parse and fill the cache) and warm (from the parse cache).

Run: `python benchmarks/bench_load.py [--repeats N] [NAME ...]`. Traces are catalog names resolved
as everywhere else (repository `traces/`, user cache, `$SCHEDRL_TRACE_PATH`; `../shared/traces`
beside the repository is added when present). Every run uses a fresh temporary cache directory,
and the compiled scanner is loaded before timing, so "cold" measures parsing, not JIT compilation.
Targets: CEA-Curie (312k jobs) cold < 2 s; a 10k-job trace < 0.1 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from schedrl.workload.catalog import resolve_trace
from schedrl.workload.errors import TraceError
from schedrl.workload.swf import parse_swf, read_swf

TRACES = ("lublin_256", "SDSC-SP2", "HPC2N", "CEA-Curie")
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
TINY = b"; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n"


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench(path: Path, repeats: int, scratch: Path) -> tuple[int, float, float]:
    """(jobs read, median cold seconds, median warm seconds) for one trace."""
    cold, warm = [], []
    for i in range(repeats):
        os.environ["SCHEDRL_CACHE_DIR"] = str(scratch / f"{path.name}-{i}")
        cold.append(timed(lambda: read_swf(path)))
        warm.append(timed(lambda: read_swf(path)))
    jobs = read_swf(path).report.jobs_in
    return jobs, statistics.median(cold), statistics.median(warm)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(TRACES), help=f"catalog names (default: {' '.join(TRACES)})")
    parser.add_argument("--repeats", type=int, default=5, help="runs per trace; the median is reported")
    args = parser.parse_args(argv)
    if SHARED.is_dir():
        os.environ["SCHEDRL_TRACE_PATH"] = os.pathsep.join(filter(None, [os.environ.get("SCHEDRL_TRACE_PATH"), str(SHARED)]))
    parse_swf(TINY)  # load (or compile) the numba scanner outside the timings

    scratch = Path(tempfile.mkdtemp(prefix="schedrl-bench-"))
    print(f"{'trace':<12} {'jobs':>8} {'cold s':>8} {'warm s':>8}  (median of {args.repeats}; python {sys.version.split()[0]})")
    try:
        for name in args.names:
            try:
                path = resolve_trace(name)
            except TraceError as e:
                print(f"{name:<12} skipped: {e}")
                continue
            jobs, cold, warm = bench(path, args.repeats, scratch)
            print(f"{name:<12} {jobs:>8} {cold:>8.3f} {warm:>8.3f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
