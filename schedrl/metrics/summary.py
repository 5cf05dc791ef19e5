"""Aggregate metrics of a schedule (RLScheduler §II; DRAS Table IV; MRSch §V)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from schedrl.metrics.jobs import job_metrics
from schedrl.sim.simulator import Schedule

# name -> (attribute of Metrics, True when lower is better): the objectives `compare` and the RL rewards use
METRICS: dict[str, tuple[str, bool]] = {
    "bsld": ("avg_bsld", True),
    "wait": ("avg_wait", True),
    "turnaround": ("avg_turnaround", True),
    "slowdown": ("avg_slowdown", True),
    "utilization": ("utilization", False),
    "fairness": ("max_user_bsld", True),
}
UTIL_PREFIX = "util:"
"""`util:bb` (any resource's name): that resource's busy fraction over the makespan, higher is better; `compare`
and `evaluate` take it beside METRICS (not a training objective)."""


def check_metric(metric: str, resources: bool = False) -> None:
    """One clear ValueError for a name that is not in METRICS (nor `util:NAME` when `resources`)."""
    if metric in METRICS or (resources and metric.startswith(UTIL_PREFIX) and metric[len(UTIL_PREFIX):]):
        return
    extra = ", or util:NAME for one resource's utilisation" if resources else ""
    raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}{extra}")


def lower_is_better(metric: str) -> bool:
    """Whether a smaller value of `metric` (a METRICS name or `util:NAME`) is better."""
    return False if metric.startswith(UTIL_PREFIX) else METRICS[metric][1]


@dataclass(frozen=True)
class Metrics:
    """Aggregates over the jobs of one schedule."""

    jobs: int
    """Jobs scheduled."""
    avg_bsld: float
    """Mean bounded slowdown, max((w + e) / max(e, 10), 1)."""
    avg_wait: float
    """Mean wait, seconds."""
    avg_turnaround: float
    """Mean turnaround (completion - submit), seconds."""
    avg_slowdown: float
    """Mean slowdown, turnaround / run time."""
    max_wait: float
    """Longest wait, seconds."""
    p50_wait: float
    """Median wait."""
    p95_wait: float
    """95th percentile wait."""
    p95_bsld: float
    """95th percentile bounded slowdown."""
    utilization: float
    """Resource-0 busy fraction over the makespan (first submit to last completion)."""
    utilization_per_resource: dict
    """Busy fraction of each resource over the makespan."""
    makespan: float
    """Last completion - first submit, seconds."""
    max_user_bsld: float
    """Max over users of the user's mean bsld (RLScheduler's fairness objective)."""
    mean_user_bsld: float
    """Mean over users of the user's mean bsld."""
    users: int
    """Distinct users (-1 counts as one unknown user)."""
    killed: int
    """Jobs killed at their walltime limit."""
    requeued: int
    """Kill-and-requeue events."""
    wasted_core_hours: float
    """Resource-0 hours lost to kill-and-requeue."""
    ready_share: float
    """Share of jobs started at once when picked (DRAS Table IV)."""
    reserved_share: float
    """Share of jobs started at their reservation."""
    backfilled_share: float
    """Share of jobs started by backfilling."""
    ready_work_share: float = 0.0
    """Share of resource-0 work (requested units x final run time: node-hours or core-hours) in jobs started at once
    (DRAS Table IV's node-hour column)."""
    reserved_work_share: float = 0.0
    """Share of resource-0 work in jobs started at their reservation."""
    backfilled_work_share: float = 0.0
    """Share of resource-0 work in jobs started by backfilling."""

    def to_dict(self) -> dict:
        """JSON-friendly dict."""
        return asdict(self)

    def value(self, metric: str) -> float:
        """The aggregate behind an objective name (`bsld`, `wait`, ..., see METRICS) or `util:NAME`."""
        check_metric(metric, resources=True)
        if metric.startswith(UTIL_PREFIX):
            name = metric[len(UTIL_PREFIX):]
            if name not in self.utilization_per_resource:
                raise ValueError(f"no resource {name!r} in this schedule (resources: "
                                 f"{', '.join(self.utilization_per_resource)})")
            return float(self.utilization_per_resource[name])
        return float(getattr(self, METRICS[metric][0]))


def _per_user_means(users: np.ndarray, values: np.ndarray) -> np.ndarray:
    _, inverse = np.unique(users, return_inverse=True)
    sums = np.bincount(inverse, weights=values)
    counts = np.bincount(inverse)
    return sums / counts


def summarize(schedule: Schedule) -> Metrics:
    """Aggregate metrics of a finished schedule."""
    pending = schedule.unfinished
    if pending.size:
        j = int(pending[0])
        raise ValueError(f"the schedule is not finished: {pending.size} of {len(schedule.end)} jobs have not completed "
                         f"(first: job {int(schedule.workload.job_id[j])} at position {j}); run the simulator until "
                         f"advance() returns FINISHED")
    m = job_metrics(schedule)
    n = len(m["wait"])
    makespan = float(schedule.end.max() - schedule.submit.min())
    busy = (schedule.req * m["run"][:, None]).sum(axis=0)
    util = busy / (schedule.capacity * makespan) if makespan > 0 else np.zeros_like(busy)
    user_bsld = _per_user_means(np.asarray(schedule.workload.user), m["bsld"])
    modes = np.bincount(schedule.mode, minlength=4) / n
    work = schedule.req[:, 0] * m["run"]
    work_modes = np.bincount(schedule.mode, weights=work, minlength=4) / max(float(work.sum()), 1e-300)
    return Metrics(
        jobs=n,
        avg_bsld=float(m["bsld"].mean()),
        avg_wait=float(m["wait"].mean()),
        avg_turnaround=float(m["turnaround"].mean()),
        avg_slowdown=float(m["slowdown"].mean()),
        max_wait=float(m["wait"].max()),
        p50_wait=float(np.percentile(m["wait"], 50)),
        p95_wait=float(np.percentile(m["wait"], 95)),
        p95_bsld=float(np.percentile(m["bsld"], 95)),
        utilization=float(util[0]),
        utilization_per_resource={name: float(u) for name, u in zip(schedule.resources, util)},
        makespan=makespan,
        max_user_bsld=float(user_bsld.max()),
        mean_user_bsld=float(user_bsld.mean()),
        users=int(len(user_bsld)),
        killed=int(schedule.killed.sum()),
        requeued=int(schedule.requeues.sum()),
        wasted_core_hours=float(schedule.wasted.sum() / 3600.0),
        ready_share=float(modes[1]),
        reserved_share=float(modes[2]),
        backfilled_share=float(modes[3]),
        ready_work_share=float(work_modes[1]),
        reserved_work_share=float(work_modes[2]),
        backfilled_work_share=float(work_modes[3]),
    )
