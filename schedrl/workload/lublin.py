"""The Lublin–Feitelson workload model of rigid parallel jobs, as a seeded generator.

U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", JPDC 63(11):1105–1122, 2003. The model has three parts:

* job size: serial with probability `serial_prob`; otherwise log2(size) is drawn from a two-stage
  uniform on [u_low, u_med] (probability `u_prob`) or [u_med, u_hi], u_hi = log2(machine size),
  and rounded to an integer for the `pow2_prob` share of jobs (power-of-two sizes);
* run time: log(run time) is hyper-gamma, i.e. gamma(a1, b1) with probability p and gamma(a2, b2)
  otherwise, where p = pa * size + pb (clipped to [0, 1]) ties bigger jobs to longer runs;
* arrivals: log(inter-arrival) in the rush hours is gamma(aarr * arar, barr); the day is split into
  48 half-hour buckets whose weights follow a gamma(anum, bnum) density, and time is warped so that
  each bucket receives arrivals in proportion to its weight (the daily cycle).

Defaults are the paper's parameters for the whole sample (no batch/interactive split), which is
the set RLScheduler's Lublin-1 trace was generated with: its serial share (24.9%), mean size (22.1),
mean run time (4,863 s) and the absence of short runs among 256-node jobs all match this set on
256 nodes (with u_med = 8 - 2.5), and not the batch set (29% serial). Its arrivals match too;
see `LublinParams.interarrival_scale` for its mean inter-arrival time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from schedrl.workload.fields import FIELD_NAMES
from schedrl.workload.header import parse_header
from schedrl.workload.workload import Workload

BUCKETS_PER_DAY = 48
"""The daily cycle is resolved in half-hour buckets (Lublin & Feitelson 2003, arrival model)."""
SECONDS_PER_BUCKET = 86400 // BUCKETS_PER_DAY


@dataclass(frozen=True)
class LublinParams:
    """Parameters of the Lublin–Feitelson model; the defaults are the paper's whole-sample fit."""

    # Lublin & Feitelson 2003, job-size parameters, whole-sample ("all jobs") set
    serial_prob: float = 0.244
    """Probability that a job is serial (one node)."""
    pow2_prob: float = 0.576
    """Probability that a job is parallel with a power-of-two size."""
    u_low: float = 0.8
    """log2 of the smallest parallel size (0.8 gives 2 nodes after rounding)."""
    u_med_below_hi: float = 2.5
    """u_med = log2(nodes) - this; the paper's 128-node fit has u_med = 4.5 = 7 - 2.5."""
    u_prob: float = 0.86
    """Probability of the lower stage [u_low, u_med] of the two-stage uniform."""
    # Lublin & Feitelson 2003, run-time parameters (hyper-gamma of log run time), whole-sample set
    a1: float = 4.2
    """Shape of the first (short) gamma of log run time."""
    b1: float = 0.94
    """Scale of the first (short) gamma of log run time."""
    a2: float = 312.0
    """Shape of the second (long) gamma of log run time."""
    b2: float = 0.03
    """Scale of the second (long) gamma of log run time."""
    pa: float = -0.0054
    """Slope of p (share of the short gamma) in the job size, per node."""
    pb: float = 0.78
    """Intercept of p (share of the short gamma)."""
    max_log_runtime: float = 12.0
    """Draws of log run time above this are redrawn (e^12 s ≈ 1.9 days, the model's cap)."""
    # Lublin & Feitelson 2003, arrival parameters, whole-sample set
    aarr: float = 10.2303
    """Shape of the gamma of log inter-arrival time in the rush hours."""
    barr: float = 0.4871
    """Scale of the gamma of log inter-arrival time in the rush hours."""
    arar: float = 1.0225
    """Arrive-rush-to-all ratio: multiplies `aarr` so the gamma covers all hours of the day."""
    anum: float = 8.1737
    """Shape of the gamma density giving the daily-cycle weight of each half-hour bucket."""
    bnum: float = 3.9631
    """Scale (in buckets) of the gamma density giving the daily-cycle weights."""
    cycle_start_bucket: int = 11
    """The gamma density is evaluated on buckets [this, this + 48) and wrapped onto the day."""
    max_log_interarrival: float = 13.0
    """Draws of log inter-arrival above this are redrawn (e^13 s ≈ 5 days, the model's cap)."""
    start_hour: int = 0
    """Hour of the day at which the generated trace starts (time 0)."""
    interarrival_scale: float = 1.0
    """Multiplies every inter-arrival time: 1.0 is the paper's model; 0.5 offers twice the load.

    Lublin-1 needs no tuning: its median inter-arrival (116 s) is the model's (116 ± 3 s over
    10,000-job samples). Its mean (771 s, RLScheduler Table II) is low for the model (910 ± 75 s;
    the mean of heavy-tailed gaps is noisy), so its offered load (1.06) is above the model's typical
    0.87 ± 0.08 on 256 nodes; 0.85 reproduces that mean and load at the cost of the median.
    """

    def __post_init__(self) -> None:
        for name in ("serial_prob", "pow2_prob", "u_prob"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"LublinParams.{name} must be a probability in [0, 1], got {value}")
        if self.serial_prob + self.pow2_prob > 1.0:
            raise ValueError(f"LublinParams: serial_prob + pow2_prob = {self.serial_prob + self.pow2_prob} exceeds 1")
        for name in ("a1", "b1", "a2", "b2", "aarr", "barr", "arar", "anum", "bnum", "interarrival_scale",
                     "max_log_runtime", "max_log_interarrival"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"LublinParams.{name} must be positive, got {value}")
        if not 0 <= self.start_hour < 24:
            raise ValueError(f"LublinParams.start_hour must be in [0, 24), got {self.start_hour}")

    def describe(self) -> str:
        """`name=value` for every field, on one line (recorded in generated trace headers)."""
        return " ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))


