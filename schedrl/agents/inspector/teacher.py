"""The hindsight teacher (issue 46, lever 1): DAgger of the perfect-knowledge inspector into the inspector's network.

`schedrl train inspector --teacher hindsight` runs this as the agent's warm start, before PPO (whose time it shares:
the warm start counts in `--time-budget`). Each round draws `windows` training windows (`sequence_length` jobs from
the first `train_fraction` of the trace: the teacher sees only training-zone jobs, and only the window's) and
schedules each with a policy, the base rule proposing at every scheduling point. Where a rejection is allowed (the
env's mask: an event to wait for, the starvation guard), the teacher values the options from copies of the simulator
with the true future of the window (`HindsightInspector.option_values`: accept, or reject 1..`depth` times in a row,
each then the base to the end of the window). The label is reject where some rejection ends the window better than
accepting; its weight is the value gap between the best rejection and accepting, relative to the base's value on the
window (cost-sensitive imitation: a decision where the options tie weighs nothing, so the 94% of "accept" labels
that change nothing do not teach F1). Round 0 follows the teacher's own choices; rounds 1.. follow the student's
greedy choices (DAgger: the student is labelled on the states it visits). After each round the policy network is fit
to everything gathered (`agents/cloning.py:clone`, weighted cross-entropy over the masked logits; the features are
`observation.Observer`'s, what an online scheduler knows).

`scenarios` (lever 2, learn the rule and not the trace): windows come round-robin from the run's own trace and from
the training zones of these trace scenarios, each scheduled under its scenario's simulator semantics (its trace, its
cleaning, its split's first part only: no validation or evaluation job of any scenario is labelled); the threshold's
training windows are drawn the same way, so the no-starvation constraint is checked on every workload. The
observation keeps the run's own normalisation (requests are shares of each machine; times scaled by the run's trace),
as the policy sees any other trace at evaluation.

`wait_penalty` (lever 4, starvation as a learned constraint): the teacher's objective becomes the metric plus
`wait_penalty` times the mean over the window's jobs of their wait past `starvation_wait` (in units of that bound),
so the labels themselves avoid holding jobs back past it.

No ray or torch at import; `warm_start(algorithm)` fits the learner's module.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from schedrl.heuristics.hindsight import MAX_DEPTH

TEACHERS = ("hindsight",)
"""`--teacher` values."""
WARM_START_KEY = "teacher"
"""`learner_config_dict` key of the teacher's settings (`InspectorSettings.teacher_spec`)."""
UNROLLABLE_BASES = ("random",)
"""Bases the hindsight teacher refuses: their proposals draw random numbers, so a rollout values one draw of them."""


def check_teacher(teacher: str | None, base: str, sim_config, depth: int) -> None:
    """ValueError (one line) for a teacher it cannot be: an unknown one, a depth below 1, a base whose rollouts are
    not a function of the simulator's state, semantics the teacher does not roll out. Every backfilling of the event
    simulator is rolled out exactly (none, EASY, conservative, RLScheduler's, Slurm's passes: a rollout copies the
    simulator's state, its pass clock and plan with it; `tests/agents/inspector/test_inspector_teacher.py` checks the
    cached continuation at every decision); a policy's choice among the
    backfill candidates (`backfill_choice="policy"`, learned backfilling's semantics) is not: the rollouts start EASY's
    first candidate."""
    if teacher is None:
        return
    if teacher not in TEACHERS:
        raise ValueError(f"--teacher {teacher!r} is not a teacher; choose one of {', '.join(TEACHERS)}")
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"--teacher-depth must be between 1 and {MAX_DEPTH} (rejections in a row the teacher tries), "
                         f"got {depth}")
    if base.lower() in UNROLLABLE_BASES:
        raise ValueError(f"--teacher hindsight cannot roll out --base {base}: its proposals are random draws, so the "
                         f"teacher would value one draw of the future's proposals; use a deterministic rule")
    if getattr(sim_config, "backfill_choice", "first-fit") != "first-fit":
        raise ValueError(f"--teacher hindsight does not support backfill_choice={sim_config.backfill_choice!r} "
                         f"(a policy choosing among the backfill candidates): its rollouts backfill first-fit")


