"""`schedrl slurm report LOG`: how far a cycle log's policy agreed with Slurm, and what its order would gain.

Agreement, from the log alone:

- first choice: the share of cycles where the policy's first job was Slurm's first (its present order);
- starts: for each job Slurm started while the log ran (from the second of the first order on), at that second,
  whether it was the policy's highest-ranked pending job that fitted the free CPUs. The ranking in force is the
  order of the last cycle applied (live; in shadow mode: snapshotted) before the start, then the jobs it did not
  rank in Slurm's order (base priority, submit, id); pending means submitted, not yet started, not ended; free CPUs
  are the usable ones less those of the jobs running then. Jobs that started in the same second are taken in ranking
  order, each using its CPUs before the next is judged (a job that also ended in that second may have given them
  back), in the order slurmctld's log has them where it is given. Slurm's times have one-second resolution, so a
  start agrees if it agrees under one of the readings of its second: a job that ended in it freed its CPUs before
  the start or after, and an order applied during it, or in the second before it, was in force or not yet
  (slurmctld's scheduling pass reads the priorities when it begins, so a pass begun before an update starts jobs by
  the earlier ones; before the first order, by Slurm's own; an order counts from its snapshot, since scontrol's
  update lines take effect one by one before scontrol returns), and a job submitted in that second after the started
  one (a higher job id) may have arrived after the start. With the slurmctld log (`classify`), starts by the main
  scheduler (`sched: Allocate`) and by backfilling (`sched/backfill: ... Started`) are counted apart: only the
  former are taken from the head of the queue, backfilled ones may jump it by design.

The estimate: the logged jobs that started and ended (their arrivals, CPUs, limits and actual run times; to the
millisecond from slurmctld's log where given) replayed through a model of Slurm's backfill scheduler
(`schedrl.slurm.passes`: its passes, its plan of nodes on the bf_resolution grid) in two orders: the policy's in force
(`PolicyOrder`: its top K first at every pass, as live mode's bonuses make it) and Slurm's own (`model.priorities`:
multifactor priority with the site's weights from the log's header and each job's fixed factors from sprio; FCFS where
the factors do not tell jobs apart). The model of Slurm's own order is checked against what Slurm did
(`model.check`: the median absolute start error and Kendall's tau of the start orders, with their targets); on a
shadow log that is Slurm's own order, on a live log the policy's, so the check is a shadow log's.
The jobs are cut into windows by submit order; the per-window means of the site's metric are
paired, and the interval is Student's t over the windows' differences.

How much longer to shadow (`Power`): with the windows' spread s over n windows of the log's span, a true gain of g
(in % of Slurm's mean) is told from zero (the interval's upper end below 0) with 80% power once
n >= ((t + 0.84) s / g)^2 windows; the report turns that into days at the log's rate of jobs. The go-live gate
(`gate.check`) asks less: non-inferiority, the upper end at most +5%.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from schedrl.slurm import cyclelog, model
from schedrl.slurm.passes import CtldTimes



class ReportError(ValueError):
    """A log the report cannot use; the message says why."""


def classify_starts(slurmctld_log: str | Path) -> dict[int, tuple[str, int]]:
    """Job id -> (`main` or `backfill`, the line number): which of slurmctld's schedulers started it, and in which
    order jobs started within a second (SlurmctldDebug=info or more; `CtldTimes.started_by`)."""
    return CtldTimes.read(slurmctld_log).started_by


CLOCK_SLACK_S = 5.0
"""A record may carry a time this much before an earlier record's (a clock stepped back by NTP); more is two logs."""


