"""A scenario's (or a trace's) windows bounded: per window the best schedule found and a proven lower bound on the
offline optimum, warm-started from every heuristic's schedule (and any policy given), the best kept.

`bound_window` does one window; `bound_scenario` and `bound_trace` its windows, with one progress line each.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from schedrl.bound import cpsat
from schedrl.bound.gap import GAP_CLOSED
from schedrl.bound.lagrange import CUT_ROUNDS
from schedrl.bound.lower import load_bound, trivial_bound
from schedrl.bound.problem import Problem, infeasible, replay, window_problem
from schedrl.bound.sgs import profile_serial
from schedrl.sim import SimConfig, Simulator
from schedrl.workload.workload import Workload

BYTES_PER_JOB = 256 * 2**10
"""What a window's solve holds per job, twenty times over: a 1,024-job window of `default` raised the process's peak by
12 MB over a 64-job one (295.8 and 308.3 MB, 10 s, two workers); a window that needs more than the memory available
is refused before it is built."""
WARM_RULES = ("fcfs", "sjf", "saf", "wfp3", "unicep", "f1")
"""The heuristics whose schedules start every window (without backfilling, with EASY and with conservative
backfilling; under the scenario's discipline and under `list`), beside the scenario's baselines: any feasible schedule
is a schedule of the offline problem. SAF under `list` with backfilling is often the best of them on bsld (a mean of
18.9-21.8 on three of `default`'s windows, where the best under the scenario's own pick-and-wait was 41.8-66.0)."""
OFFLINE_ORDERS = ("run time", "area")
"""Clairvoyant warm starts no online rule can make: the serial schedule-generation scheme over the jobs by true run
time, and by area (run time x demand), each placed at its earliest feasible start, in a hole before jobs placed
earlier if one fits (`schedrl.bound.sgs.profile_serial`). On `default`'s first 1,024-job evaluation window the run-time
order gives a mean bsld of 2.07, where the best of the rules' 36 schedules gives 12.4 (docs/experiments/bound.md)."""
LP_SLOTS = 0
"""The time slots of the LP lower bound (`schedrl.bound.lp`), 0: not run. The Lagrangian bound dominates it where both
were measured (1.2525 in 2.4 s against 1.2226 in 4.8 s with 128 slots each on `default`'s first 1,024-job window;
docs/experiments/bound.md)."""
LAGRANGE_SLOTS = 128
"""The price slots of the Lagrangian lower bound (`schedrl.bound.lagrange`): one per arrival up to this many."""
LAGRANGE_ITERATIONS = 300
"""Its subgradient steps per window (where the LP of `CUT_ROUNDS` fails)."""
# CUT_ROUNDS (`schedrl.bound.lagrange`'s, imported above): the Lagrangian bound's prices come from HiGHS's LP dual,
# with up to that many rounds of rows for jobs that cannot run at once (`cut_bound`, within what `CPSAT_SHARE`
# leaves); the subgradient's only where the LP fails. On `default`'s third 256-job test window: 1.1277 in 1.6 s,
# where the subgradient gave 1.0948 and CP-SAT's own bound 1.1177 in 60 s (docs/experiments/bound.md).
CUT_COVERS = True
"""`cut_bound` also adds rows for three or more jobs whose demands exceed the capacity (at most all but one at once):
on the same window 1.1298 where the pairs alone gave 1.1277, and 1.0917 against 1.0811 on the second."""
CUT_SETS = True
"""`cut_bound` also adds rows for each slot's widest jobs, at most as many of them at once as fit (t = 1: a clique):
on the four 256-job test windows +0.0012 to +0.0044 over the covers, in about the same time."""
BRANCHING = True
"""What CP-SAT and `cut_bound` leave of the time after the local search goes to
`schedrl.bound.lagrange.branch_bound` (time limit above 0 only, and CP-SAT not optimal): the relaxation branched on
the job start its LP spreads most, best first. On `default`'s third 256-job test window 1.1338 -> 1.1403 in 26 s
(20 branches), where the covers alone gave 1.1297 (docs/experiments/bound.md)."""
CPSAT_SHARE = 0.25
"""CP-SAT's share of what the local search leaves of `--time-limit` where the branching follows it (else the rest of
that time): CP-SAT on the whole window, from the best schedule within the starts the LP's fixing leaves, after
`cut_bound` (its rounds at most the rest, and at least 5 s) and before the branching, which gets what the two leave.
So a window takes `--time-limit` (or 5 s more where the rounds need them). At 256 jobs and 300 s CP-SAT's whole 150 s
of before found no better schedule and a bound under the branching's on all four test windows; on `hpc2n`'s windows
at 20 s it proves some optimal and holds the largest bound on a few (docs/experiments/bound.md)."""
LNS_SHARE = 0.5
"""The share of `--time-limit` (or `--work`) the local search (`schedrl.bound.lns`) gets before CP-SAT solves the whole
window from its schedule. On the third of `default`'s 256-job test windows it took the best offline order's 1.3914
to 1.2348 in 150 s, where CP-SAT on the whole window reached 1.2941 in 300 s (docs/experiments/bound.md)."""
LP_TIME_LIMIT = 300.0
"""HiGHS's limit per window for the LP; past it the LP gives no bound (the others stand)."""


@dataclass
class WindowBound:
    """One window's two sides."""

    start: int
    """The window's first job (its position in the trace the scenario's windows index)."""
    jobs: int
    upper: float
    """The best schedule found: its metric, replayed through `schedrl.metrics`."""
    upper_source: str
    """Who found it: `cp-sat` or a warm start's label."""
    lower: float
    """The largest proven lower bound."""
    lower_source: str
    """`cp-sat`, `load` or `trivial`."""
    lowers: dict[str, float]
    """Every lower bound: trivial, load, cp-sat."""
    warm: dict[str, float]
    """Each warm start's metric on the window (label -> value)."""
    status: str
    """CP-SAT's status (OPTIMAL: the two sides meet), or `not run` (time limit 0 in a library call)."""
    seconds: float
    schedule: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    """The best schedule's start times (trace clock)."""
    job_ids: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    submit: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    end: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    @property
    def gap(self) -> float:
        """(best found - lower bound) / best found."""
        return (self.upper - self.lower) / self.upper if self.upper > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "jobs": self.jobs, "upper": self.upper, "upper_source": self.upper_source,
                "lower": self.lower, "lower_source": self.lower_source, "lowers": self.lowers, "gap": self.gap,
                "warm": self.warm, "status": self.status, "seconds": self.seconds}


