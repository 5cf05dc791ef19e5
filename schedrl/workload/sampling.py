"""Job sequences drawn from a workload: contiguous windows and re-timed samples.

* `sequence` / `random_starts`: contiguous windows of a trace (RLScheduler trains on random
  windows of 256 consecutive jobs, RLScheduler §V-A);
* `poisson_retimed`: jobs picked at random, arriving as a Poisson process at the trace's mean rate
  (DRAS §III-C "sampled jobsets", the easiest phase of its curriculum);
* `bernoulli_arrivals`: one job arrives at each time step with probability p (RLSchert §4.1.1);
* `synthetic_jobset`: jobs drawn from the trace's joint size/run-time distribution, arriving with
  its hour-of-week pattern (DRAS §IV-A / MRSch §V-A synthetic jobsets, the third curriculum phase).

Re-timed samples are new traces: jobs are renumbered 1..n in arrival order, the first submit is
0, and fields that referred to the old timeline or old job numbers (wait, preceding job, think
time) are set to -1. Every function takes a seeded `numpy.random.Generator`.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Callable

import numpy as np

from schedrl.workload.workload import Workload

SECONDS_PER_HOUR = 3600
HOURS_PER_WEEK = 168


def _check_count(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), "
                        f"got {type(rng).__name__}")
    return rng


def sequence(wl: Workload, start: int, length: int) -> Workload:
    """Jobs `start` .. `start + length - 1` of `wl`, as a view sharing its arrays.

    Job ids and submit times are those of the trace, so a sequence can be traced back to its source;
    the simulator measures time from the sequence's first submit.
    """
    length = _check_count("length", length)
    start = _check_count("start", start, minimum=0)
    if length > len(wl):
        raise ValueError(f"a sequence of {length} jobs is longer than {wl.name!r} ({len(wl)} jobs)")
    if start + length > len(wl):
        raise ValueError(f"sequence [{start}, {start + length}) runs past the end of {wl.name!r} ({len(wl)} jobs); "
                         f"start must be <= {len(wl) - length}")
    return wl[start:start + length]


def random_starts(n_jobs_total: int, length: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` start indices drawn uniformly (with replacement) so that each window fits the trace."""
    n_jobs_total = _check_count("n_jobs_total", n_jobs_total)
    length = _check_count("length", length)
    count = _check_count("count", count, minimum=0)
    if length > n_jobs_total:
        raise ValueError(f"a window of {length} jobs does not fit in a trace of {n_jobs_total} jobs")
    return _check_rng(rng).integers(0, n_jobs_total - length + 1, size=count, dtype=np.int64)


def mean_arrival_rate(wl: Workload) -> float:
    """Jobs per second over the trace's submit span ((n - 1) gaps over last - first submit)."""
    if len(wl) < 2:
        raise ValueError(f"{wl.name!r} has {len(wl)} job(s): an arrival rate needs at least two")
    span = float(wl.submit[-1] - wl.submit[0])
    if span <= 0:
        raise ValueError(f"every job of {wl.name!r} is submitted at the same time: its arrival rate is undefined")
    return (len(wl) - 1) / span


def _retimed(wl: Workload, picked: np.ndarray, submit: np.ndarray, name: str) -> Workload:
    """Jobs `picked` (in that order) with new submit times, renumbered 1..n from time 0."""
    order = np.argsort(submit, kind="stable")
    picked, submit = picked[order], np.asarray(submit)[order]
    out = wl[picked]
    n = len(picked)
    none = np.full(n, -1, dtype=np.int64)
    out = out.with_columns(job_id=np.arange(1, n + 1, dtype=np.int64), submit=(submit - submit[0]).astype(np.int64),
                           wait=none, prev_job=none, think_time=none)
    return dataclasses.replace(out, name=name, report=None)


def _pick(rng: np.random.Generator, n_available: int, n_jobs: int, replace: bool, what: str) -> np.ndarray:
    if not replace and n_jobs > n_available:
        raise ValueError(f"cannot draw {n_jobs} distinct jobs from {what} ({n_available} jobs); pass replace=True")
    return rng.choice(n_available, size=n_jobs, replace=replace)