def _finite(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    return float(value)


def _job_id(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2 ** 63:
        raise ValueError(f"job id {str(value)[:40]!r} is not a Slurm job id")
    return value


def _finite_or_none(value) -> float | None:
    try:
        return _finite(value)
    except ValueError:
        return None


def _check_job(rec: dict) -> None:
    _job_id(rec["job"])
    for key in ("submit", "limit"):
        _finite(rec[key])
    if isinstance(rec["cpus"], bool) or not isinstance(rec["cpus"], int) or rec["cpus"] < 0:
        raise ValueError(f"cpus {rec['cpus']!r} is not a count")
    for key in ("priority", "static", "seen"):
        if key in rec:
            _finite(rec[key])


def _check_cycle(rec: dict) -> None:
    for key in ("order", "slurm", "bonus_order"):
        if key in rec and (not isinstance(rec[key], list) or not all(_job_id(j) >= 0 for j in rec[key])):
            raise ValueError(f"{key} is not a list of job ids")
    for key in ("usable", "nodes", "applied_at"):
        if rec.get(key) is not None:
            _finite(rec[key])


@dataclass
class Log:
    """A cycle log, read."""

    header: dict
    jobs: dict[int, dict]
    start: dict[int, float]
    end: dict[int, float]
    cycles: list[dict]
    latest: dict | None = None
    """The last header (an adapter that continued the log, perhaps in another mode: the watchdog's)."""

    @classmethod
    def read(cls, path: str | Path) -> "Log":
        """ReportError naming the line for a file that is not a cycle log, a record without its fields or with a
        value that is not a finite number, and a log whose time goes back (two logs concatenated, or one twice)."""
        headers, jobs, start, end, cycles = [], {}, {}, {}, []
        last = (-math.inf, 0)
        try:
            for number, rec in cyclelog.numbered(path):
                kind = rec.get("kind")
                try:
                    if kind == "header":
                        headers.append(rec)
                        at = _finite(rec["time"])
                    elif kind == "job":
                        _check_job(rec)
                        jobs.setdefault(rec["job"], rec)
                        at = None
                    elif kind == "started":
                        start.setdefault(_job_id(rec["job"]), _finite(rec["start"]))
                        at = None
                    elif kind == "ended":
                        end.setdefault(_job_id(rec["job"]), _finite(rec["end"]))
                        at = None
                    elif kind == "cycle":
                        at = _finite(rec["time"])
                        if "order" in rec:
                            _check_cycle(rec)
                            # live: the order in force is the policy's with the jobs it must not pass put first
                            cycles.append({**rec, "order": rec["bonus_order"]} if "bonus_order" in rec else rec)
                    else:
                        at = None
                except (KeyError, TypeError, ValueError) as e:
                    raise ReportError(f"{path}:{number}: a {kind or 'kindless'} record the report cannot use "
                                      f"({type(e).__name__}: {e}): not a cycle log of `schedrl slurm run --log`"
                                      ) from None
                if at is not None:
                    if at < last[0] - CLOCK_SLACK_S:
                        raise ReportError(f"{path}:{number}: its time ({at:.0f}) is {last[0] - at:,.0f} s before that "
                                          f"of line {last[1]}: two logs concatenated (or one log twice); give each "
                                          "adapter's log as it wrote it")
                    last = max(last, (at, number))
        except cyclelog.CycleLogError as e:
            raise ReportError(str(e)) from None
        if not headers:
            raise ReportError(f"{path}: not a cycle log of `schedrl slurm run --log` (no header line)")
        if not cycles:
            raise ReportError(f"{path}: no cycle with an order in the log")
        return cls(headers[0], jobs, start, end, cycles, headers[-1])

    def slurm_key(self, job: int) -> tuple:
        rec = self.jobs.get(job, {})
        return (-rec.get("priority", 0), rec.get("submit", math.inf), job)


@dataclass
class Agreement:
    cycles: int = 0
    first_choice: int = 0
    starts: dict[str, int] = field(default_factory=dict)
    """Starts judged, by scheduler (`main`, `backfill`, or `all` without the slurmctld log)."""
    agreed: dict[str, int] = field(default_factory=dict)
    disagreed: list[dict] = field(default_factory=list)
    """The starts that did not agree: job, time, scheduler, the policy's choice."""


def agreement(log: Log, classify: dict[int, tuple[str, int]] | None = None) -> Agreement:
    """First-choice and start agreement (module docstring)."""
    out = Agreement()
    for c in log.cycles:
        if c["order"] and c.get("slurm"):
            out.cycles += 1
            out.first_choice += int(c["order"][0] == c["slurm"][0])
    # an order is in force from when its changes were applied (live) or from its snapshot (shadow)
    since = np.array([c.get("applied_at", c["time"]) for c in log.cycles])
    snapped = np.array([c["time"] for c in log.cycles])
    cpus = {job: rec["cpus"] for job, rec in log.jobs.items()}
    by_second: dict[float, list[int]] = {}
    for job, t in log.start.items():
        if math.floor(since[0]) <= t and job in log.jobs:  # Slurm's start times are whole seconds
            by_second.setdefault(t, []).append(job)
    for t in sorted(by_second):
        # the order in force a second before the second's start (a scheduling pass that began before an update
        # finishes with the priorities it read), and any applied up to the second's end
        first = int(np.searchsorted(since, t - 1.0, side="right")) - 1
        # ... up to the last whose snapshot came before the second's end: its changes reach slurmctld line by line
        # while scontrol runs, before applied_at (when scontrol returned)
        last = int(np.searchsorted(snapped, t + 1.0, side="left")) - 1
        candidates = [log.cycles[i] for i in range(max(first, 0), last + 1)]
        if first < 0:  # no order in force yet a second before: Slurm's own order is one reading
            candidates.insert(0, {"order": [], "usable": log.cycles[0].get("usable")})
        pending = [job for job, rec in log.jobs.items()  # a job that starts at t waits until then, however short
                   if rec["submit"] <= t and log.start.get(job, math.inf) >= t
                   and (log.end.get(job, math.inf) > t or log.start.get(job) == t)]
        running = [job for job, s in log.start.items() if s < t and job in cpus]
        agreed: set[int] = set()
        choices: dict[int, set[int]] = {}
        for cycle in candidates:
            rank = {job: r for r, job in enumerate(cycle["order"])}

            def key(job: int) -> tuple:
                return (0, rank[job]) if job in rank else (1, *log.slurm_key(job))

            queue = sorted(pending, key=key)
            # starts of one second in the order slurmctld logged them, else in ranking order
            sequence = sorted(by_second[t], key=lambda job: ((classify or {}).get(job, ("", math.inf))[1], key(job)))
            for generous in (False, True):
                # a job that ended in this second may (generous) or may not have freed its CPUs before the starts
                free = (cycle.get("usable") or 0) - sum(cpus[j] for j in running
                                                        if log.end.get(j, math.inf) > t - (0 if generous else 1e-9))
                left = list(queue)
                for job in sequence:
                    # a job submitted in this second after `job` (a higher id: slurmctld numbers jobs as they come)
                    # may have arrived after it started
                    choice = next((p for p in left if cpus[p] <= free
                                   and not (log.jobs[p]["submit"] >= t and p > job)), None)
                    choices.setdefault(job, set()).add(choice)
                    if choice == job:
                        agreed.add(job)
                    if job in left:
                        left.remove(job)
                    if not (generous and log.end.get(job, math.inf) <= t):  # a sub-second job frees its CPUs again
                        free -= cpus[job]
        for job in by_second[t]:
            kind = "all" if classify is None else classify.get(job, ("unknown", 0))[0]
            out.starts[kind] = out.starts.get(kind, 0) + 1
            if job in agreed:
                out.agreed[kind] = out.agreed.get(kind, 0) + 1
            else:
                out.disagreed.append({"job": job, "time": t, "scheduler": kind,
                                      "policy_choice": sorted(c for c in choices.get(job, ()) if c is not None)})
    return out


@dataclass
class Estimate:
    metric: str
    jobs: int
    dropped: int
    windows: int
    policy: float
    slurm: float
    observed: float
    difference_pct: float
    ci95_pct: list[float] | None
    span_days: float = 0.0
    """Submit of the first logged job to the last end, in days."""
    spread_pct: float | None = None
    """The standard deviation of the windows' differences, in % of Slurm's mean."""
    model: dict | None = None
    """`model.check` of the model of Slurm's order against the logged starts (asdict)."""
    model_wait: float | None = None
    """The mean wait the model of Slurm's order predicts, beside `observed_wait`."""
    observed_wait: float | None = None
    policy_wait: float | None = None
    """The mean wait the model predicts under the policy's order."""
    policy_model: dict | None = None
    """`model.check` of the model under the policy's order in force against the logged starts: on a live log, what
    Slurm did under that order (asdict)."""
    times: str = "squeue"
    """Whose times the replay used: `slurmctld` (its log's, to the millisecond) or `squeue` (whole seconds)."""
    passes: str = "interval"
    """The model's pass times: `logged` (slurmctld's backfill passes, DebugFlags=Backfill), `starts` (its logged
    starts, with passes every bf_interval between), `interval` (every bf_interval)."""
    interval_s: float | None = None

    def more_days(self, gain_pct: float) -> float | None:
        """Days of shadow beyond this log after which a true gain of `gain_pct`% is told from zero with 80% power
        (0 if already; None without a spread)."""
        if not self.spread_pct or self.windows < 2 or self.span_days <= 0:
            return None
        need = ((1.96 + 0.84) * self.spread_pct / gain_pct) ** 2
        return max(need / self.windows * self.span_days - self.span_days, 0.0)


class PolicyOrder:
    """A policy's order in force at each pass of the model: its top `k` pending jobs (`order.rank` at a snapshot of
    the modelled queue) first, in its order, then Slurm's order (as live mode's bonuses make it, `--bonus-scale` >= 1:
    the bands put the top K above every other job)."""

    def __init__(self, policy, k: int, prio: "model.Priorities", submit, cpus, limit, run, epoch: float, usable: int,
                 nodes: int, label: str, ceiling: float | None = None):
        self.policy, self.k, self.prio, self.ceiling = policy, k, prio, ceiling
        self.submit, self.cpus, self.limit, self.run = submit, cpus, limit, run
        self.epoch, self.usable, self.nodes, self.label = epoch, usable, nodes, label

    def __call__(self, t: float, pending: np.ndarray, start: np.ndarray) -> np.ndarray:
        from schedrl.slurm.order import rank
        from schedrl.slurm.snapshot import Machine, QueueJob, Snapshot

        values = self.prio.at(t, pending)
        now = self.epoch + t
        running = np.flatnonzero(~np.isnan(start) & (start + self.run > t))

        def job(i: int, state: str, priority: float) -> QueueJob:
            begun = None if state == "PENDING" else self.epoch + float(start[i])
            return QueueJob(int(i), str(i), self.label, state, int(self.cpus[i]), 1, float(self.limit[i]),
                            self.epoch + float(self.submit[i]), begun, None, int(priority), 0, "", "(null)", "(null)")

        order = np.lexsort((pending, self.submit[pending], -values))
        queued = tuple(job(int(pending[i]), "PENDING", values[i]) for i in order)
        busy = tuple(job(int(i), "RUNNING", 0) for i in running)
        used = int(self.cpus[running].sum())
        snap = Snapshot(now, self.label, Machine(used, max(self.usable - used, 0), 0, self.usable, self.nodes, None),
                        queued, busy, (), (), jobs={j.job_id: j for j in (*queued, *busy)})
        top = rank(self.policy, snap, self.k)
        out = np.asarray(values, float).copy()
        lift = float(np.max(np.abs(values), initial=0.0)) * 2.0 + 2.0
        where = {int(j): i for i, j in enumerate(pending)}
        for r, j in enumerate(top):
            if self.ceiling:  # a live log's bounded bonuses: the bands laid out evenly below the ceiling
                out[where[j]] = values[where[j]] + self.ceiling * (len(top) - r) / (len(top) + 1)
            else:
                out[where[j]] = lift + (len(top) - r)
        return out


def _metric(metric: str, wait: np.ndarray, run: np.ndarray) -> np.ndarray:
    return {"wait": wait, "turnaround": wait + run, "slowdown": (wait + run) / np.maximum(run, 1.0),
            "bsld": np.maximum((wait + run) / np.maximum(run, 10.0), 1.0)}[metric]


def estimate(log: Log, policy, metric: str = "bsld", windows: int = 10, ctld: CtldTimes | None = None,
             progress=None) -> Estimate:
    """The logged jobs replayed under the policy and under Slurm's ordering (module docstring)."""
    from schedrl.eval.paired import t975
    from schedrl.slurm.passes import BackfillParams, pass_times, plan

    usable = max(c.get("usable") or 0 for c in log.cycles)
    nodes = max((c.get("nodes") or 0 for c in log.cycles), default=0)
    done = [j for j in log.jobs if j in log.start and j in log.end and log.end[j] >= log.start[j]]
    done = [j for j in done if 0 < log.jobs[j]["cpus"] <= usable]
    dropped = len(log.jobs) - len(done)
    if len(done) < 2 * max(windows, 1):
        raise ReportError(f"only {len(done)} logged jobs both started and ended: too few for {windows} windows "
                          "(shadow longer, or lower --windows)")
    # slurmctld's times to the millisecond where its log has them, else squeue's whole seconds
    # a job's times from slurmctld's log where it has all three (a rotated log may cover part of the cycle log)
    timed = set() if ctld is None else {j for j in done if j in ctld.submit and j in ctld.start and j in ctld.end}
    exact = bool(timed)

    def submit_of(j: int) -> float:
        return ctld.submit[j] if j in timed else log.jobs[j]["submit"]
    done.sort(key=lambda j: (submit_of(j), j))
    submit = np.array([submit_of(j) for j in done], float)
    start = np.array([ctld.start[j] if j in timed else log.start[j] for j in done], float)
    end = np.array([ctld.end[j] if j in timed else log.end[j] for j in done], float)
    run = np.maximum(end - start, 0.0)
    cpus = np.array([log.jobs[j]["cpus"] for j in done], np.int64)
    limit = np.maximum(np.array([log.jobs[j]["limit"] for j in done], float), 1.0)
    t0 = float(submit.min())
    n = len(done)
    slurm_config = log.header.get("slurm_config") or {}
    params = BackfillParams.from_config(slurm_config)
    known = tuple(p - t0 for p in ctld.passes) if exact else ()
    passes = pass_times(0.0, float(end.max() - t0), params.interval_s, known)
    node_cpus = usable // nodes if nodes and usable % nodes == 0 else None
    prio = model.priorities([log.jobs[j] for j in done], slurm_config, t0)
    keys = {"policy": PolicyOrder(policy, int(log.header.get("top") or 16), prio, submit - t0, cpus, limit, run, t0,
                                  usable, max(nodes, 1), str(log.header.get("partition") or "partition"),
                                  _finite_or_none(log.header.get("bonus_ceiling"))),
            "slurm": lambda t, pending, _: prio.at(t, pending),
            "fcfs": lambda t, pending, _: np.zeros(len(pending))}
    starts, values = {}, {}
    for label, key in keys.items():
        starts[label] = plan(submit - t0, run, cpus, limit, key, passes, usable, node_cpus, params, epoch=t0,
                             progress=None if progress is None else (lambda line, label=label: progress(f"{label}: "
                                                                                                        f"{line}")))
        values[label] = _metric(metric, starts[label] - (submit - t0), run)
    checked = model.check(starts["slurm"], start - t0, starts["fcfs"])
    wait = start - submit
    observed = _metric(metric, wait, run)
    groups = np.array_split(np.arange(n), windows)
    diff = np.array([values["policy"][g].mean() - values["slurm"][g].mean() for g in groups])
    base = float(values["slurm"].mean()) or 1.0
    half = t975(len(diff) - 1) * float(diff.std(ddof=1)) / math.sqrt(len(diff)) if len(diff) > 1 else None
    mean = float(diff.mean())
    return Estimate(metric, n, dropped, len(groups), float(values["policy"].mean()), float(values["slurm"].mean()),
                    float(observed.mean()), 100.0 * mean / base,
                    None if half is None else [100.0 * (mean - half) / base, 100.0 * (mean + half) / base],
                    span_days=(float(end.max()) - t0) / 86400.0,
                    spread_pct=100.0 * float(diff.std(ddof=1)) / abs(base) if len(diff) > 1 else None,
                    model=asdict(checked),
                    policy_model=asdict(model.check(starts["policy"], start - t0)),
                    model_wait=float((starts["slurm"] - (submit - t0)).mean()),
                    observed_wait=float(wait.mean()),
                    policy_wait=float((starts["policy"] - (submit - t0)).mean()),
                    times="slurmctld" if len(timed) == n else f"slurmctld for {len(timed)} of {n} jobs" if exact
                    else "squeue",
                    passes="logged" if exact and ctld.logged_passes else "starts" if exact else "interval",
                    interval_s=params.interval_s)


@dataclass
class Report:
    log: str
    header: dict
    agreement: Agreement
    estimate: Estimate
    policy: str = ""
    """The policy replayed (the log's, or --policy)."""

    def to_dict(self) -> dict:
        return {"log": self.log, "header": self.header, "policy": self.policy, "agreement": asdict(self.agreement),
                "estimate": asdict(self.estimate)}

    def lines(self) -> list[str]:
        h, a, e = self.header, self.agreement, self.estimate
        out = [f"{self.log}: {h.get('mode')} run of {h.get('policy')} on {h.get('cluster')}/{h.get('partition')}, "
               f"top {h.get('top')}, {a.cycles} cycles with an order"]
        if a.cycles:
            out.append(f"first choice: the policy's first job was Slurm's first in {a.first_choice} of {a.cycles} "
                       f"cycles ({100.0 * a.first_choice / a.cycles:.0f}%)")
        for kind in sorted(a.starts):
            agreed = a.agreed.get(kind, 0)
            label = {"all": "starts", "main": "starts by the main scheduler (from the head of the queue)",
                     "backfill": "backfilled starts"}.get(kind, f"starts ({kind})")
            out.append(f"{label}: {agreed} of {a.starts[kind]} were the policy's highest-ranked pending job that "
                       f"fitted ({100.0 * agreed / a.starts[kind]:.0f}%)")
        ci = f", 95% interval [{e.ci95_pct[0]:+.1f}%, {e.ci95_pct[1]:+.1f}%]" if e.ci95_pct else ""
        out.append(f"replay of {e.jobs} jobs ({e.dropped} logged jobs had not both started and ended), "
                   f"{e.windows} windows: mean {e.metric} {e.policy:.3g} under the policy, {e.slurm:.3g} under "
                   f"the model of Slurm's own ordering ({e.difference_pct:+.1f}%{ci}); {e.observed:.3g} as it "
                   "happened")
        live = h.get("mode") == "live"
        if e.model is not None:
            checked = model.Check(**e.model)
            if live:
                out.append(f"model of Slurm's order: not checked on a live log (Slurm followed the policy's order; "
                           f"check it on a shadow log); mean wait {e.model_wait:.3g} s modelled, "
                           f"{e.observed_wait:.3g} s as it happened under the policy")
                if e.policy_model is not None:
                    p = model.Check(**e.policy_model)
                    out.append(f"model of Slurm under the policy's order against what Slurm did ({p.jobs} jobs): median "
                               f"|predicted - actual start| {p.mae_s:.2f} s, Kendall tau {p.tau:.3f}, mean predicted - "
                               f"actual {p.bias_s:+.2f} s (mean wait {e.policy_wait:.3g} s modelled)")
                out.append(_times_line(e))
            else:
                out.append(checked.line())
                out.append(_times_line(e))
                out.append(f"mean wait: {e.model_wait:.3g} s under the model of Slurm's order, {e.observed_wait:.3g} s "
                           "as it happened")
        if e.ci95_pct:  # every metric here is lower-is-better
            if live:
                out.append("estimate: " + ("the policy's order keeps paying on this log" if e.ci95_pct[1] < 0 else
                                           "the policy's order is worse than Slurm's own on this log: roll back "
                                           "(schedrl slurm reset)" if e.ci95_pct[0] > 0 else
                                           "no difference the interval can tell from zero on this live log"))
            else:
                out.append("estimate: " + ("the policy's order is better on this log" if e.ci95_pct[1] < 0 else
                                           "the policy's order is worse on this log: do not go live with it"
                                           if e.ci95_pct[0] > 0 else "no difference the interval can tell from "
                                           "zero: shadow longer before going live"))
                from schedrl.slurm import gate

                out.append(gate.describe(self))
        for gain in (5.0, 10.0):
            days = e.more_days(gain)
            if days is not None:
                out.append(f"to tell a {gain:g}% gain from zero (80% power): "
                           + ("this log suffices" if days == 0 else f"about {days:.3g} more day(s) of "
                              f"{'shadow' if not live else 'logging'} at this log's rate ({e.jobs} jobs in "
                              f"{e.span_days:.3g} day(s), spread {e.spread_pct:.3g}% per window)"))
        return out


def _times_line(e: Estimate) -> str:
    """Which times the model ran on, and what that means for its check."""
    every = f"every {e.interval_s:g} s (bf_interval)" if e.interval_s else "every bf_interval"
    if e.times.startswith("slurmctld for"):
        return (f"the model ran on slurmctld's times for some jobs ({e.times[len('slurmctld for '):]}; its log "
                "covers part of the cycle log) and squeue's whole seconds for the rest")
    if e.times == "slurmctld":
        return ("the model ran on slurmctld's times (to the millisecond) and its "
                + ("logged backfill passes" if e.passes == "logged" else f"starts, with passes {every} between"))
    return (f"the model ran on squeue's whole seconds with passes {every}: where waits are seconds (a compressed "
            "rehearsal), which pass first saw a job is a guess and so is the check; give --slurmctld-log")


def read_ctld(slurmctld_log: str | Path, log: Log, path: str | Path) -> CtldTimes:
    """slurmctld's log, read once; ReportError where it cannot be read or names none of the cycle log's jobs (the
    log of another cluster, or of another time)."""
    from schedrl.slurm.passes import CtldLogError

    try:
        ctld = CtldTimes.read(slurmctld_log)
    except CtldLogError as e:
        raise ReportError(str(e)) from None
    known = set(ctld.submit) | set(ctld.start) | set(ctld.end)
    if log.jobs and not known & set(log.jobs):
        raise ReportError(f"--slurmctld-log {slurmctld_log} names none of the {len(log.jobs):,} jobs of {path} "
                          f"({len(known):,} job{'' if len(known) == 1 else 's'} in it): the log of another cluster or "
                          "another time; give the "
                          "slurmctld log of the days the cycle log covers, or leave the option out")
    return ctld


def report(path: str | Path, policy: str | None = None, metric: str = "bsld", windows: int = 10,
           slurmctld_log: str | Path | None = None, progress=None) -> Report:
    """The report of a cycle log (`schedrl slurm report`); `gate.save` keeps a shadow log's for `slurm run`."""
    from schedrl.eval.policies import resolve_policy

    log = Log.read(path)
    spec = policy or log.header.get("policy")
    if not isinstance(spec, str) or not spec:
        raise ReportError(f"{path}: its header names no policy; give --policy")
    ctld = read_ctld(slurmctld_log, log, path) if slurmctld_log else None  # once: starts classified, times, passes
    try:
        chosen = resolve_policy(spec)
    except (ValueError, FileNotFoundError) as e:
        raise ReportError(f"cannot load the log's policy {spec!r} ({e}); give --policy") from None
    from schedrl.slurm.order import PolicyError, runnable

    try:
        usable = max(c.get("usable") or 0 for c in log.cycles)
        runnable(chosen, spec, max(int(usable), 2), max(int(max(c.get("nodes") or 1 for c in log.cycles)), 1))
    except PolicyError as e:
        raise ReportError(str(e)) from None
    return Report(str(path), log.header, agreement(log, None if ctld is None else ctld.started_by),
                  estimate(log, chosen, metric, windows, ctld, progress), spec)
