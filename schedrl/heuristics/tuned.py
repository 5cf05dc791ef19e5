"""A tuned rule: a priority key linear in the jobs' log features, fitted to one trace by CMA-ES.

The key is `weights · (terms / scales)` over `keys.LINEAR_TERMS` (logs of the requested time r, the processors
n, the submit time s and the wait w, and F1's product log10(r)·n); lower runs first, as for every key. F1 is the
rule (1, 870, 0, ...) in raw terms and SJF the rule (0, 0, 1, 0, ...), so the family holds both. `fit` searches
the weights with CMA-ES (the `cmaes` package) on random windows of a trace's training zone, scoring every candidate
with the compiled simulator, and keeps the rule that schedules the validation sequences best; the evaluation zone is
never read.
A `TunedRule` is a policy like `Heuristic` (`pick`, `run`), saved to and loaded from a JSON file
(`schedrl tuned fit`, `--policies tuned:FILE`). docs/experiments/tuned-rule.md has the measurements.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from cmaes import CMA
from cmaes import __version__ as cmaes_version

from schedrl.heuristics import keys
from schedrl.heuristics.heuristic import get_heuristic
from schedrl.metrics import check_metric, lower_is_better, summarize
from schedrl.sim.config import SimConfig
from schedrl.sim.engine import STUCK
from schedrl.sim.simulator import Schedule, Simulator
from schedrl.workload.errors import TraceError
from schedrl.workload.sampling import sequence
from schedrl.workload.workload import Workload

FORMAT = "schedrl tuned rule"
VERSION = 1

# raw coefficients of the named heuristics the family holds exactly (SJF: log10 keeps est's order)
STARTS: dict[str, tuple[float, ...]] = {
    # Carastan-Santos & de Camargo 2017 (RLScheduler Table V): log10(r) * n + 870 * log10(s)
    "f1": (1.0, 870.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "sjf": (0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "ljf": (0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "smallest": (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0),
    "largest": (0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0),
}
"""Rules a fit may start from, as raw coefficients of `keys.LINEAR_TERMS`."""


class RuleError(TraceError):
    """A tuned-rule file that cannot be used; the message names the file. (A `TraceError`, so every command prints it
    as one `error:` line, wherever it is raised.)"""


def normalisation(workload: Workload, end: int) -> np.ndarray:
    """Scale of each of `keys.LINEAR_TERMS` over jobs [0, end): the power of two nearest its root mean square, with
    w the wait the trace recorded (the requested time where it recorded none). Powers of two keep a rule's raw
    coefficients exact (`weights / scales`), so F1's weights give F1's keys to the bit."""
    jobs = workload[:end]
    est = np.asarray(jobs.time_req, dtype=np.float64)
    submit = np.asarray(jobs.submit, dtype=np.float64)
    recorded = np.asarray(jobs.wait, dtype=np.float64)
    wait = np.where(recorded >= 0, recorded, est)
    terms = keys.linear_term_table(est, np.asarray(jobs.procs_req, dtype=np.float64), submit, submit + wait)
    rms = np.sqrt(np.mean(terms ** 2, axis=0))
    return np.exp2(np.round(np.log2(np.where(rms > 0, rms, 1.0))))


TERM_BOUND = 1e3
"""A bound on every term of the key (logs of times, processors and waits: about 30 for the largest a trace holds);
a rule whose weights could push the key past the largest float at this bound is refused when it is made, never
left to overflow into a rule that ranks like all-zero weights."""

@dataclass
class TunedRule:
    """A linear priority rule over `keys.LINEAR_TERMS` and what it was fitted on; a policy like `Heuristic`."""

    weights: np.ndarray
    """One weight per term, on the normalised terms (term / scale)."""
    scales: np.ndarray
    """The feature normalisation: each term's scale (powers of two, from `normalisation`)."""
    trace: dict
    """The trace it was fitted on: name, sha256 (of the uncompressed file; None for an in-memory workload),
    cleaning, jobs."""
    record: dict = field(default_factory=dict)
    """How it was fitted: backfill, metric, budget, seed, split, validation, score history (`fit`)."""
    source: str | None = None
    """The file it was read from (named in errors)."""
    name: str = "TUNED"
    """Column label in comparison tables."""
    strict: bool = True
    """Refuse a trace other than the one it was fitted on (its normalisation is that trace's). The leaderboard's
    transfer cells set it False and say where the rule runs outside its fit."""

    def __post_init__(self) -> None:
        self.weights = np.asarray(self.weights, dtype=np.float64)
        self.scales = np.asarray(self.scales, dtype=np.float64)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            self._coef = np.ascontiguousarray(self.weights / self.scales)
            reach = float(np.abs(self._coef).sum()) * TERM_BOUND
        if not np.isfinite(reach):
            big = int(np.argmax(np.abs(self._coef)))
            raise ValueError(f"weights overflow the priority key (weight {self.weights[big]:g} over scale "
                             f"{self.scales[big]:g} on term {big}; |weight / scale| summed, times {TERM_BOUND:g}, must "
                             "be finite): the rule's order depends only on the weights' ratios, so scale them down")
        self._rand = np.zeros(1)  # a priority key draws no random numbers
        self._checked: Workload | None = None
        self._procs, self._procs_for = np.zeros(0), None

    @classmethod
    def from_coefficients(cls, coefficients, scales, trace: dict, **kw) -> "TunedRule":
        """The rule whose raw coefficients (per unnormalised term) are `coefficients`."""
        return cls(np.asarray(coefficients, dtype=np.float64) * scales, scales, trace, **kw)

    @property
    def coefficients(self) -> np.ndarray:
        """Raw coefficients, one per unnormalised term: what the compiled key multiplies."""
        return self._coef

    def _check(self, workload: Workload) -> None:
        if self._checked is workload:
            return
        mine, theirs = self.trace.get("sha256"), workload.sha256
        if mine and theirs and mine != theirs and self.strict:
            raise RuleError(self.source or "tuned rule", f"fitted on trace {self.trace.get('name')} (sha256 "
                            f"{mine[:12]}), not {workload.name} (sha256 {theirs[:12]}): its feature normalisation is "
                            f"that trace's", hint=f"fit one with `schedrl tuned fit --trace {workload.name}`")
        self._checked = workload

    def pick(self, sim: Simulator) -> int:
        """The job this rule runs next."""
        self._check(sim.workload)
        if self._procs_for is not sim:
            self._procs, self._procs_for = np.asarray(sim.workload.procs_req, dtype=np.float64), sim
        return int(keys.choose_rule(keys.LINEAR, self._coef, sim.state_ref, self._procs, self._rand))

    def backfill(self, sim: Simulator) -> int:
        """Backfill candidates are taken first-fit (queue order)."""
        return int(sim.candidates[0])

    def run(self, sim: Simulator) -> Schedule:
        """Schedule the whole workload in compiled code; same result as `sim.run(self)`."""
        self._check(sim.workload)
        return run_coefficients(sim, self._coef)

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "features": list(keys.LINEAR_TERMS),
                "weights": [float(w) for w in self.weights],
                "normalisation": {"scales": [float(s) for s in self.scales],
                                  "method": "each term / the power of two nearest its RMS over the training zone"},
                "trace": dict(self.trace), **self.record}

    def save(self, path: str | Path) -> None:
        from schedrl.outputs import atomic_write

        atomic_write(path, json.dumps(self.to_dict(), indent=1) + "\n")