def poisson_retimed(wl: Workload, n_jobs: int, rng: np.random.Generator, rate: float | None = None, *,
                    replace: bool = False) -> Workload:
    """`n_jobs` jobs picked at random from `wl`, arriving as a Poisson process.

    `rate` (jobs per second) defaults to the trace's mean arrival rate (DRAS §IV-A: "modeling job
    arrival times as Poisson distribution following the average inter-arrival time of the original
    trace"). Jobs are drawn without replacement unless `replace` is true.
    """
    n_jobs = _check_count("n_jobs", n_jobs)
    rng = _check_rng(rng)
    if rate is None:
        rate = mean_arrival_rate(wl)
    elif not rate > 0:
        raise ValueError(f"rate must be a positive number of jobs per second, got {rate!r}")
    picked = _pick(rng, len(wl), n_jobs, replace, repr(wl.name))
    gaps = rng.exponential(1.0 / rate, size=n_jobs - 1)
    submit = np.floor(np.concatenate(([0.0], np.cumsum(gaps))))
    return _retimed(wl, picked, submit, f"{wl.name}-poisson")


def bernoulli_arrivals(wl: Workload, n_steps: int, p: float, rng: np.random.Generator, *,
                       step_seconds: int = 300) -> Workload:
    """Jobs arriving over `n_steps` discrete time steps, one with probability `p` at each step.

    Each arriving job is drawn at random (with replacement) from `wl` (RLSchert §4.1.1: "the arrival
    time of each job is a Bernoulli process ... each new job is randomly sampled"; `job_rate` 0.3-0.95,
    Table 2). `step_seconds` defaults to RLSchert's 5-minute time step (§4.1.1). Steps before the
    first arrival are dropped, so the first job is submitted at time 0.
    """
    n_steps = _check_count("n_steps", n_steps)
    rng = _check_rng(rng)
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must be an arrival probability in (0, 1], got {p!r}")
    step_seconds = _check_count("step_seconds", step_seconds)
    steps = np.flatnonzero(rng.random(n_steps) < p)
    if steps.size == 0:
        raise ValueError(f"no job arrived in {n_steps} steps with p={p}; use more steps or a larger p")
    picked = rng.integers(0, len(wl), size=steps.size)
    return _retimed(wl, picked, steps * step_seconds, f"{wl.name}-bernoulli")


