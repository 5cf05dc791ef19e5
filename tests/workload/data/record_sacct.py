"""Record `sacct_local.txt`, `sacct_local_utc.txt` and `sinfo_local.txt` from a private Slurm with accounting.

Run as root (the jobs of `nobody` and `daemon` are submitted with runuser) on a machine with
slurm-wlm, munge, slurmdbd and mariadb-server installed:

    .venv/bin/python tests/workload/data/record_sacct.py

It starts the test harness's cluster (`tests/slurm_cluster.py`: two nodes of 32 CPUs, MariaDB and
slurmdbd), submits the job mix below, waits for the time-limited job to be killed, and writes the
three files next to this script. About two minutes. See README.md here for what each file shows.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from slurm_cluster import SlurmCluster  # noqa: E402  (tests/ on the path first)

FIELDS = ("JobID,JobIDRaw,JobName,User,Group,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,"
          "ReqCPUS,AllocCPUS,ReqNodes,AllocNodes,State,TotalCPU")
# the same data in another order with fields the importer ignores, as `--parsable` (a trailing `|`)
FIELDS_SHUFFLED = ("State,JobIDRaw,JobID,Submit,Start,End,Elapsed,Timelimit,AllocCPUS,ReqCPUS,User,Group,"
                   "Partition,Account,NodeList,ExitCode,NNodes,ReqMem,JobName,QOS,Eligible,ReqNodes,AllocNodes,TotalCPU")
SINFO_FORMAT = "%N|%P|%c|%l"


def state(cluster: SlurmCluster, job: str) -> str:
    out = cluster.run("squeue", "--noheader", "--states=all", f"--jobs={job}", "--format=%T", check=False).stdout
    return out.split()[0] if out.split() else "GONE"


def submit_mix(c: SlurmCluster) -> dict[str, str]:
    """The job mix; returns what each job id is for (written into README.md by hand)."""
    jobs = {}
    # first, while both nodes are free: a whole-machine job does not wait behind the others
    jobs["daemon, two whole nodes"] = c.sbatch("-N", "2", "--exclusive", "--time=1", "--wrap", "sleep 2",
                                               user="daemon")
    jobs["small"] = c.sbatch("--job-name=small", "-n", "1", "--time=5", "--wrap", "sleep 2")
    jobs["four tasks, 30 s limit"] = c.sbatch("-n", "4", "--time=0:30", "--wrap", "sleep 3")
    jobs["nobody, short partition"] = c.sbatch("-p", "short", "--job-name=analysis", "-c", "8", "--wrap", "sleep 2",
                                               user="nobody")
    jobs["fails with exit 3"] = c.sbatch("-n", "2", "--time=2-00:00:00", "--wrap", "sleep 1; exit 3")
    jobs["hits its 1-minute limit"] = c.sbatch("--time=1", "--wrap", "sleep 300")
    jobs["two srun steps"] = c.sbatch("-n", "2", "--wrap", "srun -n 2 sleep 1; srun -n 1 sleep 1")
    jobs["array of 4"] = c.sbatch("--array=0-3", "-p", "short", "--wrap", "sleep 2", user="nobody")
    jobs["throttled array"] = c.sbatch("--array=0-5%1", "-c", "2", "--wrap", "sleep 30")
    jobs["cancelled running"] = c.sbatch("--wrap", "sleep 100")
    jobs["heterogeneous"] = c.sbatch("-n", "1", ":", "-n", "2", "--wrap", "srun --het-group=0,1 sleep 2")
    jobs["begins 10 s later"] = c.sbatch("--begin=now+10", "--wrap", "sleep 1")
    jobs["name with spaces"] = c.sbatch("--job-name=name with spaces", "-p", "short", "--time=10:00", "--wrap",
                                        "sleep 4", user="daemon")
    jobs["still running"] = c.sbatch("--wrap", "sleep 600")
    c.wait_for(lambda: state(c, jobs["still running"]) == "RUNNING", 30, "the long job running")
    # whole-machine jobs wait for resources behind the long job; held jobs are never eligible, and
    # sacct's time window selects only jobs that became eligible: the held one is not in its output
    jobs["array cancelled pending"] = c.sbatch("--array=0-4", "-N", "2", "--exclusive", "--wrap", "sleep 1")
    jobs["cancelled pending"] = c.sbatch("-N", "2", "--exclusive", "--wrap", "sleep 1", user="daemon")
    jobs["still pending"] = c.sbatch("-N", "2", "--exclusive", "-p", "short", "--wrap", "sleep 1", user="nobody")
    jobs["array still pending"] = c.sbatch("--array=0-2", "-N", "2", "--exclusive", "-p", "short", "--wrap", "sleep 1")
    jobs["held (not in sacct's output)"] = c.sbatch("--hold", "--wrap", "sleep 1")
    time.sleep(2)
    c.run("scancel", jobs["array cancelled pending"])
    c.run("scancel", jobs["cancelled pending"])
    c.wait_for(lambda: state(c, jobs["cancelled running"]) == "RUNNING", 30, "the job to cancel running")
    time.sleep(3)
    c.run("scancel", jobs["cancelled running"])
    return jobs


def main() -> None:
    c = SlurmCluster(cpus=32, nodes=2, accounting=True, job_acct_gather=True,
                     partitions={"batch": "MaxTime=INFINITE", "short": "MaxTime=00:30:00 DefaultTime=00:05:00"})
    try:
        c.start()
        jobs = submit_mix(c)
        for what, job in jobs.items():
            print(f"{job:>4}  {what}")
        # slurmctld checks time limits about every 30 s; then the accounting record reaches slurmdbd
        c.wait_for(lambda: state(c, jobs["hits its 1-minute limit"]) == "TIMEOUT", 150, "the 1-minute job's TIMEOUT")
        time.sleep(5)
        (HERE / "sinfo_local.txt").write_text(c.run("sinfo", "--all", "--Node", f"--format={SINFO_FORMAT}").stdout)
        common = ("sacct", "--allusers", "--noconvert", "--starttime=now-1hours", "--endtime=now")
        env = {"SLURM_TIME_FORMAT": "standard"}
        (HERE / "sacct_local.txt").write_text(c.run(*common, "--parsable2", f"--format={FIELDS}",
                                                    extra_env={**env, "TZ": "Europe/Berlin"}).stdout)
        (HERE / "sacct_local_utc.txt").write_text(c.run(*common, "--parsable", f"--format={FIELDS_SHUFFLED}",
                                                        extra_env={**env, "TZ": "UTC"}).stdout)
    finally:
        survivors = c.stop()
        if survivors:
            print(f"left running: {survivors}", file=sys.stderr)


if __name__ == "__main__":
    main()
