"""Hindsight policies: what a decision class is worth to a policy that knows the future.

Two learned agents add a decision to a priority rule: the inspector accepts or rejects the base rule's proposal
(`schedrl.agents.inspector`, `Simulator.defer`), learned backfilling chooses which of EASY's candidates starts
(`schedrl.agents.rlbackfill`, `SimConfig(backfill_choice="policy")`). This module holds a perfect-knowledge rollout
policy of each class, built on the simulator and the base rules alone (so the agents may use one as a teacher, and
`schedrl.eval.hindsight` scores them on a scenario's sequences):

- `HindsightInspector`: at every scheduling point where a rejection is allowed (an event is left to wait for), the
  simulator is copied twice and the rest of the sequence is simulated both ways with the true arrivals and true run
  times: accept the proposal, or reject it (start nothing until the next event), each continued by the base rule
  alone. The decision whose finished sequence has the better metric is taken (ties accept).
- `HindsightBackfill`: at every backfill decision with two or more candidates (or one, with `skip`), the rest of the
  sequence is simulated for each candidate started (and, with `skip`, for starting none), each continued by the base
  with EASY first-fit; the best is taken (ties: the first candidate, EASY's own choice).

A one-step rollout never does worse than its base on any sequence: the value of "the decisions so far, then the
base" can only go down, since at each decision the base's own choice is among the options and its continuation is
the trajectory already valued. So the accept (or first-candidate) value need not be simulated again: it is the value
chosen at the previous decision (`verify=True` simulates it anyway and checks). The bound is a lower bound on what a
perfect-knowledge policy of the class can reach: a deeper search could do better still.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from schedrl.heuristics import keys
from schedrl.sim import DECIDE_PICK, Simulator
from schedrl.sim.engine import STUCK

DECISIONS = ("inspector", "backfill")
"""The decision classes with a hindsight policy."""
BACKFILL_CLASS_RULES = ("easy", "rlscheduler")
"""Backfilling rules whose candidates the backfill class chooses among (learned backfilling's)."""
_JOB_MEANS = ("bsld", "wait", "turnaround", "slowdown")
"""Metrics that are the mean of a per-job array of `schedrl.metrics.jobs.job_metrics` (read without `summarize`)."""


def metric_value(sim: Simulator, metric: str) -> float:
    """The finished schedule's value of `metric`, as `summarize(schedule).value(metric)` gives it (the per-job means
    computed directly, the rest through `summarize`)."""
    from schedrl.metrics import summarize
    from schedrl.metrics.jobs import job_metrics

    schedule = sim.schedule()
    if metric in _JOB_MEANS:
        return float(job_metrics(schedule)[metric].mean())
    return summarize(schedule).value(metric)


TUNED_PREFIX = "tuned:"
"""`--base tuned:FILE`: a rule fitted by `schedrl tuned fit`."""


def make_base(base: str, seed: int = 0):
    """The base rule as a policy: a heuristic name (`schedrl.heuristics.HEURISTICS`) or `tuned:FILE`. ValueError
    naming the valid names for an unknown one; a tuned file that cannot be read is the tuned rule's one-line error."""
    from schedrl.heuristics import HEURISTICS, get_heuristic

    if base.startswith(TUNED_PREFIX):
        from schedrl.heuristics.tuned import load_rule

        path = base[len(TUNED_PREFIX):]
        if not path:
            raise ValueError("--base tuned:FILE needs the file of a rule fitted by `schedrl tuned fit`")
        return load_rule(path)
    if base.lower() not in HEURISTICS:
        raise ValueError(f"unknown base heuristic {base!r}; choose one of {', '.join(HEURISTICS)}, or tuned:FILE")
    return get_heuristic(base.lower(), seed)


def _compiled(base, sim: Simulator) -> tuple:
    """(kind, coefficients, processors, random numbers) of the base for `keys.run_rule`: the compiled form of a
    heuristic or a tuned rule (a rule fitted on another trace is refused, as its own `run` refuses it)."""
    from schedrl.heuristics.heuristic import Heuristic
    from schedrl.heuristics.tuned import TunedRule

    procs = np.asarray(sim.workload.procs_req, dtype=np.float64)
    if type(base) is Heuristic:
        return base.kind, keys.NO_COEFFICIENTS, procs, base._rand
    if type(base) is TunedRule:
        base._check(sim.workload)
        return keys.LINEAR, base.coefficients, procs, base._rand
    raise ValueError(f"a hindsight rollout needs a base with a compiled key (a heuristic or a tuned rule), got "
                     f"{type(base).__name__}")


class _Rollouts:
    """The base rule continued to the end of the sequence from a copy of a simulator, after one action."""

    def __init__(self, base, metric: str, objective: Callable[[Simulator], float] | None = None):
        self.base, self.metric, self.objective = base, metric, objective
        self.count = 0
        self._fast: tuple | None = None
        self._for: Simulator | None = None

    def value(self, sim: Simulator, action: Callable[[Simulator], None]) -> float:
        """The metric of the sequence finished by the base after `action(copy)`."""
        if self._for is not sim:
            self._fast, self._for = _compiled(self.base, sim), sim
        fork = sim.copy()
        action(fork)
        kind, coef, procs, rand = self._fast
        if keys.run_rule(fork.state_ref, kind, coef, procs, rand) == STUCK:
            raise RuntimeError("simulation stuck: a waiting job can never fit the machine")
        self.count += 1
        return metric_value(fork, self.metric) if self.objective is None else self.objective(fork)


def _improves(metric: str) -> Callable[[float, float], bool]:
    """`better(new, old)`: True where `new` is better than `old` by more than rounding."""
    from schedrl.metrics import lower_is_better

    sign = 1.0 if lower_is_better(metric) else -1.0
    return lambda new, old: sign * (old - new) > 1e-9 * max(1.0, abs(old))


MAX_DEPTH = 16
"""The most rejections in a row a hindsight inspector tries at a point: each point costs depth + 1 rollouts of the
whole sequence, so a deeper search is hours per window (and past a window's length it tries nothing new)."""


class HindsightInspector:
    """The inspector with perfect knowledge of the future (a one-step rollout of the base rule; see the module).

    A simulator policy (`defer`, `pick`); run it with `sim.run(policy)` under the base's own `SimConfig`. `depth`
    M > 1 also tries rejecting 2..M times in a row (the base's next proposals too, at the next events), each then
    continued by the base: M + 1 options per point instead of 2; a plan of several rejections is an option again at
    the next point, so the value still only goes down. Counters of the last simulation: `inspections` (scheduling
    points where a rejection was allowed), `changed` (rejections), `rollouts` (sequences simulated to the end) and
    `value` (the chosen metric value: the schedule's at the end)."""

    decision = "inspector"

    def __init__(self, base: str | Any = "f1", metric: str = "bsld", verify: bool = False, depth: int = 1,
                 objective: Callable[[Simulator], float] | None = None):
        if not 1 <= depth <= MAX_DEPTH:
            raise ValueError(f"depth must be between 1 and {MAX_DEPTH} (rejections in a row tried at a point), "
                             f"got {depth}")
        self.base = make_base(base) if isinstance(base, str) else base
        self.metric, self.verify, self.depth = metric, verify, int(depth)
        self.objective = objective
        """A finished simulation's value in place of the metric (lower is better; the teacher's penalised one)."""
        self._better = _improves(metric) if objective is None else _improves("wait")
        self._rollouts = _Rollouts(self.base, metric, objective)
        self._for: Simulator | None = None
        self._proposal = -1

    def _reset(self, sim: Simulator) -> None:
        self._for = sim
        self._rollouts = _Rollouts(self.base, self.metric, self.objective)
        self.inspections = self.changed = 0
        self.value: float | None = None
        self._plan = 0  # rejections still planned after this point (depth > 1)

    @property
    def rollouts(self) -> int:
        return self._rollouts.count

    def _option(self, j: int, m: int) -> Callable[[Simulator], None]:
        """Accept `j` (m = 0), or reject now and at the next m - 1 points (where an event is left), as this policy
        would carry it out."""
        if m == 0:
            return lambda s: s.pick(j)

        def reject(s: Simulator) -> None:
            s.defer()
            for _ in range(m - 1):
                if s.advance() != DECIDE_PICK:
                    return
                proposal = int(self.base.pick(s))
                if not s.has_event:
                    s.pick(proposal)
                    return
                s.defer()
        return reject

    def option_values(self, sim: Simulator, proposal: int) -> np.ndarray:
        """The finished sequence's metric for each option at this point, simulated from copies of `sim` (nothing is
        cached, `sim` is not changed): entry 0 accepts `proposal`, entry m rejects it and the base's next m - 1
        proposals, each then continued by the base alone. The hindsight teacher's labels (`agents/inspector/
        teacher.py`) compare them."""
        if self._for is not sim:
            self._reset(sim)
        return np.array([self._rollouts.value(sim, self._option(int(proposal), m)) for m in range(self.depth + 1)])

    def defer(self, sim: Simulator) -> bool:
        """Reject (True) where rejecting, then the base, ends the sequence better than accepting, then the base."""
        if self._for is not sim:
            self._reset(sim)
        j = self._proposal = int(self.base.pick(sim))
        planned, self._plan = self._plan, 0
        if not sim.has_event:  # a rejection would wait for ever: always accepted (a plan of rejections ends here)
            return False
        self.inspections += 1
        known = self.value
        best: tuple[int, float] | None = None
        for m in range(self.depth + 1):
            if m == planned and known is not None and not self.verify:
                value = known  # the trajectory valued at the previous point
            else:
                value = self._rollouts.value(sim, self._option(j, m))
                if m == planned and known is not None and value != known:
                    raise AssertionError(f"the planned continuation changed between decisions: {value!r} != {known!r}")
            if best is None or self._better(value, best[1]):
                best = (m, value)
        m, self.value = best
        if m == 0:
            return False
        self._plan, self._proposal = m - 1, -1
        self.changed += 1
        return True

    def pick(self, sim: Simulator) -> int:
        """The base's proposal (the one `defer` accepted)."""
        return self._proposal if self._proposal >= 0 and self._for is sim else int(self.base.pick(sim))


class HindsightBackfill:
    """Learned backfilling with perfect knowledge of the future (a one-step rollout of the base with EASY first-fit).

    A simulator policy (`pick`, `backfill`; `run(sim)` checks the semantics and runs it); it must run under `backfill_choice="policy"`
    (`sim_config`). `candidates`: how many candidates (the first, in queue order) are tried at a decision (None:
    all); `skip`: also try starting none of them until the next event. Counters as `HindsightInspector`'s:
    `decisions` (backfill points with a choice), `changed` (where the choice was not the first candidate)."""

    decision = "backfill"

    def __init__(self, base: str | Any = "f1", metric: str = "wait", candidates: int | None = None, skip: bool = False,
                 verify: bool = False):
        if candidates is not None and candidates < 1:
            raise ValueError(f"candidates must be >= 1 (or None: all), got {candidates}")
        self.base = make_base(base) if isinstance(base, str) else base
        self.metric, self.candidates, self.skip, self.verify = metric, candidates, skip, verify
        self._better = _improves(metric)
        self._for: Simulator | None = None

    @staticmethod
    def sim_config(config):
        """The base's `SimConfig` with every backfill a decision."""
        if config.backfill not in BACKFILL_CLASS_RULES:
            rules = ", ".join(BACKFILL_CLASS_RULES)
            raise ValueError(f"the backfill decision class needs EASY-style backfilling ({rules}), not "
                             f"{config.backfill!r}")
        return replace(config, backfill_choice="policy")

    def _reset(self, sim: Simulator) -> None:
        self._for = sim
        self._rollouts = _Rollouts(self.base, self.metric)
        self.decisions = self.changed = 0
        self.value: float | None = None

    @property
    def rollouts(self) -> int:
        return self._rollouts.count if self._for is not None else 0

    def pick(self, sim: Simulator) -> int:
        return int(self.base.pick(sim))

    def backfill(self, sim: Simulator) -> int | None:
        """The candidate whose start, then the base, ends the sequence best (None: start none, only with `skip`)."""
        if self._for is not sim:
            self._reset(sim)
        cands = sim.candidates.copy()
        if len(cands) == 1 and not self.skip:
            return int(cands[0])
        return self._choose(sim, cands)

    def _choose(self, sim: Simulator, cands: np.ndarray) -> int | None:
        self.decisions += 1
        tried = cands if self.candidates is None else cands[: self.candidates]
        first = self.value
        if first is None or self.verify:
            found = self._rollouts.value(sim, lambda s: s.backfill(int(tried[0])))
            if first is not None and found != first:
                raise AssertionError(f"the base's continuation changed between decisions: {found!r} != {first!r}")
            first = found
        best, choice = first, int(tried[0])
        options: list[int | None] = [int(c) for c in tried[1:]] + ([None] if self.skip else [])
        for c in options:
            v = self._rollouts.value(sim, lambda s, c=c: s.backfill(c))
            if self._better(v, best):
                best, choice = v, c
        self.value = best
        if choice != int(tried[0]):
            self.changed += 1
        return choice

    def run(self, sim: Simulator):
        """Schedule the whole workload (`sim.run(self)`, after checking the semantics)."""
        if sim.config.backfill_choice != "policy":
            raise ValueError("HindsightBackfill runs under backfill_choice='policy' (HindsightBackfill.sim_config)")
        self._reset(sim)
        return sim.run(self)


# --- scoring on a scenario ---------------------------------------------------------------------------------------