def hour_of_week_rates(wl: Workload) -> np.ndarray:
    """Mean arrivals per second in each of the 168 hours of the week, trace time 0 = hour 0.

    Each rate is the number of submits in that hour of the week divided by the time the trace
    spends in it, so a trace shorter than a week leaves unobserved hours at 0.
    """
    submit = wl.submit.astype(np.int64)
    first, last = int(submit[0]), int(submit[-1])
    if last <= first:
        raise ValueError(f"every job of {wl.name!r} is submitted at the same time: it has no arrival pattern")
    hours = (submit // SECONDS_PER_HOUR) % HOURS_PER_WEEK
    counts = np.bincount(hours, minlength=HOURS_PER_WEEK).astype(np.float64)
    # seconds of each hour-of-week covered by [first, last]
    edges = np.arange(first // SECONDS_PER_HOUR, last // SECONDS_PER_HOUR + 2) * SECONDS_PER_HOUR
    covered = np.diff(np.clip(edges, first, last)).astype(np.float64)
    exposure = np.bincount((edges[:-1] // SECONDS_PER_HOUR) % HOURS_PER_WEEK, weights=covered, minlength=HOURS_PER_WEEK)
    return np.divide(counts, exposure, out=np.zeros(HOURS_PER_WEEK), where=exposure > 0)


def synthetic_jobset(wl: Workload, n_jobs: int, rng: np.random.Generator) -> Workload:
    """`n_jobs` synthetic jobs mimicking `wl`'s weekly arrival pattern and job mix.

    Arrivals are a Poisson process whose rate in each hour of the week is the trace's
    (`hour_of_week_rates`), started at a random hour of the week; each job is a random job of the
    trace (with replacement), so sizes, run times and estimates keep their joint distribution
    (DRAS §IV-A: synthetic jobsets that "mimic Theta workload patterns in terms of hourly and daily
    job arrivals, and distributions of job sizes and runtimes").
    """
    n_jobs = _check_count("n_jobs", n_jobs)
    rng = _check_rng(rng)
    rates = hour_of_week_rates(wl)
    # time-rescaling: unit-rate Poisson points mapped through the inverse cumulative intensity
    phase = int(rng.integers(0, HOURS_PER_WEEK))
    rates = np.roll(rates, -phase)
    per_week = rates.sum() * SECONDS_PER_HOUR
    cumulative = np.concatenate(([0.0], np.cumsum(rates * SECONDS_PER_HOUR)))
    points = np.cumsum(rng.exponential(1.0, size=n_jobs))
    week, rest = np.divmod(points, per_week)
    within = np.interp(rest, cumulative, np.arange(HOURS_PER_WEEK + 1) * float(SECONDS_PER_HOUR))
    submit = np.floor(week * HOURS_PER_WEEK * SECONDS_PER_HOUR + within)
    picked = rng.integers(0, len(wl), size=n_jobs)
    return _retimed(wl, picked, submit, f"{wl.name}-synthetic")


__all__ = [
    "bernoulli_arrivals",
    "hour_of_week_rates",
    "mean_arrival_rate",
    "poisson_retimed",
    "random_starts",
    "sequence",
    "synthetic_jobset",
]


MAX_SEQUENCES = 10_000
"""More evaluation sequences than this is a mistake, not an evaluation (each is a full simulation per policy)."""


def _stderr_warning(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def choose_starts(workload: Workload, length: int, sequences: int, seed: int, starts: list[int] | None = None, *,
                  max_sequences: int = MAX_SEQUENCES, warn: Callable[[str], None] | None = None) -> list[int]:
    """Fixed start indices (0-based positions in the cleaned trace), given or drawn with a seeded RNG.

    Drawn starts are distinct: when the trace holds fewer distinct sequences of `length` jobs than
    asked, every one of them is used and `warn` (default: a `warning:` line on stderr) says so.
    More than `max_sequences` is refused. Given starts are used as given (a repeated one is warned about).
    """
    warn = warn or _stderr_warning
    if starts:
        for s in starts:
            sequence(workload, s, length)  # validates bounds with a clear message
        repeated = sorted({s for s in starts if starts.count(s) > 1})
        if repeated:
            warn(f"start{'s' if len(repeated) > 1 else ''} {', '.join(map(str, repeated))} given more than once: "
                 f"the same sequence is evaluated several times")
        return [int(s) for s in starts]
    if isinstance(sequences, bool) or not isinstance(sequences, (int, np.integer)) or sequences < 1:
        raise ValueError(f"--sequences must be >= 1, got {sequences}")
    if sequences > max_sequences:
        raise ValueError(f"--sequences {sequences} is more than {max_sequences} sequences: each one is a full simulation "
                         f"per policy; ask for fewer")
    sequence(workload, 0, length)  # a length longer than the trace: the clear error
    available = len(workload) - length + 1
    if sequences > available:
        warn(f"{workload.name!r} ({len(workload)} jobs) holds only {available} distinct sequence"
             f"{'s' if available > 1 else ''} of {length} jobs; using {'all ' if available > 1 else ''}{available} "
             f"instead of {sequences}")
        sequences = available
    rng = np.random.default_rng(seed)
    drawn = random_starts(len(workload), length, sequences, rng)
    # redraw repeats among the unused starts (keeps the draws of a seed whenever they were distinct already)
    _, first = np.unique(drawn, return_index=True)
    repeat = np.ones(len(drawn), dtype=bool)
    repeat[first] = False
    if repeat.any():
        unused = np.setdiff1d(np.arange(available), drawn)
        drawn[repeat] = rng.choice(unused, size=int(repeat.sum()), replace=False)
    return [int(s) for s in drawn]