@dataclass(frozen=True)
class Source:
    """Where training windows come from: a workload, its training zone [lo, hi), the semantics it is scheduled under."""

    name: str
    workload: Any
    lo: int
    hi: int
    sim_config: Any

    def window(self, rng, length: int):
        """A window of at most `length` jobs of the training zone, drawn with `rng` (its start, its jobs)."""
        from schedrl.workload.sampling import sequence

        length = min(length, self.hi - self.lo)
        start = self.lo + int(rng.integers(0, max(self.hi - self.lo - length, 0) + 1))
        return start, sequence(self.workload, start, length)


DECISION_FIELDS = ("discipline", "backfill", "window", "backfill_choice")
"""Simulator fields that make the inspector's decision what it is (a scenario of `--teacher-scenarios` must agree)."""


def check_scenarios(names, sim_config, metric: str, sequence_length: int) -> list:
    """The trace scenarios `--teacher-scenarios` names, checked (ValueError, one line, naming the scenario): each must
    exist, be a trace scenario, judge the run's metric, decide as the run does (pick-and-wait or the same list window,
    the same backfilling) and hold a training zone of at least one episode."""
    from schedrl.scenarios import get_scenario

    found = []
    for name in names:
        try:
            scenario = get_scenario(name)
        except (ValueError, KeyError) as e:
            raise ValueError(f"--teacher-scenarios: {e}") from None
        if scenario.generated:
            raise ValueError(f"--teacher-scenarios: {scenario.name} is generated on the discrete-time cluster; the "
                             "teacher labels windows of traces")
        if scenario.metric != metric:
            raise ValueError(f"--teacher-scenarios: {scenario.name} judges {scenario.metric}, the run {metric}: the "
                             "teacher would label its windows for another objective")
        differs = [f"{f} {getattr(scenario.sim, f)!r} (the run: {getattr(sim_config, f)!r})" for f in DECISION_FIELDS
                   if getattr(scenario.sim, f) != getattr(sim_config, f)]
        if differs:
            raise ValueError(f"--teacher-scenarios: the inspector decides differently on {scenario.name}: "
                             + ", ".join(differs))
        found.append(scenario)
    return found


def sources(cfg, scenarios=()) -> list[Source]:
    """The run's own training zone and those of `scenarios` (checked by `check_scenarios`)."""
    from schedrl.envs.episodes import training_end

    workload = cfg.workload()
    out = [Source(cfg.trace, workload, 0, training_end(cfg.train_fraction, len(workload)), cfg.sim_config())]
    for scenario in check_scenarios(scenarios, cfg.sim_config(), cfg.metric, cfg.sequence_length):
        data = scenario.load()
        lo, hi = scenario.split.training_range(len(data))
        if hi - lo < cfg.sequence_length:
            raise ValueError(f"--teacher-scenarios: {scenario.name}'s training zone holds {hi - lo} jobs, fewer than "
                             f"one episode of {cfg.sequence_length}")
        out.append(Source(scenario.name, data, lo, hi, scenario.sim))
    return out


