"""`python -m schedrl.dtsim fidelity`: RLSchert Table 7's heuristics on the discrete-time cluster.

    python -m schedrl.dtsim fidelity [--sequences 16] [--seed 0] [--kill] [--jobs FILE|synthetic]

Bad input (a missing or malformed job file, a bad setting) prints one `error:` line and exits 2.
"""

from __future__ import annotations

import argparse
import sys
import time

from schedrl.dtsim.config import ESTIMATES, REQUEUE_ESTIMATES, DTSimConfig
from schedrl.dtsim.fidelity import fidelity, format_rows
from schedrl.dtsim.heuristics import KillRule
from schedrl.dtsim.jobs import load_jobs, synthetic_jobs, vasp_jobs_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m schedrl.dtsim", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fid = sub.add_parser("fidelity", help="average slowdown of Tetris, Random, SJF, Tetris*, SAF next to RLSchert Table 7")
    fid.add_argument("--sequences", type=int, default=16, help="seeded job sequences (RLSchert: 16)")
    fid.add_argument("--seed", type=int, default=0, help="seed of the sequences and of Random")
    fid.add_argument("--jobs", default=None,
                     help="job CSV (default: ../shared/data/rlschert-vasp-jobs.csv.gz), or 'synthetic'")
    fid.add_argument("--kill", action="store_true", help="also the rows with RLSchert's rule-based kill policy")
    fid.add_argument("--res-slot", type=int, default=20, help="resource units (RLSchert Table 2: 12-24)")
    fid.add_argument("--job-rate", type=float, default=0.7, help="arrival probability per step")
    fid.add_argument("--simu-len", type=int, default=200, help="arrival steps per sequence")
    fid.add_argument("--estimates", choices=ESTIMATES, default="running", help="running re-estimates or pre-run only")
    fid.add_argument("--kill-error", choices=("absolute", "relative"), default="absolute",
                     help="the kill rule's 'related error run_i - len_param > 1': absolute steps or relative to len_param")
    fid.add_argument("--requeue-estimate", choices=REQUEUE_ESTIMATES, default="latest",
                     help="a killed job is requeued with its latest re-estimate or its pre-run prediction")
    args = parser.parse_args(argv)
    try:
        config = DTSimConfig(res_slot=args.res_slot, job_rate=args.job_rate, simu_len=args.simu_len,
                             estimates=args.estimates, requeue_estimate=args.requeue_estimate)
        if args.jobs == "synthetic":
            table = synthetic_jobs(5000, seed=args.seed)
        else:
            table = load_jobs(args.jobs or vasp_jobs_path())
        t0 = time.perf_counter()
        rows = fidelity(table, config, args.sequences, args.seed)
        if args.kill:
            rule = KillRule(relative=args.kill_error == "relative")
            rows += fidelity(table, config, args.sequences, args.seed, kill=rule)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"jobs: {table.source} ({len(table)}); {args.sequences} sequences, seed {args.seed}; res_slot {config.res_slot}, "
          f"job_rate {config.job_rate}, simu_len {config.simu_len}, num_nw {config.num_nw}, "
          f"time_horizon {config.time_horizon}, estimates {config.estimates}"
          f"{f', kill error {args.kill_error}, requeue estimate {config.requeue_estimate}' if args.kill else ''}; {time.perf_counter() - t0:.1f} s")
    print(format_rows(rows))
    print("Tables 7 and 8 are RLSchert's VASP jobs at res_slot 20, job_rate 0.7, simu_len 200: compare at those settings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