# Lublin & Feitelson 2003, batch-job parameter set (the paper fits batch and interactive jobs apart);
# u_med_below_hi = 2 because the paper's 128-node fit has u_med = 5 = 7 - 2
LUBLIN_BATCH = LublinParams(
    serial_prob=0.2927, pow2_prob=0.6686, u_low=1.2, u_med_below_hi=2.0, u_prob=0.875,
    a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
    aarr=6.0415, barr=0.8531, arar=1.0519, anum=6.1271, bnum=5.2740,
)
"""The batch-job fit; RLScheduler's Lublin traces were not made with it (see the module docstring)."""


def _truncated_gamma(rng: np.random.Generator, shape, scale, cap: float, size: int) -> np.ndarray:
    """Gamma draws, redrawing each value above `cap` (the model's rejection of extreme values)."""
    shape = np.broadcast_to(np.asarray(shape, dtype=np.float64), (size,))
    scale = np.broadcast_to(np.asarray(scale, dtype=np.float64), (size,))
    out = rng.gamma(shape, scale)
    bad = np.flatnonzero(out > cap)
    while bad.size:
        out[bad] = rng.gamma(shape[bad], scale[bad])
        bad = bad[out[bad] > cap]
    return out


def _job_sizes(rng: np.random.Generator, n: int, nodes: int, params: LublinParams) -> np.ndarray:
    u_hi = math.log2(nodes)
    u_med = u_hi - params.u_med_below_hi
    if not params.u_low <= u_med <= u_hi:
        smallest = math.ceil(2 ** (params.u_low + params.u_med_below_hi))
        raise ValueError(
            f"nodes={nodes} is too small for u_low={params.u_low} and u_med_below_hi={params.u_med_below_hi} "
            f"(needs nodes >= {smallest}); pass LublinParams with a smaller u_med_below_hi or u_low")
    kind = rng.random(n)
    lower = rng.random(n) <= params.u_prob
    lo = np.where(lower, params.u_low, u_med)
    hi = np.where(lower, u_med, u_hi)
    log_size = lo + rng.random(n) * (hi - lo)
    pow2 = (kind > params.serial_prob) & (kind <= params.serial_prob + params.pow2_prob)
    # a rounded exponent may not pass the machine when `nodes` is not a power of two
    log_size = np.where(pow2, np.minimum(np.floor(log_size + 0.5), math.floor(u_hi)), log_size)
    sizes = np.floor(2.0 ** log_size + 0.5).astype(np.int64)
    return np.where(kind <= params.serial_prob, 1, np.minimum(sizes, nodes))


def _run_times(rng: np.random.Generator, sizes: np.ndarray, params: LublinParams) -> np.ndarray:
    # p is linear in the node count itself (not its log2): with the whole-sample pa, pb every job of
    # 145 nodes or more draws from the long gamma, as in Lublin-1 where no 256-node job is short
    p_short = np.clip(params.pa * sizes + params.pb, 0.0, 1.0)
    short = rng.random(len(sizes)) <= p_short
    log_run = _truncated_gamma(rng, np.where(short, params.a1, params.a2), np.where(short, params.b1, params.b2),
                               params.max_log_runtime, len(sizes))
    # log run time is >= 0, so every job runs at least one second
    return np.floor(np.exp(log_run)).astype(np.int64)