def check_memory(jobs: int) -> None:
    """ValueError (one line) where a window of `jobs` jobs needs more memory than is available."""
    try:
        import os

        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return
    need = jobs * BYTES_PER_JOB
    if need > available:
        raise ValueError(f"a window of {jobs:,} jobs needs about {need / 2**30:.1f} GiB for the solver and "
                         f"{available / 2**30:.1f} GiB is available: use fewer jobs (--jobs "
                         f"{max(1, available // BYTES_PER_JOB):,} or less)")


def warm_schedules(workload: Workload, config: SimConfig, makers: Mapping[str, tuple[Callable[[], Any], SimConfig]]
                   ) -> dict[str, Any]:
    """label -> the `Schedule` of each policy (made by its factory) under its own `SimConfig`."""
    from schedrl.scenarios.drawing import run_policy

    return {label: run_policy(make(), Simulator(workload, sim)) for label, (make, sim) in makers.items()}


def rule_makers(config: SimConfig, rules=WARM_RULES) -> dict[str, tuple[Callable[[], Any], SimConfig]]:
    """The warm-start heuristics under `config`'s kill and allocation semantics: each rule without backfilling, with
    EASY and with conservative backfilling, under `config`'s discipline and under `list` (label `SAF+EASY (list)`)."""
    from dataclasses import replace

    from schedrl.heuristics import get_heuristic

    out = {}
    for rule in rules:
        for discipline in dict.fromkeys((config.discipline, "list")):
            for backfill in ("none", "easy", "conservative"):
                sim = replace(config, discipline=discipline, backfill=backfill,
                              window=config.window if discipline == config.discipline else 0)
                label = rule.upper() + ("" if backfill == "none" else "+" + backfill.upper()) + \
                    ("" if discipline == config.discipline else f" ({discipline})")
                out[label] = (lambda r=rule: get_heuristic(r, 0), sim)
    return out


