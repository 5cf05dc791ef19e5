"""Scheduling metrics from a `Schedule`: per job, then aggregated."""

from schedrl.metrics.jobs import BSLD_TAU, job_metrics
from schedrl.metrics.summary import METRICS, UTIL_PREFIX, Metrics, check_metric, lower_is_better, summarize

__all__ = ["BSLD_TAU", "METRICS", "UTIL_PREFIX", "Metrics", "check_metric", "job_metrics", "lower_is_better", "summarize"]
