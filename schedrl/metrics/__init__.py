"""Scheduling metrics from a `Schedule`: per job, then aggregated."""

from schedrl.metrics.jobs import BSLD_TAU, job_metrics
from schedrl.metrics.summary import METRICS, Metrics, summarize

__all__ = ["BSLD_TAU", "METRICS", "Metrics", "job_metrics", "summarize"]