def offline_starts(problem: Problem) -> dict[str, np.ndarray]:
    """label -> start times (the window's clock) of the serial scheme over each `OFFLINE_ORDERS` order."""
    keys = {"run time": problem.duration, "area": problem.duration * problem.demand.sum(axis=1)}
    return {f"offline SGS by {name}": profile_serial(problem, np.lexsort((problem.release, keys[name])))
            for name in OFFLINE_ORDERS}


def bound_window(problem: Problem, warm: Mapping[str, Any], time_limit: float, *, workers: int = 2, seed: int = 0,
                 start: int = 0, slices: int | None = None, log: Callable[[str], None] | None = None,
                 work: float | None = None, lp_slots: int = LP_SLOTS,
                 lagrange_slots: int = LAGRANGE_SLOTS, lns: float = LNS_SHARE,
                 cut_rounds: int = CUT_ROUNDS) -> WindowBound:
    """The window's best schedule and largest lower bound: the warm schedules (`Schedule`s of the window, each
    replayed and checked feasible) and the offline orders (`offline_starts`), then CP-SAT from the best of them for
    `time_limit` seconds (0: the warm starts and the solver-free bounds only): the share `lns` of it to the local
    search (`schedrl.bound.lns`) from the best of them, then, within the best schedule's horizon, the Lagrangian lower
    bound with `lagrange_slots` price slots (`schedrl.bound.lagrange`; 0: none), priced by the LP dual with
    `cut_rounds` rounds of conflicting pairs' rows (`cut_bound`; the subgradient where that fails), whose fixing narrows
    the starts CP-SAT then searches over the whole window (`CPSAT_SHARE` of the rest), then `branch_bound` for what
    is left (where `BRANCHING`), and the LP lower bound with
    `lp_slots` slots (`schedrl.bound.lp`; 0: none). With `slices` and a window larger than that, half the time goes
    to the sum of the slices' own bounds (`schedrl.bound.decompose.slice_lower`, cut where the local search's
    schedule carries the least work across), half to the whole window. `work`: CP-SAT's deterministic limit instead
    of the wall clock (`schedrl.bound.cpsat.solve`; not with `slices`)."""
    t0 = time.perf_counter()
    values, starts = {}, {}
    for label, sched in warm.items():
        s = np.round(np.asarray(sched.start) - problem.origin).astype(np.int64)
        why = infeasible(problem, s)
        if why is not None:
            raise ValueError(f"the schedule of {label} is not one of the window's offline problem: {why}")
        values[label] = replay(problem, s)
        starts[label] = s
    if not values:
        raise ValueError("no warm start: give at least one heuristic or policy")
    for label, s in offline_starts(problem).items():
        values[label] = replay(problem, s)
        starts[label] = s
    best = min(values, key=values.get)
    upper, source, schedule = values[best], best, starts[best]
    lowers = {"trivial": trivial_bound(problem), "load": load_bound(problem)}
    status = "not run"
    sliced = time_limit > 0 and slices is not None and problem.n > slices
    if sliced:
        time_limit /= 2
    if time_limit > 0 and lns > 0:
        from schedrl.bound.lns import search

        searched = search(problem, schedule, time_limit * lns, seed=seed, log=log,
                          work=None if work is None else work * lns)
        value = replay(problem, searched.start)  # checked and scored by our code
        if value < upper:
            upper, source, schedule = value, "lns", searched.start
        if log is not None:
            log(f"lns: {searched.neighbourhoods} neighbourhoods, {searched.improved} improved, best {value:,.4f}, "
                f"{searched.seconds:.1f} s")
        time_limit *= 1 - lns
        work = None if work is None else work * (1 - lns)
    if sliced:  # cut where the local search's schedule carries the least work from one slice to the next
        from schedrl.bound.decompose import slice_lower

        lowers["slices"] = slice_lower(problem, slices, time_limit / (1 - lns) if lns > 0 else time_limit,
                                       workers=workers, seed=seed, hint=schedule, lns=lns,
                                       lagrange_slots=lagrange_slots)
    priced, phase, branching = None, time.perf_counter(), False
    if lagrange_slots > 0:
        from schedrl.bound.lagrange import cut_bound, lagrangian_bound

        until = int((schedule + problem.duration).max())
        budget = max(5.0, (1 - CPSAT_SHARE) * time_limit)
        priced = cut_bound(problem, upper, slots=lagrange_slots, until=until, fix=time_limit > 0,
                           rounds=cut_rounds, time_limit=budget, covers=CUT_COVERS, sets=CUT_SETS)
        if priced.iterations > 0:
            lowers["cuts"] = priced.lower
            branching = BRANCHING and time_limit > 0
            if log is not None:
                log(f"lagrange at the LP's prices: {priced.iterations} LP solves in {priced.seconds:.1f} s "
                    f"({priced.slots} slots, {priced.cuts:,} rows), bound {priced.lower:,.4f}")
        else:  # the LP failed: the subgradient's prices
            priced = lagrangian_bound(problem, upper, slots=lagrange_slots, iterations=LAGRANGE_ITERATIONS,
                                      until=until, fix=time_limit > 0)
            lowers["lagrange"] = priced.lower
            if log is not None:
                log(f"lagrange: {priced.iterations} steps in {priced.seconds:.1f} s ({priced.slots} slots), bound "
                    f"{priced.lower:,.4f}")
    # the LP's rounds, CP-SAT and the branching share `time_limit` (at least 5 s for the rounds): CP-SAT its share,
    # the branching what the other two leave
    deadline = phase + max(time_limit, 5.0 + CPSAT_SHARE * time_limit)
    if time_limit > 0:
        limit = CPSAT_SHARE * time_limit if branching else max(deadline - time.perf_counter(), CPSAT_SHARE * time_limit)
        solved = cpsat.solve(problem, schedule, upper, limit, workers=workers, seed=seed, log=log, work=work,
                             starts=None if priced is None else priced.starts)
        status = solved.status
        lowers["cp-sat"] = solved.lower
        if solved.start is not None:
            value = replay(problem, solved.start)  # the solver's schedule, checked and scored by our code
            if value < upper:
                upper, source, schedule = value, "cp-sat", solved.start
    if branching and status != "OPTIMAL" and deadline - time.perf_counter() >= 1.0:
        from schedrl.bound.lagrange import branch_bound

        t1 = time.perf_counter()
        lowers["branches"], made = branch_bound(problem, upper, slots=lagrange_slots, until=until,
                                                time_limit=deadline - t1, rounds=cut_rounds, covers=CUT_COVERS,
                                                sets=CUT_SETS, root=priced, log=log)
        if log is not None:
            log(f"branching: {made} branches in {time.perf_counter() - t1:.1f} s, bound {lowers['branches']:,.4f}")
    until = int((schedule + problem.duration).max())
    if lp_slots > 0:
        from schedrl.bound.lp import lp_bound

        relaxed = lp_bound(problem, upper, slots=lp_slots, time_limit=LP_TIME_LIMIT, until=until)
        if relaxed.status == "optimal":
            lowers["lp"] = relaxed.lower
        if log is not None:
            log(f"lp {relaxed.status} in {relaxed.seconds:.1f} s ({relaxed.columns:,} columns, {relaxed.rows:,} "
                f"rows, {relaxed.slots} slots), bound {relaxed.lower:,.4f}")
    lower_source = max(lowers, key=lowers.get)
    lower = lowers[lower_source]
    if lower > upper * (1 + 1e-9) + 1e-9:
        raise RuntimeError(f"the lower bound {lower} ({lower_source}) exceeds a schedule's {upper} ({source})")
    return WindowBound(start=start, jobs=problem.n, upper=upper, upper_source=source, lower=min(lower, upper),
                       lower_source=lower_source, lowers=lowers, warm=values, status=status,
                       seconds=time.perf_counter() - t0, schedule=schedule + problem.origin,
                       job_ids=np.asarray(problem.workload.job_id), submit=problem.release + problem.origin,
                       end=schedule + problem.origin + problem.duration)


