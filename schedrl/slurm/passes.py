"""Slurm's backfill scheduler as it plans, pass by pass: the model of what Slurm starts, and when.

What a shadow replay on a real Slurm 22.05 showed (issue 48; slurmctld with `DebugFlags=Backfill,BackfillMap`,
docs/slurm.md has the run): in compressed time nearly every job is started by the backfill scheduler (94 of 100), at
its passes, one every `bf_interval` after the previous one ended; and it holds small jobs while CPUs are idle because
its plan is a map of *nodes* over time, not of CPUs. At each pass it walks the pending jobs in priority order; a job
that can start now (its CPUs free on a node no higher-priority job has reserved for any part of the job's time limit)
starts; a job that cannot is given the earliest start the running jobs' time limits allow on such nodes, and its
nodes are reserved from that start to its end, both rounded down to `bf_resolution`, for every job tested after it in
this pass. On a one-node partition the first reservation thus blocks every later job whose time limit reaches the
reservation's (rounded) start, whatever CPUs are idle: a 1-minute job reserved for the next minute holds the whole
queue. An event simulator that starts a job the moment it fits (and plans CPUs, not nodes) starts those jobs early;
this model does not.

The model here (`plan`): passes at given times (Slurm's own, read from its log, or every `bf_interval`); at each, the
jobs submitted by then in the order a key gives (Slurm's multifactor priority for Slurm's own order, or an order in
force for a policy's), up to `bf_max_job_test`; running jobs end, for planning, at start + time limit (their actual
ends free the CPUs); a job reserved blocks whole nodes (its CPUs rounded up to nodes of the partition's size: on a
one-node partition, all of it) over its rounded window; a job starts at a pass if its CPUs are free now and through
its time limit none of them is reserved. A pool of CPUs stands in for the nodes: on a partition of many nodes,
which node a job lands on is not modelled (the blocking is by CPU count, not by node), so the model is exact for one
node and an approximation beyond.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

import numpy as np

from schedrl.sim.slurmconf import BackfillParams

Key = Callable[[float, np.ndarray, np.ndarray], np.ndarray]
"""(pass time, pending job indices, starts so far) -> each pending job's priority at that pass (higher first; ties:
submit, then index)."""


def plan(submit: np.ndarray, run: np.ndarray, cpus: np.ndarray, limit: np.ndarray, key: Key, passes: np.ndarray,
         usable: int, node_cpus: int | None, params: BackfillParams, epoch: float = 0.0,
         progress: Callable[[str], None] | None = None) -> np.ndarray:
    """Each job's start under the backfill scheduler's passes (module docstring).

    Times are seconds from `epoch` (epoch seconds of time 0: the plan's grain is aligned to the wall clock, as
    Slurm's is). `passes`: the pass times; where jobs are still waiting after the last, passes go on every
    `params.interval_s`. A pass at which nothing changed since the one before (no arrival, no end, no start) is
    skipped: it would start nothing (unless the age factor reordered the queue meanwhile; the next event's pass
    looks again). `node_cpus`: CPUs per node (None: unknown, a reservation blocks only its own
    CPUs). `key(t, pending, start)`: the order at a pass (`start`: the starts so far, NaN for waiting jobs)."""
    submit, run = np.asarray(submit, float), np.asarray(run, float)
    cpus, limit = np.asarray(cpus, np.int64), np.asarray(limit, float)
    n = len(submit)
    start = np.full(n, np.nan)
    if n == 0:
        return start
    if int(cpus.max()) > usable:
        raise ValueError(f"a job of {int(cpus.max())} CPUs cannot start on {usable} usable CPUs")
    res = params.resolution_s
    waiting = np.ones(n, bool)
    passes = np.sort(np.asarray(passes, float))
    changed_since = -math.inf  # no pass yet
    last = passes[0] if len(passes) else 0.0
    k, said = 0, 0
    interval = max(params.interval_s, 1e-3)
    while waiting.any():
        if k < len(passes):
            t = float(passes[k])
        else:
            t = last + interval
        k += 1
        done_at = start + run
        events = ((submit > changed_since) & (submit <= t)).any() or \
            ((~waiting) & (done_at > changed_since) & (done_at <= t)).any()
        last = t
        if not events and changed_since > -math.inf:
            continue
        started_before = int((~waiting).sum())
        pending = np.flatnonzero(waiting & (submit <= t))
        changed_since = t
        if not len(pending):
            continue
        values = np.asarray(key(t, pending, start), float)
        order = pending[np.lexsort((pending, submit[pending], -values))][:params.max_job_test]
        started = np.flatnonzero(~waiting)
        live = started[start[started] + run[started] > t]
        run_end = list(start[live] + limit[live])
        run_cpus = list(cpus[live])
        reserved: list[tuple[float, float, int]] = []  # (begin, end, CPUs), seconds from the epoch
        free_now = usable - int(sum(run_cpus))
        narrowest = np.minimum.accumulate(cpus[order][::-1])[::-1]  # the narrowest job from each position on
        for i, j in enumerate(order):
            if narrowest[i] > free_now:
                break  # no job from here on fits the CPUs free now: the rest of the pass starts nothing
            s = _earliest(t, int(cpus[j]), float(limit[j]), run_end, run_cpus, reserved, usable)
            if s <= t:
                start[j], waiting[j] = t, False
                run_end.append(t + limit[j])
                run_cpus.append(int(cpus[j]))
                free_now -= int(cpus[j])
            elif s <= t + params.window_s:
                begin = math.floor((s + epoch) / res) * res - epoch
                end = math.floor((s + limit[j] + epoch) / res) * res - epoch
                block = min(usable, math.ceil(cpus[j] / node_cpus) * node_cpus) if node_cpus else int(cpus[j])
                reserved.append((begin, end, block))
        if int((~waiting).sum()) > started_before:
            changed_since = t - 1e-9  # a start is a change: the next pass looks again
        if progress is not None and int((~waiting).sum()) >= said + max(n // 10, 1):
            said = int((~waiting).sum())
            progress(f"{said} of {n} jobs started in the model")
    return start


def _earliest(t: float, c: int, length: float, run_end: list, run_cpus: list, reserved: list, usable: int
              ) -> float:
    """The earliest start >= t of a job of `c` CPUs and time limit `length`: its CPUs free of running jobs (by
    their planned ends) and of every reservation its window [s, s + length] touches (`c` <= `usable`)."""
    ends = np.array(run_end, float)
    used = np.array(run_cpus, np.int64)
    candidates = sorted({t, *(e for e in run_end if e > t), *(e for _, e, _ in reserved if e > t)})
    for s in candidates:
        touching = [(begin, end, b) for begin, end, b in reserved if end > s and begin <= s + length]
        # running jobs only end, so their CPUs peak at s; reservations add theirs from their (rounded) begin on
        points = {s, *(begin for begin, _, _ in touching if begin > s)}
        if all(int(used[ends > p].sum()) + sum(b for begin, end, b in touching if begin <= p < end) + c <= usable
               for p in points):
            return s
    return candidates[-1]  # past every planned end and reservation: all free


# ------------------------------------------------------------------ slurmctld's log: times to the millisecond

_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)\] (.*)$")
_SUBMIT = re.compile(r"_slurm_rpc_submit_batch_job: JobId=(\d+)")
_MAIN = re.compile(r"sched: Allocate JobId=(\d+)")
_BACKFILL = re.compile(r"sched/backfill: _start_job: Started JobId=(\d+)")
_END = re.compile(r"_job_complete: JobId=(\d+) done")
_PASS = re.compile(r"_attempt_backfill: beginning")


MAX_JOB_ID_DIGITS = 10
"""Slurm's job ids are 32-bit (at most 4,294,967,295): a longer number in a job id's place is not one."""


class CtldLogError(ValueError):
    """A slurmctld log that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class CtldTimes:
    """What slurmctld's log says, in epoch seconds to the millisecond (SlurmctldDebug=info or more)."""

    submit: dict[int, float]
    start: dict[int, float]
    end: dict[int, float]
    passes: tuple[float, ...]
    """Backfill passes' beginnings (DebugFlags=Backfill) and the main scheduler's starts."""
    logged_passes: bool
    """Whether the log has the backfill passes themselves (DebugFlags=Backfill), not only the starts."""
    started_by: dict[int, tuple[str, int]]
    """Job id -> (`main` or `backfill`, the line number): which of slurmctld's schedulers started it, and in which
    order jobs started within a second."""

    @classmethod
    def read(cls, path: str | Path) -> "CtldTimes":
        """CtldLogError naming the file (and line) for a file that is not a regular one, a line longer than
        `cyclelog.MAX_LINE` or more than `cyclelog.MAX_LOG_BYTES` read, an impossible time stamp, or a job id that
        is not one."""
        from schedrl.slurm.cyclelog import CycleLogError, lines

        submit, start, end, passes, started_by, logged = {}, {}, {}, set(), {}, False
        try:
            for number, raw in lines(Path(path), "slurmctld log"):
                line = raw.decode(errors="replace")
                m = _STAMP.match(line)
                if not m:
                    continue
                msg = m.group(2)
                if not any(word in msg for word in ("JobId=", "_attempt_backfill")):
                    continue
                try:
                    t = datetime.fromisoformat(m.group(1)).timestamp()
                except (ValueError, OverflowError, OSError) as e:
                    raise CtldLogError(f"slurmctld log {path}:{number}: impossible time stamp {m.group(1)!r} ({e})"
                                       ) from None
                g = _SUBMIT.search(msg) or _MAIN.search(msg) or _BACKFILL.search(msg) or _END.search(msg)
                if g is not None and len(g.group(1)) > MAX_JOB_ID_DIGITS:
                    raise CtldLogError(f"slurmctld log {path}:{number}: a job id of {len(g.group(1)):,} digits (Slurm's "
                                       f"have at most {MAX_JOB_ID_DIGITS})")
                if g is not None and g.re is _SUBMIT:
                    submit[int(g.group(1))] = t
                elif g is not None and g.re in (_MAIN, _BACKFILL):
                    job = int(g.group(1))
                    start.setdefault(job, t)
                    started_by[job] = ("main" if g.re is _MAIN else "backfill", number - 1)
                    passes.add(round(t, 3))
                elif g is not None:
                    end[int(g.group(1))] = t
                elif _PASS.search(msg):
                    passes.add(round(t, 3))
                    logged = True
        except CycleLogError as e:
            raise CtldLogError(str(e)) from None
        return cls(submit, start, end, tuple(sorted(passes)), logged, started_by)


def pass_times(first: float, last: float, interval: float, known: tuple[float, ...] = ()) -> np.ndarray:
    """Pass times over [first, last]: the `known` ones, and in every gap longer than 1.5 `interval` more at that
    cadence (a pass that started nothing leaves no start line)."""
    interval = max(interval, 1e-3)
    points = sorted(p for p in known if first - interval <= p <= last + interval)
    if not points:
        return np.arange(first, last + interval, interval)
    out = list(np.arange(points[0] - interval, first - 1e-9, -interval))[::-1]
    for a, b in zip(points, points[1:] + [last + interval]):
        out.append(a)
        k = 1
        while a + k * interval < b - interval / 2:
            out.append(a + k * interval)
            k += 1
    return np.array(sorted(set(out)))


__all__ = ["BackfillParams", "CtldLogError", "CtldTimes", "Key", "pass_times", "plan"]
