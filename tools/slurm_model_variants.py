"""Which model of Slurm's own order matches what Slurm did on shadow cycle logs (issue 48's open target).

For each log: Slurm's mean wait, then the model's check (median |predicted - actual start|, Kendall tau, mean
predicted - actual) for the arrivals batched to scheduling passes of P seconds (each job's submit moved up to the
next multiple of P after it: Slurm defers the scheduling of batch jobs, `batch_sched_delay`, 3 s by default) and for
the replay with or without backfilling. `schedrl slurm report` uses P = 1 s after the fact (`START_LATENCY_S`) and
conservative backfilling.

    python tools/slurm_model_variants.py LOG.jsonl [LOG.jsonl ...]
"""

from __future__ import annotations

import sys

import numpy as np


def variants(path: str, periods=(1, 2, 3, 4), backfills=("conservative", "none")) -> list[tuple]:
    from schedrl.eval.policies import run_policy
    from schedrl.metrics import job_metrics
    from schedrl.sim import SimConfig, Simulator
    from schedrl.slurm import model
    from schedrl.slurm.report import Log
    from schedrl.workload import Workload
    from schedrl.workload.fields import SWF_FIELDS

    log = Log.read(path)
    usable = max(c.get("usable") or 0 for c in log.cycles)
    done = sorted((j for j in log.jobs if j in log.start and j in log.end and log.end[j] >= log.start[j]),
                  key=lambda j: (log.jobs[j]["submit"], j))
    submit = np.array([log.jobs[j]["submit"] for j in done])
    start = np.array([log.start[j] for j in done])
    run = np.array([max(log.end[j] - log.start[j], 0.0) for j in done])
    t0, n = submit.min(), len(done)
    prio = model.priorities([log.jobs[j] for j in done], log.header.get("slurm_config") or {}, t0)
    rows = [("mean wait", float((start - submit).mean()))]
    for period in periods:
        batched = np.ceil((submit - t0 + 0.5) / period) * period
        cols = {f.name: np.full(n, -1, dtype=f.dtype) for f in SWF_FIELDS}
        cols.update(job_id=np.array(done), submit=batched.astype(np.int64), run=np.round(run).astype(np.int64),
                    time_req=np.maximum(np.ceil([log.jobs[j]["limit"] for j in done]), 1).astype(np.int64),
                    procs_req=np.array([log.jobs[j]["cpus"] for j in done]), status=np.ones(n, np.int64))
        workload = Workload(cols, max_procs=int(usable), max_nodes=int(usable), name="slurm-log")
        for backfill in backfills:
            sim = run_policy(model.SlurmModel(prio), Simulator(workload, SimConfig(discipline="list",
                                                                                   backfill=backfill)))
            c = model.check(batched + job_metrics(sim)["wait"], start - t0)
            rows.append((f"P={period} s, backfill {backfill}", c.mae_s, c.tau, c.bias_s, c.meets))
    return rows


def main(argv: list[str]) -> int:
    for path in argv:
        print(path)
        for row in variants(path):
            print("  " + (f"{row[0]}: {row[1]:.2f} s" if len(row) == 2 else
                          f"{row[0]}: median |error| {row[1]:.2f} s, tau {row[2]:.3f}, mean error {row[3]:+.2f} s"
                          f"{', meets the targets' if row[4] else ''}"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