def _phases(log: Callable[[str], None] | None, name: str, i: int, total: int) -> Callable[[str], None] | None:
    """`log` with each line of window i's phases (the local search's, the LP's, CP-SAT's, the branching's) named by
    its window."""
    return None if log is None else (lambda message: log(f"{name}: window {i + 1}/{total}: {message}"))


def _line(name: str, i: int, total: int, w: WindowBound, metric: str) -> str:
    note = "" if w.gap <= GAP_CLOSED else " (gap open)"
    return (f"{name}: window {i + 1}/{total} (start {w.start}, {w.jobs} jobs): best found {w.upper:,.4f} "
            f"({w.upper_source}), lower bound {w.lower:,.4f} ({w.lower_source}), gap {100 * w.gap:.1f}%{note}; "
            f"best warm start {min(w.warm.values()):,.4f}; {metric}, {w.seconds:.1f} s")


def bound_scenario(scenario, time_limit: float, *, part: str = "evaluation", sequences: int | None = None,
                   jobs: int | None = None, workers: int = 2, seed: int = 0,
                   policies: Mapping[str, Callable[[], Any]] | None = None,
                   progress: Callable[[str], None] | None = None, keep: bool = False,
                   slices: int | None = None, work: float | None = None, lp_slots: int = LP_SLOTS,
                   lagrange_slots: int = LAGRANGE_SLOTS, lns: float = LNS_SHARE,
                   cut_rounds: int = CUT_ROUNDS, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every window of the scenario's `part` (the first `sequences`; each cut to its first `jobs` jobs) bounded, with
    its baselines, the warm-start rules and `policies` (label -> factory, run under the scenario's semantics) as
    warm starts. A JSON-ready dict (`summary` of the windows, the scenario's reference and baselines' means on them).
    `progress`: a line per window; `log`: the phases' lines within each window too (`_phases`)."""
    from dataclasses import replace

    from schedrl.scenarios import scoring
    from schedrl.workload.sampling import sequence

    scenario.trace_only(f"scenario {scenario.name!r} runs on the discrete-time cluster: the offline bound is for the "
                        f"event simulator's scenarios")
    data = scoring.load(scenario)
    seqs = scoring.sequences(scenario, data, part)
    if sequences is not None:
        seqs = replace(seqs, ids=seqs.ids[:sequences])
    length = seqs.length if jobs is None else min(jobs, seqs.length)
    check_memory(length)
    source = seqs.data if seqs.data is not None else data
    makers = {b.name(scenario.sim): (lambda b=b: scenario.baseline_factory(b)(0), scenario.semantics_of(b))
              for b in scenario.baselines}
    for label, made in rule_makers(scenario.sim).items():
        makers.setdefault(label, made)
    for label, make in (policies or {}).items():
        makers[label] = (make, scenario.sim)
    rows = []
    for i, start in enumerate(seqs.ids):
        workload = sequence(source, int(start), length)
        problem = window_problem(workload, scenario.sim, scenario.metric)
        rows.append(bound_window(problem, warm_schedules(workload, scenario.sim, makers), time_limit,
                                 workers=workers, seed=seed, start=int(start), slices=slices, work=work,
                                 lp_slots=lp_slots, lagrange_slots=lagrange_slots, lns=lns, cut_rounds=cut_rounds,
                                 log=_phases(log, scenario.name, i, len(seqs.ids))))
        if progress is not None:
            progress(_line(scenario.name, i, len(seqs.ids), rows[-1], scenario.metric))
    baselines = [b.name(scenario.sim) for b in scenario.baselines] + list(policies or {})
    return result(rows, name=scenario.name, metric=scenario.metric, time_limit=time_limit, workers=workers,
                  reference=scenario.reference, methods=baselines,
                  extra={"sha256": scenario.sha256(), "part": part, "sim": scenario.sim.to_dict(),
                         "sequences": {"count": len(rows), "jobs": length, "subsample": sequences is not None
                                       or length < seqs.length}, "work": work,
                         "lagrange_slots": lagrange_slots, "lp_slots": lp_slots, "lns": lns,
                         "cut_rounds": cut_rounds},
                  keep=keep, slices=slices)


def bound_trace(workload: Workload, starts, length: int, config: SimConfig, metric: str, time_limit: float, *,
                name: str, workers: int = 2, seed: int = 0,
                policies: Mapping[str, Callable[[], Any]] | None = None,
                progress: Callable[[str], None] | None = None, keep: bool = False,
                slices: int | None = None, work: float | None = None, lp_slots: int = LP_SLOTS,
                lagrange_slots: int = LAGRANGE_SLOTS, lns: float = LNS_SHARE,
                cut_rounds: int = CUT_ROUNDS, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The windows of `workload` at `starts` (each `length` jobs) bounded under `config`'s semantics for `metric`,
    warm-started from the rules (`WARM_RULES`) and `policies`; `progress` and `log` as `bound_scenario` says."""
    from schedrl.workload.sampling import sequence

    check_memory(length)
    makers = rule_makers(config)
    for label, make in (policies or {}).items():
        makers[label] = (make, config)
    rows = []
    for i, start in enumerate(starts):
        window = sequence(workload, int(start), length)
        problem = window_problem(window, config, metric)
        rows.append(bound_window(problem, warm_schedules(window, config, makers), time_limit, workers=workers,
                                 seed=seed, start=int(start), slices=slices, work=work, lp_slots=lp_slots,
                                 lagrange_slots=lagrange_slots, lns=lns, cut_rounds=cut_rounds,
                                 log=_phases(log, name, i, len(starts))))
        if progress is not None:
            progress(_line(name, i, len(starts), rows[-1], metric))
    return result(rows, name=name, metric=metric, time_limit=time_limit, workers=workers, reference=None,
                  methods=list(makers), extra={"sim": config.to_dict(), "sequences": {"count": len(rows),
                                                                                    "jobs": length}, "work": work,
                                               "lagrange_slots": lagrange_slots, "lp_slots": lp_slots, "lns": lns,
                                               "cut_rounds": cut_rounds},
                  keep=keep, slices=slices)


def result(rows: list[WindowBound], *, name: str, metric: str, time_limit: float, workers: int, reference,
           methods, extra: Mapping[str, Any], keep: bool = False, slices: int | None = None) -> dict[str, Any]:
    """The windows and their summary as one JSON-ready dict (with `keep`, the best schedules under `_schedules`, for
    `schedule_files`)."""
    upper = float(np.mean([r.upper for r in rows]))
    lower = float(np.mean([r.lower for r in rows]))
    trivial = float(np.mean([r.lowers["trivial"] for r in rows]))
    gap = (upper - lower) / upper if upper > 0 else 0.0
    means = {m: float(np.mean([r.warm[m] for r in rows])) for m in methods if all(m in r.warm for r in rows)}
    return {"name": name, "metric": metric, "time_limit": time_limit, "workers": workers, "slices": slices,
            "solver": solver_version(),
            **extra, "reference": reference, "methods": means,
            "summary": {"windows": len(rows), "upper": upper, "lower": lower, "gap": gap,
                        "closed": gap <= GAP_CLOSED, "solved": sum(r.status == "OPTIMAL" for r in rows),
                        "within": sum(r.gap <= GAP_CLOSED for r in rows),
                        "mean_window_gap": float(np.mean([r.gap for r in rows])),
                        "trivial": trivial, "over_trivial": lower - trivial,
                        "seconds_per_window": float(np.mean([r.seconds for r in rows]))},
            "windows": [r.to_dict() for r in rows],
            **({"_schedules": [(r.start, r.job_ids, r.submit, r.schedule, r.end) for r in rows]} if keep else {})}


def schedule_files(result: Mapping[str, Any], directory) -> list[tuple[Any, str]]:
    """(path, CSV text) of each window's best schedule: job id, submit, start and end (trace clock, seconds), under
    DIRECTORY/NAME/window-START.csv, with the bound's two sides in a comment line."""
    from pathlib import Path

    out = []
    folder = Path(directory) / Path(str(result["name"])).name
    for w, (start, ids, submit, begin, end) in zip(result["windows"], result["_schedules"]):
        lines = [f"# {result['name']} window {start}: {result['metric']} best found {w['upper']!r} "
                 f"({w['upper_source']}), lower bound {w['lower']!r} ({w['lower_source']})",
                 "job_id,submit,start,end"]
        lines += [f"{int(a)},{int(b)},{int(c)},{int(d)}" for a, b, c, d in zip(ids, submit, begin, end)]
        out.append((folder / f"window-{start}.csv", "\n".join(lines) + "\n"))
    return out


def solver_version() -> str:
    try:
        import ortools

        return f"OR-Tools CP-SAT {ortools.__version__}"
    except ImportError:
        return "none"
