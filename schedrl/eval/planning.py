"""The online planning baseline of the inspector's decision (issue 46, lever 5): rollouts on what is known now.

At every scheduling point the base rule proposes a job; `PlanningInspector` accepts or rejects it as the inspector
does (`Simulator.defer`), deciding by rollouts in a *model* of the future built only from what an online scheduler
knows at that moment, never from the simulation's true future:

- the queued jobs (at most `max_queue`: the base's first `max_queue` by its own key, and always the proposal) and the
  running jobs, with their *requested* times (`est`: the estimate the scheduler holds) as their run times: a running
  job ends at its start plus its estimate, as far as the planner knows (never before now);
- future arrivals: none (`arrivals="none"`), or (`"history"`, the default) `samples` replays of a block of `horizon`
  consecutive past arrivals of this same simulation (the last `history` jobs submitted so far, their requests,
  estimates and inter-arrival gaps), started at a random point of that block and shifted to begin after now.

In each model the rest of the known (and sampled) jobs is simulated twice (or `depth` + 1 times): accept the
proposal, or reject it 1..`depth` times in a row, each continued by the base rule alone (compiled, `keys.run_rule`);
the option with the lowest total of the metric over the jobs not yet started (summed over the samples, with the same
samples for every option) is taken, ties accept. The plan is made afresh at every decision.

Without arrivals a rejection can only pay where the base's next proposal differs once a running job has ended
(SJF, F1 and the other static keys propose the same job again): the rollouts need a model of what will arrive.

Used wherever policies are named: `plan:BASE[:key=value...]` (`schedrl compare --policies plan:f1:samples=4`;
`parse_spec`). Decision latency: `benchmarks/bench_planning.py`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from schedrl.heuristics import keys
from schedrl.jit import njit
from schedrl.sim.engine import (
    DECIDE_PICK, FINISHED, advance, apply_defer, apply_pick, has_event,
)
from schedrl.sim.queues import heap_push, queue_insert
from schedrl.sim.simulator import Simulator
from schedrl.sim.state import (
    DONE, HELD, LAST_RESERVED, NEXT_ARRIVAL, NOW, PH_PICK, PHASE, QUEUED, RAND_POS, RESERVED, RUNNING, SHADOW_JOB,
    SimArrays, as_ref, config_codes,
)

PLAN_PREFIX = "plan:"
"""A planning policy by name: `plan:BASE[:key=value...]`."""
ARRIVALS = ("history", "none", "oracle")
"""`oracle` (a diagnostic, not an online scheduler: it reads the simulation's true future): the next `horizon` true
arrivals with their true run times."""
METRICS = ("bsld", "wait", "turnaround", "slowdown")
"""Per-job means the rollouts can total (every job of a model has a start and an end)."""
_METRIC_CODE = {m: i for i, m in enumerate(METRICS)}
RUNTIMES = ("ratio", "requested", "oracle")
"""`oracle` (a diagnostic): the known jobs' true run times."""
DEFAULTS: dict[str, Any] = {"depth": 1, "samples": 4, "horizon": 64, "history": 256, "max_queue": 256,
                            "runtime": "ratio", "count": "known",
                            "arrivals": "history", "seed": 0, "guard": 24 * 3600.0, "metric": "bsld"}
"""`PlanningInspector`'s defaults (the `plan:` spec's keys)."""
BOUNDS: dict[str, tuple[int, int]] = {"depth": (1, 16), "samples": (1, 1024), "horizon": (1, 100_000),
                                      "history": (1, 1_000_000), "max_queue": (1, 100_000), "seed": (0, 2 ** 32 - 1)}
"""The integer keys' ranges (each decision runs depth x samples rollouts of up to horizon jobs: a search past these is
hours per sequence)."""


@njit
def _keys_of(kind, coef, s, jobs, now, procs):
    out = np.empty(jobs.shape[0])
    for i in range(jobs.shape[0]):
        j = jobs[i]
        out[i] = keys.linear_key(coef, s, j, now, procs) if kind == keys.LINEAR else keys.priority_key(
            kind, s, j, now, procs)
    return out


@njit
def _place(s, now, running, start, first_future, rand_pos, list_discipline):
    """Put the model's known jobs in their places: `running[i]` True: running since `start[i]` for its modelled
    run time `s.run[i]` (a job already past it runs on for that share of what its estimate leaves, at least 1 s),
    else queued; jobs from `first_future` on arrive later."""
    for i in range(first_future):
        if running[i]:
            s.status[i] = RUNNING
            s.start[i] = start[i]
            end = start[i] + s.run[i]
            if end <= now:  # past its modelled end: that share of what its estimate leaves
                end = now + max(s.run[i] / s.est[i] * (start[i] + s.est[i] - now), 1.0)
            s.end[i] = end
            s.run[i] = end - start[i]
            s.limit[i] = s.run[i]
            s.free[:] -= s.req[i]
            heap_push(s, end, i)
        else:
            s.status[i] = QUEUED
            queue_insert(s, i)
    s.iv[NEXT_ARRIVAL] = first_future
    s.iv[HELD] = -1
    s.iv[RESERVED] = -1
    s.iv[LAST_RESERVED] = -1
    s.iv[SHADOW_JOB] = -1
    s.iv[RAND_POS] = rand_pos
    if list_discipline:
        s.iv[PHASE] = PH_PICK
    s.fv[NOW] = now


@njit
def _rollout(s, j, m, kind, coef, procs, rand, metric, counted):
    """Accept `j` (m = 0) or reject it and the base's next m - 1 proposals (where an event is left), then the base to
    the end; the total of `metric` over the `counted` jobs (inf when the model is stuck)."""
    if m == 0:
        apply_pick(s, j)
    else:
        apply_defer(s)
        for _ in range(m - 1):
            if advance(s) != DECIDE_PICK:
                break
            p = keys.choose_rule(kind, coef, s, procs, rand)
            if not has_event(s):
                apply_pick(s, p)
                break
            apply_defer(s)
    if keys.run_rule(s, kind, coef, procs, rand) != FINISHED:
        return np.inf
    total = 0.0
    for i in range(counted.shape[0]):
        if not counted[i] or s.status[i] != DONE:
            continue
        wait = s.start[i] - s.submit[i]
        run = s.end[i] - s.start[i]
        if metric == 0:
            total += max((wait + run) / max(run, 10.0), 1.0)
        elif metric == 1:
            total += wait
        elif metric == 2:
            total += wait + run
        else:
            total += (wait + run) / max(run, 1.0)
    return total


def _copy(arrays: SimArrays) -> SimArrays:
    return SimArrays(*(a.copy() for a in arrays))


def parse_spec(spec: str) -> dict[str, Any]:
    """`plan:BASE[:key=value...]` -> keyword arguments of `PlanningInspector` (ValueError naming the bad part). The
    options are separated by colons (commas separate the policies of `--policies`); the base may be `tuned:FILE`."""
    if not spec.startswith(PLAN_PREFIX):
        raise ValueError(f"a planning policy is named plan:BASE[:key=value...], got {spec!r}")
    parts = spec[len(PLAN_PREFIX):].split(":")
    first_option = next((i for i, p in enumerate(parts) if "=" in p), len(parts))
    base = ":".join(parts[:first_option]).strip()
    if not base:
        raise ValueError(f"{spec!r}: name the base rule after plan: (e.g. plan:f1)")
    out: dict[str, Any] = {"base": base}
    for part in parts[first_option:]:
        key, eq, value = part.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or key not in DEFAULTS:
            raise ValueError(f"{spec!r}: {part!r} is not key=value with a key of {', '.join(DEFAULTS)}")
        if key in ("arrivals", "metric", "runtime", "count"):
            out[key] = value.strip()
        elif key == "guard":
            from schedrl.duration import parse_duration_or_off

            out[key] = parse_duration_or_off(value.strip(), "guard")
        else:
            low, high = BOUNDS[key]
            try:
                out[key] = int(value)
            except ValueError:
                raise ValueError(f"{spec!r}: {key} must be an integer, got {value!r}") from None
            if not low <= out[key] <= high:
                raise ValueError(f"{spec!r}: {key} must be between {low:,} and {high:,}, got {out[key]:,}")
    return out


class PlanningInspector:
    """The inspector's decision by online rollouts on a model of what is known now (see the module).

    A simulator policy (`defer`, `pick`). Counters of the current simulation: `inspections` (points where a rejection
    was allowed), `changed` (rejections), `rollouts`, `guarded` (points the starvation guard accepted without
    planning), `latencies` (seconds of each planned decision)."""

    decision = "inspector"

    def __init__(self, base: str | Any = "f1", metric: str = DEFAULTS["metric"], depth: int = DEFAULTS["depth"],
                 samples: int = DEFAULTS["samples"], horizon: int = DEFAULTS["horizon"],
                 history: int = DEFAULTS["history"], max_queue: int = DEFAULTS["max_queue"],
                 arrivals: str = DEFAULTS["arrivals"], seed: int = DEFAULTS["seed"],
                 guard: float = DEFAULTS["guard"], runtime: str = DEFAULTS["runtime"],
                 count: str = DEFAULTS["count"], name: str | None = None):
        from schedrl.heuristics.hindsight import make_base

        if depth < 1:
            raise ValueError(f"planning depth must be >= 1 (rejections in a row tried at a point), got {depth}")
        if metric not in _METRIC_CODE:
            raise ValueError(f"the planning baseline totals a per-job metric ({', '.join(METRICS)}), not {metric!r}")
        if runtime not in RUNTIMES:
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
        if count not in ("all", "known"):
            raise ValueError(f"count must be all (the known and the sampled jobs) or known, got {count!r}")
        if arrivals not in ARRIVALS:
            raise ValueError(f"arrivals must be one of {', '.join(ARRIVALS)}, got {arrivals!r}")
        for key, value, low in (("samples", samples, 1), ("horizon", horizon, 1), ("history", history, 2),
                                ("max_queue", max_queue, 1)):
            if value < low:
                raise ValueError(f"{key} must be >= {low}, got {value}")
        if not guard >= 0:
            raise ValueError(f"guard must be >= 0 seconds (0: off), got {guard}")
        self.base_name = base if isinstance(base, str) else getattr(base, "name", type(base).__name__)
        self.base = make_base(base) if isinstance(base, str) else base
        self.metric, self.depth, self.samples, self.horizon = metric, int(depth), int(samples), int(horizon)
        self.history, self.max_queue, self.arrivals, self.seed = int(history), int(max_queue), arrivals, int(seed)
        self.guard, self.runtime, self.count = float(guard), runtime, count
        self.name = name or f"PLAN({str(self.base_name).upper()})"
        self._for: Simulator | None = None
        self._proposal = -1
        self.totals = {"inspections": 0, "rejections": 0, "guarded": 0}
        """Counts over every simulation this object has run (the per-simulation counters restart)."""

    def _reset(self, sim: Simulator) -> None:
        from schedrl.heuristics.hindsight import _compiled

        self._for = sim
        self._fast = _compiled(self.base, sim)
        self._rng = np.random.default_rng(self.seed)
        self.inspections = self.changed = self.rollouts = self.guarded = 0
        self.latencies: list[float] = []
        self._cfg = config_codes(sim.config)

    # ------------------------------------------------------------------ the model
    def _ratio(self, sim: Simulator) -> float:
        """The modelled run time's share of the estimate: 1 (`runtime="requested"`), or the mean ratio of the true
        run time to the estimate over the jobs of the last `history` arrivals that have completed (1 before any)."""
        s = sim.state
        if self.runtime != "ratio":
            return 1.0
        arrived = int(s.iv[NEXT_ARRIVAL])
        past = np.arange(max(0, arrived - self.history), arrived)
        done = past[s.status[past] == DONE]
        if not len(done):
            return 1.0
        return float(np.clip(np.mean((s.end[done] - s.start[done]) / s.est[done]), 1e-3, 1.0))

    def _future(self, sim: Simulator, ratio: float) -> list[tuple[np.ndarray, ...]]:
        """`samples` replays of past arrivals: (submit, run, est, req, past index) each; none without arrivals. A
        replayed job that has completed runs its true run time (known now), another `ratio` times its estimate."""
        s = sim.state
        arrived = int(s.iv[NEXT_ARRIVAL])
        if self.arrivals == "oracle":
            jobs = np.arange(arrived, min(arrived + self.horizon, len(s.submit)))
            return [(s.submit[jobs], s.run[jobs], s.est[jobs], s.req[jobs], jobs)]
        if self.arrivals == "none" or arrived < 2:
            return [(np.zeros(0), np.zeros(0), np.zeros(0), np.zeros((0, s.req.shape[1])), np.zeros(0, np.int64))]
        lo = max(0, arrived - self.history)
        past = np.arange(lo, arrived)
        gaps = np.diff(s.submit[past])
        k = len(gaps)
        out = []
        for _ in range(self.samples):
            b = int(self._rng.integers(k))
            idx = (b + np.arange(self.horizon)) % k  # a block of consecutive gaps (cycled where the past is short)
            t = sim.now + np.cumsum(gaps[idx]) * 1.0
            t = np.maximum(t, np.nextafter(sim.now, np.inf))
            jobs = past[1:][idx]
            est = s.est[jobs]
            done = (s.status[jobs] == DONE) & (self.runtime != "requested")
            run = np.where(done, np.maximum(s.end[jobs] - s.start[jobs], 0.0), ratio * est)
            out.append((t, run, est, s.req[jobs], jobs))
        return out

    def _model(self, sim: Simulator, proposal: int, future, ratio: float) -> tuple[SimArrays, int, np.ndarray,
                                                                                  np.ndarray]:
        """The model's state (a fresh `SimArrays`), the proposal's index in it, the jobs whose metric counts, and the
        processor counts the base's key reads."""
        from schedrl.sim.state import new_state

        s = sim.state
        kind, coef, procs, rand = self._fast
        running = sim.running()
        queue = sim.queue.copy()
        if len(queue) > self.max_queue:  # the base's first max_queue by its key (and the proposal)
            k = _keys_of(kind, coef, sim.state_ref, queue, sim.now, procs)
            keep = queue[np.sort(np.argsort(k, kind="stable")[: self.max_queue])]
            queue = keep if proposal in keep else np.sort(np.append(keep[:-1], proposal))
        known = np.concatenate([running, queue])
        known = known[np.lexsort((known, s.submit[known]))]
        f_submit, f_run, f_est, f_req, f_jobs = future
        n_known = len(known)
        submit = np.concatenate([s.submit[known], f_submit])
        est = np.concatenate([s.est[known], f_est])
        run = np.concatenate([s.run[known] if self.runtime == "oracle" else ratio * s.est[known], f_run])
        req = np.concatenate([s.req[known], f_req]) if len(f_submit) else s.req[known]
        # limit = est: no walltime kills in the model (the modelled run time never exceeds the estimate)
        state = new_state(submit, run, est, est, req, s.cap, sim.config)
        state.cfg[:] = self._cfg
        is_running = np.zeros(n_known, np.bool_)
        is_running[: n_known] = s.status[known] == RUNNING
        _place(as_ref(state), sim.now, is_running, s.start[known], n_known, int(s.iv[RAND_POS]),
               sim.config.discipline == "list")
        counted = np.ones(len(submit), np.bool_)
        counted[:n_known] = ~is_running
        if self.count == "known":
            counted[n_known:] = False
        sub_procs = np.concatenate([procs[known], procs[f_jobs]])
        j = int(np.flatnonzero(known == proposal)[0])
        return state, j, counted, sub_procs

    # ------------------------------------------------------------------ the policy
    def option_values(self, sim: Simulator, proposal: int) -> np.ndarray:
        """The total metric of accepting (entry 0) and of rejecting 1..depth times (entries 1..depth), summed over
        the sampled models (inf where an option cannot be carried out)."""
        if self._for is not sim:
            self._reset(sim)
        kind, coef, _, rand = self._fast
        code = _METRIC_CODE[self.metric]
        totals = np.zeros(self.depth + 1)
        ratio = self._ratio(sim)
        for future in self._future(sim, ratio):
            state, j, counted, procs = self._model(sim, proposal, future, ratio)
            ref = as_ref(state)
            can_reject = bool(has_event(ref))
            for m in range(self.depth + 1):
                if m > 0 and not can_reject:
                    totals[m] = np.inf
                    continue
                fork = _copy(state)
                v = _rollout(as_ref(fork), j, m, kind, coef, procs, rand, code, counted)
                self.rollouts += 1
                totals[m] += v
        return totals

    def defer(self, sim: Simulator) -> bool:
        """Reject (True) where a rejection, then the base, ends the model better than accepting, then the base."""
        if self._for is not sim:
            self._reset(sim)
        j = self._proposal = int(self.base.pick(sim))
        if not sim.has_event:
            return False
        if self.guard > 0 and sim.now - sim.state.submit[j] >= self.guard:
            self.guarded += 1
            self.totals["guarded"] += 1
            return False
        self.inspections += 1
        self.totals["inspections"] += 1
        t0 = time.perf_counter()
        totals = self.option_values(sim, j)
        self.latencies.append(time.perf_counter() - t0)
        best = int(np.argmin(totals))
        if not totals[best] < totals[0] - 1e-9 * max(1.0, abs(totals[0])) or not math.isfinite(totals[best]):
            return False
        self.changed += 1
        self.totals["rejections"] += 1
        self._proposal = -1
        return True

    def pick(self, sim: Simulator) -> int:
        """The base's proposal (the one `defer` accepted)."""
        return self._proposal if self._proposal >= 0 and self._for is sim else int(self.base.pick(sim))


def from_spec(spec: str) -> PlanningInspector:
    """A `PlanningInspector` from `plan:BASE[:key=value...]` (named as the spec, so tables show its options)."""
    return PlanningInspector(name=spec.strip(), **parse_spec(spec))


__all__ = ["ARRIVALS", "DEFAULTS", "PLAN_PREFIX", "PlanningInspector", "from_spec", "parse_spec"]