def daily_weights(params: LublinParams) -> np.ndarray:
    """Relative arrival intensity of each half-hour bucket of the day (mean 1), bucket 0 at midnight."""
    # probability mass of gamma(anum, bnum) on [i - 0.5, i + 0.5] by composite Simpson's rule
    steps = 64
    a, b = params.anum, params.bnum
    log_norm = math.lgamma(a) + a * math.log(b)
    weights = np.empty(BUCKETS_PER_DAY)
    for i in range(params.cycle_start_bucket, params.cycle_start_bucket + BUCKETS_PER_DAY):
        x = np.linspace(i - 0.5, i + 0.5, steps + 1)
        x = np.maximum(x, 1e-12)
        pdf = np.exp((a - 1) * np.log(x) - x / b - log_norm)
        simpson = (pdf[0] + pdf[-1] + 4 * pdf[1:-1:2].sum() + 2 * pdf[2:-1:2].sum()) / (3 * steps)
        weights[(i - 1) % BUCKETS_PER_DAY] = simpson
    return weights / weights.mean()


def _arrival_times(rng: np.random.Generator, n: int, params: LublinParams) -> np.ndarray:
    """Submit times: rush-hour gaps spent as 'points', each bucket costing its daily weight."""
    log_gap = _truncated_gamma(rng, params.aarr * params.arar, params.barr, params.max_log_interarrival, n)
    points = np.cumsum(np.exp(log_gap) * params.interarrival_scale / SECONDS_PER_BUCKET)
    first = params.start_hour * BUCKETS_PER_DAY // 24
    weights = np.roll(daily_weights(params), -first)
    cost = np.concatenate(([0.0], np.cumsum(weights)))  # points needed to reach each bucket edge
    day, rest = np.divmod(points, cost[-1])
    within = np.interp(rest, cost, np.arange(BUCKETS_PER_DAY + 1) * float(SECONDS_PER_BUCKET))
    return np.floor(day * 86400.0 + within).astype(np.int64)


def generate_lublin(n_jobs: int, nodes: int = 256, seed: int = 0, *, params: LublinParams = LublinParams()) -> Workload:
    """A synthetic trace of `n_jobs` rigid jobs on a `nodes`-node machine, deterministic for `seed`.

    Requested processors equal allocated ones and the requested time equals the run time (a perfect
    estimate, as in Lublin-1); status is 1 (completed) and the fields the model does not produce
    (wait, CPU and memory use, user, group, application, queue, partition, dependencies) are -1.
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer, got {n_jobs!r}")
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) or nodes < 2:
        raise ValueError(f"nodes must be an integer >= 2, got {nodes!r}")
    if not isinstance(params, LublinParams):
        raise TypeError(f"params must be a LublinParams, got {type(params).__name__}")
    n_jobs, nodes = int(n_jobs), int(nodes)
    rng = np.random.default_rng(seed)
    sizes = _job_sizes(rng, n_jobs, nodes, params)
    runs = _run_times(rng, sizes, params)
    submits = _arrival_times(rng, n_jobs, params)
    columns = {name: np.full(n_jobs, -1, dtype=np.int64) for name in FIELD_NAMES}
    columns.update(
        job_id=np.arange(1, n_jobs + 1, dtype=np.int64),
        submit=submits,
        run=runs,
        procs_alloc=sizes,
        procs_req=sizes,
        time_req=runs,
        status=np.ones(n_jobs, dtype=np.int64),
        cpu_avg=np.full(n_jobs, -1.0),
        mem_used=np.full(n_jobs, -1.0),
        mem_req=np.full(n_jobs, -1.0),
    )
    header = parse_header([
        "; Version: 2.2",
        "; Computer: synthetic (Lublin & Feitelson 2003 workload model)",
        "; Acknowledge: model by Uri Lublin and Dror Feitelson, Hebrew University",
        f"; MaxJobs: {n_jobs}",
        f"; MaxRecords: {n_jobs}",
        f"; MaxNodes: {nodes}",
        f"; MaxProcs: {nodes}",
        f"; MaxRuntime: {math.floor(math.exp(params.max_log_runtime))}",
        f"; Note: generated by schedrl.workload.lublin.generate_lublin(n_jobs={n_jobs}, nodes={nodes}, seed={seed})",
        f"; Note: LublinParams {params.describe()}",
    ])
    return Workload(columns, max_procs=nodes, max_nodes=nodes, name=f"lublin-{nodes}-seed{seed}", header=header)


__all__ = ["BUCKETS_PER_DAY", "LUBLIN_BATCH", "LublinParams", "daily_weights", "generate_lublin"]
