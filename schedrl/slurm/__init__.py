"""A policy ordering a Slurm partition's queue: `schedrl slurm run`, `report`, `reset` (docs/slurm.md).

client.py     the Slurm commands (squeue, sinfo, scontrol), failures as one line
snapshot.py   squeue/sinfo output -> the partition's jobs, the ones left alone, a paused Simulator
order.py      a policy's order for the top K (pick, remove, pick again), its time budget, the machine-size check
guard.py      starving jobs first, whatever the policy says
mechanism.py  the order as nice values in bands above Slurm's own priorities (why Nice= and not Priority=)
lock.py       one live adapter per cluster (flock)
lease.py      the state file: the nice values set, the originals, the lease's expiry (written ahead of changes)
audit.py      every change, one JSON line
cyclelog.py   what each cycle saw and decided, for the report
adapter.py    the cycle: live, shadow or dry-run; restore (reset, clean stop, expired lease)
report.py     agreement with Slurm's starts, and the replay of the logged jobs under both orders
"""
