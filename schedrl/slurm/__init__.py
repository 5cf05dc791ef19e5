"""A policy ordering a Slurm partition's queue: `schedrl slurm run`, `report`, `reset`, `replay`, `explain`
(docs/slurm.md).

client.py     the Slurm commands (squeue, sinfo, sprio, scontrol, sbatch, scancel), failures as one line
snapshot.py   squeue/sinfo output -> the partition's jobs, the ones left alone, a paused Simulator
order.py      a policy's order for the top K (pick, remove, pick again; an inspector's rejections deferred), its time
              budget, the machine-size check
guard.py      starving jobs first, whatever the policy says
mechanism.py  the order as bonuses on the jobs' site factors (or nice values), in bands above Slurm's priorities
marks.py      the adapter's mark in a changed job's AdminComment (which adapter, the job's own value)
lock.py       one live adapter per cluster: the held lock job on Slurm's side (SlurmLock), the state dir's flock
lease.py      the state file: the values set, the jobs' own, the lease's expiry (written ahead of changes)
audit.py      every change, one JSON line
explain.py    why each moved job was placed (a tree's path, the site's overrides) and `slurm explain JOBID`
cyclelog.py   what each cycle saw and decided, for the report
adapter.py    the cycle: live, shadow or dry-run; restore (reset, clean stop, expired lease)
model.py      a model of Slurm's own order, and its check against the starts Slurm made
report.py     agreement with Slurm's starts, the replay under the policy and the model, how long to shadow
gate.py       the go-live gate: live mode only after a shadow report that is non-inferior
replay.py     a trace's jobs submitted to a Slurm in compressed time (`schedrl slurm replay`)
"""
