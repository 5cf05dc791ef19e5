"""`schedrl slurm report`'s replay on a site-sized shadow log: the model of Slurm's backfill scheduler, pass by pass.

A shadow log of N consecutive jobs of the default trace (256 CPUs, one node, uncompressed times: a week is about
1,000 jobs), as Slurm would have run them (the simulator's FCFS with EASY backfilling stands in for what happened;
it sets only the run's length here), `bf_interval=30` (Slurm's default), priorities by job size. Timed: the model of
Slurm's own order alone (`passes.plan`) and the whole estimate (`report.estimate`: the policy's order, SJF and a
kernel network, Slurm's and FCFS, three or four replays). Prints seconds per replay and passes per second.

    python benchmarks/bench_slurm_report.py [--jobs 1000 5000] [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

EPOCH = 1_795_000_000.0
CONFIG = {"PriorityType": "priority/multifactor", "PriorityWeightAge": "1000", "PriorityWeightJobSize": "1000",
          "PriorityMaxAge": "7-00:00:00", "SchedulerParameters": "bf_interval=30,bf_resolution=60"}


def shadow_log(n: int):
    """A `report.Log` of the default trace's jobs 30,000.. (n of them) as run on 256 CPUs."""
    from schedrl.eval.policies import resolve_policy, run_policy
    from schedrl.metrics import job_metrics
    from schedrl.sim import SimConfig, Simulator
    from schedrl.slurm.report import Log
    from schedrl.workload import read_swf
    from schedrl.workload.catalog import resolve_trace

    wl = read_swf(resolve_trace("default"))[30_000:30_000 + n]
    sim = run_policy(resolve_policy("fcfs"), Simulator(wl, SimConfig(backfill="easy")))
    wait = job_metrics(sim)["wait"]
    submit = EPOCH + np.asarray(wl.submit, float) - float(wl.submit[0])
    run = np.asarray(wl.run, float)
    jobs, start, end = {}, {}, {}
    for k in range(n):
        job = int(wl.job_id[k])
        size = 1000.0 * float(wl.procs_req[k]) / 256
        jobs[job] = {"kind": "job", "job": job, "submit": float(submit[k]), "cpus": int(wl.procs_req[k]),
                     "limit": float(max(wl.time_req[k], 60)), "priority": int(size), "static": size}
        start[job] = float(submit[k] + wait[k])
        end[job] = start[job] + run[k]
    header = {"kind": "header", "mode": "shadow", "policy": "sjf", "top": 16, "partition": "batch",
              "slurm_config": CONFIG}
    return Log(header, jobs, start, end, [{"usable": 256, "nodes": 1, "order": []}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--quick", action="store_true", help="500 jobs, SJF only")
    args = parser.parse_args()
    from schedrl.eval.policies import resolve_policy
    from schedrl.slurm import model
    from schedrl.slurm.passes import BackfillParams, pass_times, plan
    from schedrl.slurm.report import estimate

    sizes = [500] if args.quick else args.jobs
    policies = ["sjf"] if args.quick else ["sjf", "zoo:rlscheduler-default-s0"]
    for n in sizes:
        log = shadow_log(n)
        done = sorted(log.jobs, key=lambda j: (log.jobs[j]["submit"], j))
        submit = np.array([log.jobs[j]["submit"] for j in done]) - EPOCH
        run = np.array([log.end[j] - log.start[j] for j in done])
        cpus = np.array([log.jobs[j]["cpus"] for j in done])
        limit = np.array([log.jobs[j]["limit"] for j in done])
        params = BackfillParams.from_config(CONFIG)
        passes = pass_times(0.0, float(max(log.end.values()) - EPOCH), params.interval_s)
        prio = model.priorities([log.jobs[j] for j in done], CONFIG, EPOCH)
        t0 = time.perf_counter()
        plan(submit, run, cpus, limit, lambda t, q, s: prio.at(t, q), passes, 256, 256, params, epoch=EPOCH)
        alone = time.perf_counter() - t0
        days = float(max(log.end.values()) - EPOCH) / 86400
        print(f"{n} jobs ({days:.1f} days, {len(passes):,} passes at {params.interval_s:g} s): Slurm's order alone "
              f"{alone:.2f} s ({len(passes) / alone:,.0f} passes/s)")
        for spec in policies:
            t0 = time.perf_counter()
            e = estimate(log, resolve_policy(spec), "bsld", 10)
            took = time.perf_counter() - t0
            print(f"  estimate with {spec}: {took:.2f} s (policy, Slurm, FCFS replays); bsld {e.policy:.3g} vs "
                  f"{e.slurm:.3g}, model check on the stand-in log: tau {e.model['tau']:.3f}")


if __name__ == "__main__":
    main()