@dataclass
class Demonstrations:
    """Labelled decisions: features, masks, labels (0 accept, 1 reject), weights (value gaps)."""

    features: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.labels)

    def arrays(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        from schedrl.agents.inspector.env import OBS_ACTION_MASK, OBS_FEATURES

        obs = {OBS_FEATURES: np.asarray(self.features, np.float32), OBS_ACTION_MASK: np.asarray(self.masks, np.float32)}
        return obs, np.asarray(self.labels, np.int64), np.asarray(self.weights, np.float64)


@dataclass
class WindowResult:
    start: int
    base: float
    value: float
    decisions: int
    rejects_labelled: int
    rejects_taken: int
    agree: int
    guarded: int


def objective(metric: str, wait_bound: float, wait_penalty: float) -> Callable:
    """The teacher's value of a finished simulation: the metric, plus `wait_penalty` times the mean wait past
    `wait_bound` in units of it (lower is better for every metric the inspector trains on but utilisation)."""
    from schedrl.heuristics.hindsight import metric_value

    if wait_penalty <= 0 or wait_bound <= 0:
        return lambda sim: metric_value(sim, metric)

    def value(sim) -> float:
        s = sim.state
        over = np.maximum(s.start - s.submit - wait_bound, 0.0)
        return metric_value(sim, metric) + wait_penalty * float(over.mean()) / wait_bound
    return value


def hindsight_label(values: np.ndarray) -> tuple[bool, float]:
    """The teacher's label from `HindsightInspector.option_values` (entry 0 accepts, the rest reject): reject where
    the best rejection's finished value is below accepting's (beyond float noise), and the value gap between them."""
    best_reject = float(values[1:].min())
    accept = float(values[0])
    return best_reject < accept - 1e-9 * max(1.0, abs(accept)), abs(accept - best_reject)


def label_window(jobs, sim_config, base: str, metric: str, depth: int, observer, starvation_wait,
                 act: Callable[[np.ndarray, np.ndarray], int] | None, demos: Demonstrations, start: int = 0,
                 wait_penalty: float = 0.0) -> WindowResult:
    """Schedule one window with the base proposing and `act(features, mask)` deciding (None: the teacher's own
    choice), labelling every decision where a rejection is allowed with the teacher's choice into `demos`.
    `starvation_wait`: the env's `mask.RejectMask` (or its guard in seconds, the mask `any`): where it forbids a
    rejection the proposal is accepted and nothing is labelled, so the student is never taught a rejection its mask
    forbids."""
    from schedrl.agents.inspector.config import make_base
    from schedrl.agents.inspector.mask import RejectMask
    from schedrl.heuristics import hindsight as hs
    from schedrl.metrics import summarize
    from schedrl.sim import DECIDE_PICK, FINISHED, Simulator

    mask = starvation_wait if isinstance(starvation_wait, RejectMask) else RejectMask(float(starvation_wait))
    value_of = objective(metric, mask.starvation_wait, wait_penalty)
    base_value = summarize(make_base(base).run(Simulator(jobs, sim_config))).value(metric)
    scale = max(abs(base_value), 1e-9)
    teacher = hs.HindsightInspector(base, metric, depth=depth, objective=value_of if wait_penalty > 0 else None)
    proposer = make_base(base)
    sim = Simulator(jobs, sim_config)
    r = WindowResult(start, base_value, float("nan"), 0, 0, 0, 0, 0)
    while True:
        code = sim.advance()
        if code == FINISHED:
            break
        if code != DECIDE_PICK:
            sim.backfill(int(sim.candidates[0]))
            continue
        j = int(proposer.pick(sim))
        if not mask.allows(sim, j):
            r.guarded += int(sim.has_event)
            sim.pick(j)
            continue
        features = observer.build(sim, j)
        rejects, gap = hindsight_label(teacher.option_values(sim, j))
        label = int(rejects)
        demos.features.append(features)
        demos.masks.append(np.array([1.0, 1.0], np.float32))
        demos.labels.append(label)
        demos.weights.append(gap / scale)
        a = label if act is None else int(act(features, np.array([1.0, 1.0], np.float32)))
        r.decisions += 1
        r.rejects_labelled += label
        r.rejects_taken += a
        r.agree += int(a == label)
        if a == 1:
            sim.defer()
        else:
            sim.pick(j)
    r.value = summarize(sim.schedule()).value(metric)
    return r


WEIGHTINGS = ("balanced", "gap", "plain")
"""How labels are weighted: `gap` (the value gap alone), `balanced` (the gaps, the rejections' scaled so both labels
weigh the same in all; the default), `plain` (every label 1); `floor` is added to the first two."""


def label_weights(labels: np.ndarray, gaps: np.ndarray, weighting: str = "balanced", floor: float = 1e-3) -> np.ndarray:
    """Each labelled decision's weight in the fit. The gaps alone (AggreVaTe's costs) are heavy-tailed and mostly
    the rejections': on `default`'s training windows at depth 3, 24% of the labels are reject and carry 77% of the
    total gap, and a network fit to them rejects almost everything (docs/experiments/inspector-teacher.md); balanced,
    the two labels weigh the same in all and the gap still orders the decisions within each."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"teacher weights must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
    gaps = np.asarray(gaps, np.float64)
    if weighting == "plain":
        return np.ones_like(gaps)
    w = gaps.copy()
    reject = np.asarray(labels) == 1
    if weighting == "balanced" and reject.any() and (~reject).any() and w[reject].sum() > 0:
        w[reject] *= w[~reject].sum() / w[reject].sum()
    w = w + floor
    return w if (w > 0).any() else np.ones_like(w)


THRESHOLDS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
"""`--teacher-threshold auto`'s grid: amounts subtracted from the fitted network's reject logit."""
MAX_WAIT_RATIO, UTILISATION_DROP = 1.25, 0.01
"""The no-starvation constraint of issue 46 (longest wait at most 1.25x the base's, utilisation at most 1 point below),
which `auto` checks on training windows."""


def choose_threshold(module, cfg, srcs: list[Source], rng, windows: int, length: int = 1024,
                     grid=THRESHOLDS, log: Callable[[str], None] = print) -> tuple[float, list[dict]]:
    """The reject-logit shift that keeps the student within the no-starvation constraint on `windows` training
    windows of `length` jobs (drawn round-robin from `srcs`; mean longest-wait ratio and utilisation difference
    against the base alone), and among those the best mean metric; the largest of the grid where none does. Training
    windows only: no held-out job."""
    from schedrl.agents.inspector.config import make_base
    from schedrl.agents.inspector.policy import InspectorPolicy
    from schedrl.metrics import lower_is_better, summarize
    from schedrl.sim import Simulator

    drawn = [(src, src.window(rng, length)[1]) for src in (srcs[i % len(srcs)] for i in range(windows))]
    metric = cfg.metric
    sign = 1.0 if lower_is_better(metric) else -1.0
    base = [summarize(make_base(cfg.base).run(Simulator(w, src.sim_config))) for src, w in drawn]
    policy = InspectorPolicy(module, cfg.to_dict())
    reject_logit = policy.reject_logit
    table = []
    where = f"{windows} training windows of {min(length, max(src.hi - src.lo for src in srcs))} jobs" + (
        f" from {', '.join(src.name for src in srcs)}" if len(srcs) > 1 else "")
    for tau in grid:
        policy.reject_logit = lambda f, tau=tau: reject_logit(f) - tau
        ms = [summarize(Simulator(w, src.sim_config).run(policy)) for src, w in drawn]
        row = {"threshold": tau,
               "vs_base": float(np.mean([sign * (b.value(metric) - m.value(metric)) / max(abs(b.value(metric)), 1e-9)
                                         for b, m in zip(base, ms)])),
               "max_wait_ratio": float(np.mean([m.max_wait / max(b.max_wait, 1.0) for b, m in zip(base, ms)])),
               "utilisation_change": float(np.mean([m.utilization - b.utilization for b, m in zip(base, ms)]))}
        row["feasible"] = row["max_wait_ratio"] <= MAX_WAIT_RATIO and row["utilisation_change"] >= -UTILISATION_DROP
        table.append(row)
        log(f"teacher threshold {tau}: {100 * row['vs_base']:+.1f}% vs the base on {where}, longest wait "
            f"x{row['max_wait_ratio']:.2f}, utilisation {100 * row['utilisation_change']:+.1f} points"
            f"{'' if row['feasible'] else ' (starves)'}")
    feasible = [r for r in table if r["feasible"]]
    chosen = max(feasible, key=lambda r: r["vs_base"]) if feasible else table[-1]
    return float(chosen["threshold"]), table


def shift_reject(module, tau: float) -> None:
    """Subtract `tau` from the policy network's reject logit (its last layer's bias), so the greedy policy rejects
    only where the fitted logit exceeds accept's by `tau`."""
    import torch

    with torch.no_grad():
        module.pi[-1].bias[1] -= float(tau)


def greedy(module) -> Callable[[np.ndarray, np.ndarray], int]:
    """The module's greedy choice for one observation (reject where its logit is above accept's)."""
    import torch

    def act(features: np.ndarray, mask: np.ndarray) -> int:
        with torch.inference_mode():
            logits = module.pi(torch.from_numpy(features)[None])[0]
        return int(mask[1] > 0 and float(logits[1] - logits[0]) > 0.0)
    return act


def fit_sample(gathered: int, cap: int, rng) -> np.ndarray:
    """Which of the `gathered` decisions a round's fit uses (sorted indices): all where `cap` is 0 or not exceeded,
    else a uniform draw of `cap` of them, so the fit still follows DAgger's aggregate (every round's states in
    proportion) while costing at most `cap` x epochs however many rounds ran."""
    if cap <= 0 or gathered <= cap:
        return np.arange(gathered)
    return np.sort(rng.choice(gathered, size=cap, replace=False)).astype(np.int64)


def policy_digest(module) -> str:
    """sha256 of the policy network's parameters (`pi`, in order): what the warm start hands on, so a run with
    `--no-ppo` can be checked to have checkpointed exactly it."""
    import hashlib

    h = hashlib.sha256()
    for p in module.pi.parameters():
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def round_line(row: Mapping[str, Any], of: int) -> str:
    """The progress line of one DAgger round (`dagger`'s report row): who drove, what was labelled, the quick score
    (the driver's schedules against the base's on the round's windows), the fit, the time."""
    who = "teacher" if row["driver"] == "teacher" else "student"
    return (f"teacher round {row['round']}/{of - 1}: {row['decisions']:,} decisions labelled on {row['windows']} windows "
            f"({row['labelled_reject']:.1%} reject; {who} drove, {-100 * row['vs_base']:+.1f}% vs the base there, "
            f"rejecting {row['taken_reject']:.1%}); fit on {row['fitted']:,} of {row['gathered']:,}: loss "
            f"{row['fit_loss']:.4f}, agreement {row['fit_agreement']:.1%}; {row['label_seconds']:.0f} s labelling, "
            f"{row['fit_seconds']:.0f} s fitting, {row['elapsed']:.0f} s in all")


def dagger(module, env_config: Mapping[str, Any], spec: Mapping[str, Any], log: Callable[[str], None] = print) -> dict:
    """DAgger of the hindsight teacher into `module`'s policy (see the module); returns the report."""
    from schedrl.agents.cloning import clone
    from schedrl.agents.inspector.config import InspectorEnvConfig
    from schedrl.agents.inspector.mask import RejectMask
    from schedrl.agents.inspector.observation import Normalisation, Observer

    t0 = time.perf_counter()
    cfg = InspectorEnvConfig.from_dict(dict(env_config))
    srcs = sources(cfg, spec.get("scenarios") or ())
    own = srcs[0]
    norm = Normalisation.from_dict(cfg.norm) if cfg.norm else Normalisation.from_trace(own.workload[:own.hi])
    observer = Observer(norm, cfg.history_features)
    depth, windows = int(spec["depth"]), int(spec["windows"])
    rounds, epochs = int(spec["rounds"]), int(spec["epochs"])
    fit_cap = int(spec.get("fit_decisions") or 0)
    budget = spec.get("seconds")
    rng = np.random.default_rng(1_000_003 + int(spec.get("seed") or 0))
    demos = Demonstrations()
    report_rounds: list[dict] = []
    stats: dict = {}
    untrained = float("nan")
    teacher_value = float("nan")
    for r in range(rounds + 1):
        if budget is not None and r > 0 and time.perf_counter() - t0 > float(budget):
            log(f"teacher: time for the rounds ({float(budget):.0f} s) spent after {r} of {rounds + 1}")
            break
        act = None if r == 0 else greedy(module)
        results = []
        t1 = time.perf_counter()
        for i in range(windows):
            src = srcs[(r * windows + i) % len(srcs)]
            start, jobs = src.window(rng, cfg.sequence_length)
            results.append(label_window(jobs, src.sim_config, cfg.base, cfg.metric, depth, observer,
                                        RejectMask.of(cfg), act, demos, start, float(spec.get("wait_penalty", 0.0))))
        label_seconds = time.perf_counter() - t1
        obs, labels, gaps = demos.arrays()
        weights = label_weights(labels, gaps, str(spec.get("weights", "balanced")), float(spec.get("floor", 1e-3)))
        rows = fit_sample(len(labels), fit_cap, rng)
        if len(rows):
            stats = clone(module, {k: v[rows] for k, v in obs.items()}, labels[rows], np.zeros(len(rows), np.float32),
                          value_net=None, epochs=epochs, minibatch=256, lr=float(spec.get("lr", 1e-3)),
                          seed=int(spec.get("seed") or 0) + r, weights=weights[rows])
        else:  # no point of these windows offered a rejection (the mask): nothing to fit yet
            stats = {"agreement": float("nan"), "agreement_before": float("nan"), "cross_entropy": float("nan"),
                     "clone_seconds": 0.0}
        if r == 0:
            untrained = stats["agreement_before"]
        rel = float(np.mean([(w.base - w.value) / max(abs(w.base), 1e-9) for w in results]))
        decisions = sum(w.decisions for w in results)
        row = {"round": r, "driver": "teacher" if act is None else "student", "windows": len(results),
               "decisions": decisions, "labelled_reject": sum(w.rejects_labelled for w in results) / max(decisions, 1),
               "taken_reject": sum(w.rejects_taken for w in results) / max(decisions, 1),
               "agreement_driving": sum(w.agree for w in results) / max(decisions, 1),
               "vs_base": rel, "slowdown": float(np.mean([w.value for w in results])), "cut": 0,
               "guarded": sum(w.guarded for w in results), "label_seconds": label_seconds,
               "fit_agreement": stats["agreement"], "fit_loss": stats["cross_entropy"], "fitted": len(rows),
               "fit_seconds": stats["clone_seconds"], "gathered": len(demos), "elapsed": time.perf_counter() - t0}
        if act is None:
            teacher_value = row["slowdown"]
        report_rounds.append(row)
        log(round_line(row, rounds + 1))
    threshold, thresholds = spec.get("threshold", 0.0), []
    if threshold == "auto":
        threshold, thresholds = choose_threshold(module, cfg, srcs, rng, int(spec.get("threshold_windows", 4)),
                                                 log=log)
        log(f"teacher threshold: {threshold} (auto, on training windows)")
    if float(threshold):
        shift_reject(module, float(threshold))
    return {"teacher": f"hindsight depth {depth}", "sources": [src.name for src in srcs],
            "policy_digest": policy_digest(module),
            "decisions": len(demos), "threshold": float(threshold),
            "thresholds": thresholds,
            "episodes": sum(x["windows"] for x in report_rounds), "teacher_value": teacher_value,
            "rounds": report_rounds, "demonstration_seconds": 0.0,
            "agreement": stats.get("agreement", float("nan")),
            "agreement_before": untrained,
            "clone_seconds": time.perf_counter() - t0}


def warm_start(algorithm, spec: Mapping[str, Any]) -> dict[str, Any]:
    """DAgger of the teacher into `algorithm`'s module on its learner(s), then the env runners are synced; a line per
    round in the trial's warm-start log, which `schedrl train` prints as it comes (`cloning.progress_log`)."""
    from schedrl.agents.cloning import clone_on_learners, progress_log

    env_config = dict(algorithm.config.env_config)
    log = progress_log(algorithm)
    return clone_on_learners(algorithm, lambda module: dagger(module, env_config, spec, log=log))


__all__ = ["Demonstrations", "TEACHERS", "check_teacher", "dagger", "hindsight_label", "label_window", "warm_start"]
