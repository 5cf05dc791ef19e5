"""The live Slurm test's 100 jobs replayed in shadow on a private Slurm with slurmctld's backfill map logged.

What showed how Slurm's backfill scheduler plans (docs/slurm.md, "The model"): slurmctld runs with
`DebugFlags=Backfill,BackfillMap`, so its log holds every pass, every job tested and the node plan after each
reservation. The cycle log, slurmctld's log, its slurm.conf and `schedrl slurm report`'s output are kept in OUT.
Needs what the Slurm tests need (slurm-wlm, munge, slurmdbd, mariadb-server; see tests/slurm_cluster.py), and the
default trace.

    python tools/slurm_backfill_trace.py OUT [SCHEDULER_PARAMETERS]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "slurm")]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    import test_slurm_live as live
    from slurm_cluster import private_slurm
    from slurm_replay import replay

    out = Path(argv[0]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    params = argv[1] if len(argv) > 1 else "bf_interval=1,sched_interval=1,bf_resolution=60"
    conf = live.WEIGHTS.replace("DebugFlags=Backfill", "DebugFlags=Backfill,BackfillMap")
    sequence = live.read_swf(live.resolve_trace("default"))[live.WINDOW]
    with private_slurm(cpus=256, nodes=2, accounting=True,
                       partitions={"debug": "Nodes=n1 MaxTime=INFINITE", "other": "Nodes=n2 MaxTime=INFINITE"},
                       scheduler_parameters=params, extra_conf=conf) as cluster:
        adapter = live.AdapterProcess(cluster, out, "shadow", "other", "sjf", "--shadow")
        run = replay(cluster, sequence, "other", live.SCALE)
        final = run.finished(240)
        print(f"{len(run.submitted)} submitted, {len(final)} ended, errors: {run.errors or 'none'}")
        time.sleep(2)
        adapter.stop()
        shutil.copy(cluster.logs / "slurmctld.log", out / "slurmctld.log")
        shutil.copy(cluster.conf, out / "slurm.conf")
        report = subprocess.run([sys.executable, "-m", "schedrl", "slurm", "report", str(adapter.log), "--metric",
                                 "wait", "--windows", "5", "--slurmctld-log", str(out / "slurmctld.log"),
                                 "--state-dir", str(out / "state")], capture_output=True, text=True, env=cluster.env())
    (out / "report.txt").write_text(report.stdout + report.stderr)
    print(report.stdout + report.stderr)
    return report.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
