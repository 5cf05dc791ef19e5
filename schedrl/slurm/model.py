"""A model of Slurm's own order, checked against what Slurm did: the baseline of `schedrl slurm report`'s estimate.

Slurm's order (priority/multifactor, slurm.conf's weights as `scontrol show config` gives them): a pending job's
priority is its site factor + the weighted fair-share, job-size, partition, QOS, association and TRES factors - its
nice value (all fixed while it waits, up to fair-share's slow decay) + PriorityWeightAge x min(age / PriorityMaxAge,
1), where age counts from the job's eligible time. The cycle log records, at a job's first sight, sprio's priority
and weighted age (`static` = priority - weighted age: the fixed part), and the header the weights; a log without
them (written before) falls back to the squeue priority at first sight less the age it had then.

What Slurm starts, and when, is modelled by `schedrl.slurm.passes` (its backfill scheduler, pass by pass, with its
plan of nodes on the bf_resolution grid) in the order these priorities give. What a replay shows is the check:

- `mae_s`: the median over jobs of |predicted start - actual start| (seconds);
- `tau`: Kendall's tau-b between predicted and actual start times (the rank agreement of the start orders).

Targets (`TARGET_MEDIAN_S`, `TARGET_TAU`): set for the test cluster's compressed replays, where waits are a few
seconds. On slurmctld's millisecond times the model met them on every shadow replay measured (docs/slurm.md has the
table); on squeue's whole seconds a compressed replay cannot be checked (which pass first saw a job is a guess), and
the report says which times it ran on.

Why identical compressed replays differed up to 2x (issue 48): in compressed time (a trace day in 35 s) jobs arrive
many to a backfill pass, and which pass first sees a job depends on where in the second it arrived; the pass walks
its jobs in priority order, and a job it cannot start reserves the node from the minute its CPUs free up (the plan's
grain, bf_resolution), which holds every later job whose limit reaches that minute. So a job arriving 0.1 s earlier
or later changes which job reserves first, and what waits behind it for a minute of the plan: the same 100 jobs gave
mean waits of 15 s and 5 s. And the age factor does not compress (PriorityMaxAge is days of real time, priorities
are recomputed every PriorityCalcPeriod, >= 1 minute): in a compressed replay age orders nothing, while at the site
it dominates within days."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np

TARGET_MEDIAN_S = 2.0
"""The median absolute start error at most this (seconds; set for the test cluster's compressed replays, where
waits are a few seconds; a site's uncompressed log meets it or the report says it misses)."""
TARGET_TAU = 0.7
"""... and Kendall's tau-b of predicted against actual start times at least this."""
CONFIG_KEYS = ("PriorityType", "PriorityWeightAge", "PriorityWeightFairShare", "PriorityWeightJobSize",
               "PriorityWeightPartition", "PriorityWeightQOS", "PriorityWeightAssoc", "PriorityWeightTRES",
               "PriorityMaxAge", "PriorityCalcPeriod", "PriorityFavorSmall", "PriorityFlags", "SchedulerType",
               "SchedulerParameters", "PrioritySiteFactorPlugin", "AccountingStorageType")
"""What the cycle log's header keeps of `scontrol show config` for the model."""


def config_subset(config: Mapping[str, str]) -> dict[str, str]:
    return {k: config[k] for k in CONFIG_KEYS if k in config}


def _seconds(text: str | None) -> float | None:
    """slurm.conf's `7-00:00:00`, `00:05:00`, `5 min`, `1-0` as seconds."""
    if not text or text in ("(null)", "n/a"):
        return None
    text = text.strip()
    m = re.fullmatch(r"(\d+)\s*(sec|min|hour|day)s?", text)
    if m:
        return float(m.group(1)) * {"sec": 1, "min": 60, "hour": 3600, "day": 86400}[m.group(2)]
    from schedrl.duration import parse_slurm_duration

    try:
        return parse_slurm_duration(text)
    except ValueError:
        return None


def _weight(config: Mapping[str, str], name: str) -> float:
    try:
        return float(config.get(name, "0"))
    except ValueError:
        return 0.0


@dataclass(frozen=True)
class Priorities:
    """Each logged job's modelled priority: `static` + `age_weight` x min((t - submit) / `max_age`, 1)."""

    static: np.ndarray
    submit: np.ndarray
    """Seconds, in the replay's time."""
    age_weight: float
    max_age: float

    def at(self, t: float, jobs: np.ndarray) -> np.ndarray:
        if self.age_weight == 0.0:
            return self.static[jobs]
        age = np.clip((t - self.submit[jobs]) / self.max_age, 0.0, 1.0)
        return self.static[jobs] + self.age_weight * age


def priorities(jobs: list[dict], config: Mapping[str, str], t0: float) -> Priorities:
    """The modelled priorities of logged `job` records (cycle log), in their order; `t0` the replay's time 0."""
    age_weight = _weight(config, "PriorityWeightAge")
    max_age = _seconds(config.get("PriorityMaxAge")) or 7 * 86400.0
    static, submit = [], []
    for rec in jobs:
        if "static" in rec:
            value = float(rec["static"])
        else:  # older logs: the squeue priority (plus nice) at first sight, less the age it had then
            age = min(max(rec.get("seen", rec["submit"]) - rec["submit"], 0.0) / max_age, 1.0)
            value = float(rec.get("priority", 0)) - age_weight * age
        static.append(value)
        submit.append(rec["submit"] - t0)
    return Priorities(np.array(static, dtype=np.float64), np.array(submit, dtype=np.float64), age_weight, max_age)


@dataclass(frozen=True)
class Check:
    """The model against what Slurm did on one log."""

    jobs: int
    mae_s: float
    """Median absolute error of predicted vs actual start, seconds."""
    tau: float
    """Kendall's tau-b of predicted vs actual start times."""
    bias_s: float
    """Mean of predicted - actual start: negative when Slurm started jobs later than the model."""
    meets: bool
    fcfs_tau: float | None = None
    """Kendall's tau of plain FCFS (the same replay, every priority equal) against the actual starts: what the
    multifactor model adds over arrival order."""

    def line(self) -> str:
        verdict = ("meets the targets" if self.meets else "misses the targets: the estimate's baseline is not "
                   "Slurm's order on this log")
        fcfs = "" if self.fcfs_tau is None else f"; FCFS on the same jobs: tau {self.fcfs_tau:.3f}"
        return (f"model of Slurm's order against what Slurm did ({self.jobs} jobs): median |predicted - actual start| "
                f"{self.mae_s:.2f} s (target <= {TARGET_MEDIAN_S:g} s), Kendall tau of the start orders {self.tau:.3f} "
                f"(target >= {TARGET_TAU:g}), mean predicted - actual {self.bias_s:+.2f} s: {verdict}{fcfs}")


def kendall(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b (ties counted as SciPy does); 1.0 for identical constant orders."""
    from scipy.stats import kendalltau

    if len(a) < 2:
        return math.nan
    tau = float(kendalltau(a, b).statistic)
    return tau if math.isfinite(tau) else 1.0 if np.array_equal(np.argsort(a), np.argsort(b)) else 0.0


def check(predicted: np.ndarray, actual: np.ndarray, fcfs: np.ndarray | None = None) -> Check:
    """The model's predicted starts (and plain FCFS's, where given) against the actual ones."""
    predicted, actual = np.asarray(predicted, float), np.asarray(actual, float)
    error = predicted - actual
    tau = kendall(predicted, actual)
    mae = float(np.median(np.abs(error)))
    return Check(len(actual), mae, tau, float(error.mean()), mae <= TARGET_MEDIAN_S and tau >= TARGET_TAU,
                 None if fcfs is None else kendall(np.asarray(fcfs, float), actual))


__all__ = ["CONFIG_KEYS", "Check", "kendall", "Priorities", "TARGET_MEDIAN_S", "TARGET_TAU", "check",
           "config_subset", "priorities"]
