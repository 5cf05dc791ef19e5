"""`Watchdog`: a live policy judged as it runs, and rolled back to shadow on its own when it loses.

The go-live gate acts once, before going live; the starvation guard only after days. While live, the watchdog keeps
the report's two arms rolling over the jobs the adapter has seen (`report.estimate` on the cycle log: the logged
arrivals replayed through the model of Slurm's backfill scheduler under the policy's order in force and under the
model of Slurm's own order, on slurmctld's times where its log is given), over the last `jobs` jobs seen to arrive
(those not ended yet with their time limits as run times), looked at again each time a tenth of that many more have
arrived. When the policy is worse beyond `margin_pct`
with the report's confidence (the lower end of the 95% interval above the margin: worse by more than the margin,
not merely possibly worse), the adapter returns to shadow (`Adapter.roll_back`): every job's own value back, one
line in its output, its cycle log and its audit log, the lock released, and the exit status says so
(`EXIT_ROLLED_BACK`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

MIN_JOBS = 20
"""The fewest jobs the watchdog judges over: four windows of five."""
WINDOW_JOBS = 5
"""Jobs per window of the watchdog's interval, up to `MAX_WINDOWS` windows."""
MAX_WINDOWS = 10
METRICS = ("bsld", "wait", "slowdown", "turnaround")
EXIT_ROLLED_BACK = 3
"""`schedrl slurm run`'s exit status after the watchdog rolled the policy back to shadow."""


def check_options(margin_pct: float, jobs: int, metric: str, mode: str, log) -> None:
    """ValueError naming the option for a watchdog that cannot work."""
    if not math.isfinite(margin_pct) or margin_pct < 0:
        raise ValueError(f"--watch-margin must be a finite percentage >= 0; got {margin_pct}")
    if not MIN_JOBS <= jobs < 2 ** 31:
        raise ValueError(f"--watch-jobs must be >= {MIN_JOBS} (two windows of {WINDOW_JOBS} jobs); got {jobs}")
    if metric not in METRICS:
        raise ValueError(f"--watch-metric must be one of {', '.join(METRICS)}; got {metric!r}")
    if mode == "live" and log is None:
        raise ValueError("the live watchdog replays the cycle log: give --log, or --no-watch")


@dataclass
class Verdict:
    """One look of the watchdog."""

    jobs: int
    windows: int
    difference_pct: float
    ci95_pct: list[float] | None
    worse: bool
    """Worse beyond the margin with the report's confidence: roll back."""

    def line(self, metric: str, margin_pct: float) -> str:
        ci = (f", 95% interval [{self.ci95_pct[0]:+.1f}%, {self.ci95_pct[1]:+.1f}%]" if self.ci95_pct else "")
        return (f"watchdog: over the last {self.jobs} jobs ({self.windows} windows) the policy's {metric} is "
                f"{self.difference_pct:+.1f}% against the model of Slurm's own order{ci}"
                + (f": worse beyond the +{margin_pct:g}% margin" if self.worse else ""))


class Watchdog:
    """Judges a live cycle log (`look`) every tenth of `jobs` more jobs seen."""

    def __init__(self, log_path: Path, policy, margin_pct: float, jobs: int, metric: str = "bsld",
                 slurmctld_log: Path | None = None):
        self.log_path, self.policy, self.margin_pct = Path(log_path), policy, margin_pct
        self.jobs, self.metric, self.slurmctld_log = jobs, metric, slurmctld_log
        self.every = max(jobs // 10, 1)
        self.looked_at = 0
        """Jobs seen at the last look."""

    def due(self, seen: int) -> bool:
        """Whether to look again: at least `jobs` jobs seen, a tenth of that many more since the last look."""
        return seen >= self.jobs and seen - self.looked_at >= self.every

    def look(self, seen: int) -> Verdict | None:
        """The verdict over the last `jobs` jobs the log has seen arrive (None: the replay cannot judge yet). A job
        not ended yet counts with its time limit as its run time (the same in both arms): judging only the jobs that
        ended would leave out exactly those a losing policy keeps waiting."""
        from schedrl.slurm.report import Log, ReportError, estimate, read_ctld

        self.looked_at = seen
        log = Log.read(self.log_path)
        usable = max(c.get("usable") or 0 for c in log.cycles)
        jobs = sorted((j for j, rec in log.jobs.items() if 0 < rec["cpus"] <= usable),
                      key=lambda j: (log.jobs[j]["submit"], j))
        if len(jobs) < self.jobs:
            return None
        keep = jobs[-self.jobs:]
        now = max(float(c["time"]) for c in log.cycles)
        start, end = {}, {}
        for j in keep:
            rec = log.jobs[j]
            if j in log.start and j in log.end and log.end[j] >= log.start[j]:
                start[j], end[j] = log.start[j], log.end[j]
            else:  # running or waiting: its time limit stands in for its run time
                start[j] = log.start.get(j, max(now, float(rec["submit"])))
                end[j] = start[j] + float(rec["limit"])
        # the live adapter's own header (a log continued from shadow begins with the shadow run's)
        recent = Log(log.latest or log.header, {j: log.jobs[j] for j in keep}, start, end, log.cycles)
        ctld = read_ctld(self.slurmctld_log, recent, self.log_path) if self.slurmctld_log else None
        windows = max(2, min(MAX_WINDOWS, self.jobs // WINDOW_JOBS))
        try:
            e = estimate(recent, self.policy, self.metric, windows, ctld)
        except ReportError:
            return None
        worse = e.ci95_pct is not None and e.ci95_pct[0] > self.margin_pct
        return Verdict(e.jobs, e.windows, e.difference_pct, e.ci95_pct, worse)

    @staticmethod
    def record(verdict: Verdict) -> dict:
        return asdict(verdict)


__all__ = ["EXIT_ROLLED_BACK", "METRICS", "MIN_JOBS", "Verdict", "Watchdog", "check_options"]
