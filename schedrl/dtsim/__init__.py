"""The discrete-time cluster of DeepRM and RLSchert (numpy only; no RL imports).

One pool of resource units, time in steps, a canvas of future allocations, visible waiting slots,
a backlog, a running queue with kill-and-requeue, Bernoulli arrivals over a job table (RLSchert's
VASP jobs or a synthetic stand-in), and the heuristics RLSchert compares against.
"""

from schedrl.dtsim.cluster import DTSim
from schedrl.dtsim.config import DTSimConfig
from schedrl.dtsim.jobs import JobDataError, JobTable, load_jobs, synthetic_jobs, vasp_jobs_path
from schedrl.dtsim.metrics import JobRecords, Summary, summarize
from schedrl.dtsim.sequence import JobSequence, sample_sequence

__all__ = ["DTSim", "DTSimConfig", "JobDataError", "JobRecords", "JobSequence", "JobTable", "Summary",
           "load_jobs", "sample_sequence", "summarize", "synthetic_jobs", "vasp_jobs_path"]