def run_coefficients(sim: Simulator, coef: np.ndarray) -> Schedule:
    """Schedule `sim` to the end by the linear rule with raw coefficients `coef`, in compiled code."""
    procs = np.asarray(sim.workload.procs_req, dtype=np.float64)
    if keys.run_rule(sim.state_ref, keys.LINEAR, coef, procs, np.zeros(1)) == STUCK:
        raise RuntimeError("simulation stuck: a waiting job can never fit the machine")
    return sim.schedule()


def load_rule(path: str | Path) -> TunedRule:
    """A rule from its JSON file; a missing, malformed or other-version file raises `RuleError` naming it."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise RuleError(path, "no such tuned-rule file", hint="write one with `schedrl tuned fit ... --out FILE`")
    from schedrl.bounded import TooLarge, read_bounded

    try:
        data = json.loads(read_bounded(path, "a tuned-rule file").decode("utf-8"))
    except TooLarge as e:
        raise RuleError(path, e.problem) from None
    except OSError as e:
        raise RuleError(path, f"cannot read it ({e.strerror or type(e).__name__})") from None
    except UnicodeDecodeError:
        raise RuleError(path, "not a tuned-rule file: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise RuleError(path, f"not a tuned-rule file: invalid JSON ({e.msg}, column {e.colno})", e.lineno) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RuleError(path, f"not a tuned-rule file: no \"format\": \"{FORMAT}\"")
    if data.get("version") != VERSION:
        raise RuleError(path, f"tuned-rule file version {data.get('version')!r}; this schedrl reads version {VERSION}")
    features = data.get("features")
    if features != list(keys.LINEAR_TERMS):
        raise RuleError(path, f"its features {features} are not this schedrl's {list(keys.LINEAR_TERMS)}",
                        hint="refit it with `schedrl tuned fit`")
    weights = _numbers(path, data, "weights", len(features))
    scales = _numbers(path, data.get("normalisation") or {}, "scales", len(features), "normalisation.")
    if not all(s > 0 and math.frexp(s)[0] == 0.5 for s in scales):
        raise RuleError(path, f"normalisation.scales must be positive powers of two (`normalisation`), got {scales}")
    trace = data.get("trace")
    if not isinstance(trace, dict) or not isinstance(trace.get("name"), str) \
            or not isinstance(trace.get("sha256"), (str, type(None))):
        raise RuleError(path, "\"trace\" must hold the trace's \"name\" and \"sha256\" (null for an in-memory one)")
    record = {k: v for k, v in data.items()
              if k not in ("format", "version", "features", "weights", "normalisation", "trace")}
    try:
        return TunedRule(np.array(weights), np.array(scales), trace, record, source=str(path))
    except ValueError as e:
        raise RuleError(path, str(e)) from None


def _numbers(path: Path, data: dict, key: str, n: int, where: str = "") -> list[float]:
    value = data.get(key)
    if not isinstance(value, list) or len(value) != n or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value):
        raise RuleError(path, f"{where}{key} must be a list of {n} finite numbers, one per feature; got {value!r}")
    return [float(v) for v in value]


@dataclass(frozen=True)
class FitSettings:
    """How `fit` searches."""

    metric: str = "bsld"
    """Objective (`schedrl.metrics.METRICS`): each candidate's mean over a generation's training windows."""
    budget_s: float = 300.0
    """Wall-clock seconds of search; the chosen rule is then the kept one best on validation."""
    seed: int = 0
    """Seed of the training windows and of CMA-ES's samples."""
    window_jobs: int = 1024
    """Jobs per training window (RLScheduler's evaluation length; its training episodes are 256)."""
    windows: int = 16
    """Training windows per generation; every candidate of a generation is scored on the same ones."""
    population: int = 0
    """CMA-ES candidates per generation; 0: its default, 4 + floor(3 ln 8) = 10."""
    sigma: float = 0.5
    """Initial CMA-ES step size, around the unit-length start."""
    start: str = "f1"
    """The rule the search starts from (`STARTS`); it is also a candidate of the validation choice."""
    report_every_s: float = 0.0
    """Seconds between progress lines, each keeping the CMA-ES mean as a validation candidate; 0: budget / 30,
    at least 5 s."""

    def __post_init__(self) -> None:
        check_metric(self.metric)
        if self.start not in STARTS:
            raise ValueError(f"unknown start rule {self.start!r}; choose from {', '.join(STARTS)}")
        for name in ("budget_s", "window_jobs", "windows", "sigma"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.population < 0 or self.population == 1 or self.report_every_s < 0:
            raise ValueError(f"population must be 0 (default) or >= 2 and report_every_s >= 0, got {self.population} "
                             f"and {self.report_every_s}")


def unit(weights: np.ndarray) -> np.ndarray:
    """`weights` at unit length (a linear key's order ignores its length)."""
    return np.asarray(weights, dtype=np.float64) / float(np.linalg.norm(weights))


def relative_spread(candidates, mean: np.ndarray) -> float:
    """How far a generation's candidates lie from the mean, per dimension (root mean square), relative to the mean's
    length: the search's step size on the unit sphere (the `sigma` of an isotropic distribution around a unit-length
    mean)."""
    deviations = np.asarray(candidates) - mean
    return float(np.sqrt(np.mean(deviations ** 2)) / np.linalg.norm(mean))


def scores(workload: Workload, config: SimConfig, metric: str, starts, jobs: int,
           coef: np.ndarray | None) -> np.ndarray:
    """`metric` of each `jobs`-job sequence at `starts` scheduled by raw coefficients `coef` (None: F1 itself)."""
    f1 = get_heuristic("f1") if coef is None else None
    out = np.empty(len(starts))
    for i, s in enumerate(starts):
        sim = Simulator(sequence(workload, int(s), jobs), config)
        out[i] = summarize(f1.run(sim) if coef is None else run_coefficients(sim, coef)).value(metric)
    return out


def fit(workload: Workload, config: SimConfig, settings: FitSettings, train_end: int, validation_starts,
        validation_jobs: int, trace: dict | None = None, record: dict | None = None,
        log: Callable[[str], None] = print) -> TunedRule:
    """Fit a rule by CMA-ES on random `window_jobs`-job windows of jobs [0, `train_end`), then keep the best on the
    validation sequences (`validation_starts`, `validation_jobs` jobs each) among the start rule and the CMA-ES mean
    at each progress line. `record` (the split, the trace's cleaning...) is stored with the rule's own."""
    s = settings
    if train_end < s.window_jobs:
        raise ValueError(f"the training zone (jobs 0..{train_end - 1}) is shorter than a {s.window_jobs}-job window")
    sign = 1.0 if lower_is_better(s.metric) else -1.0
    scales = normalisation(workload, train_end)
    rng = np.random.default_rng(s.seed)
    start = np.asarray(STARTS[s.start]) * scales
    # the `cmaes` package (Hansen's default settings); its samples are seeded with the fit's seed, the windows by `rng`
    es = CMA(mean=start / np.linalg.norm(start), sigma=s.sigma, seed=s.seed, population_size=s.population or None)
    every = s.report_every_s or max(5.0, s.budget_s / 30)
    validation_starts = [int(v) for v in validation_starts]

    def validate(weights: np.ndarray) -> float:
        return float(scores(workload, config, s.metric, validation_starts, validation_jobs, weights / scales).mean())

    f1_valid = float(scores(workload, config, s.metric, validation_starts, validation_jobs, None).mean())
    kept = [{"generation": 0, "weights": unit(es.mean), "validation": validate(unit(es.mean))}]
    log(f"fitting a linear rule on {workload.name}: {s.windows} training windows of {s.window_jobs} jobs per "
        f"generation from jobs 0..{train_end - 1}, {es.population_size} candidates; validation {len(validation_starts)} "
        f"sequences of {validation_jobs} jobs (F1 {f1_valid:.2f}, start {s.start} {kept[0]['validation']:.2f}); "
        f"budget {s.budget_s:.0f} s")
    history, best, recent, simulations = [], None, [], 0
    t0 = last = time.perf_counter()
    while time.perf_counter() - t0 < s.budget_s:
        starts = rng.integers(0, train_end - s.window_jobs + 1, s.windows)
        f1 = float(scores(workload, config, s.metric, starts, s.window_jobs, None).mean())
        candidates = [es.ask() for _ in range(es.population_size)]
        # the key's order ignores the weights' length: each candidate is scored (and kept) at unit length
        values = [float(scores(workload, config, s.metric, starts, s.window_jobs, unit(x) / scales).mean())
                  for x in candidates]
        mean_value = float(scores(workload, config, s.metric, starts, s.window_jobs, unit(es.mean) / scales).mean())
        simulations += (len(candidates) + 2) * s.windows
        spread = relative_spread(candidates, es.mean)  # around the mean they were drawn from
        es.tell([(x, sign * v) for x, v in zip(candidates, values)])
        # a ratio to F1 on the same windows compares generations, whose windows differ
        f1 = f1 if f1 > 0 else 1.0
        ratio = (min if sign > 0 else max)(values) / f1
        best = ratio if best is None else (min if sign > 0 else max)(best, ratio)
        recent.append(mean_value / f1)
        now = time.perf_counter()
        if now - last >= every or now - t0 >= s.budget_s:
            last = now
            weights = unit(es.mean)
            kept.append({"generation": es.generation, "weights": weights, "validation": validate(weights)})
            entry = {"generation": es.generation, "elapsed_s": round(now - t0, 1), "simulations": simulations,
                     "train_best_vs_f1": best, "train_mean_vs_f1": float(np.mean(recent)),
                     "validation": kept[-1]["validation"], "validation_f1": f1_valid, "spread": spread}
            history.append(entry)
            recent = []
            log(f"gen {es.generation:5d}  train: best {best:.3f} x F1 so far, mean rule "
                f"{entry['train_mean_vs_f1']:.3f} x F1  validation: mean rule {entry['validation']:.2f} "
                f"(F1 {f1_valid:.2f})  spread {spread:.3f}  {now - t0:.0f} s / {s.budget_s:.0f} s")
    chosen = (min if sign > 0 else max)(kept, key=lambda k: k["validation"])
    log(f"kept the rule of generation {chosen['generation']}"
        + (f" (the start, {s.start})" if chosen["generation"] == 0 else "")
        + f": validation {s.metric} {chosen['validation']:.2f} vs F1 {f1_valid:.2f} "
          f"({100 * (chosen['validation'] / f1_valid - 1):+.1f}%); weights on the normalised terms: "
          + ", ".join(f"{t} {w:+.3f}" for t, w in zip(keys.LINEAR_TERMS, chosen["weights"])))
    fitted = {
        "backfill": config.backfill, "metric": s.metric, "budget_s": s.budget_s, "seed": s.seed,
        "sim_config": config.to_dict(), **(record or {}),
        "fitting": {"optimiser": f"CMA-ES (cmaes {cmaes_version})", "start": s.start, "window_jobs": s.window_jobs,
                    "windows_per_generation": s.windows, "population": es.population_size, "sigma0": s.sigma,
                    "generations": es.generation, "simulations": simulations,
                    "elapsed_s": round(time.perf_counter() - t0, 1)},
        "validation": {"starts": validation_starts, "jobs": validation_jobs, "f1": f1_valid,
                       "chosen_generation": chosen["generation"], "score": chosen["validation"],
                       "candidates": [[k["generation"], k["validation"]] for k in kept]},
        "history": history,
    }
    return TunedRule(chosen["weights"], scales, trace or {"name": workload.name, "sha256": workload.sha256,
                                                          "jobs": len(workload)}, fitted)
