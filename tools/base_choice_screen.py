"""Can an inspector's base rule be chosen online? (issue 55: a base never far from the best rule on any log.)

The harm check (`schedrl inspector harm`) compares a policy with the best heuristic of each real trace, chosen in
hindsight over its 20 windows. An inspector over F1 misses where F1 itself is far from that rule (SJF on HPC2N,
SDSC-Par and OSC-Clust, UNICEP on Sandia-Ross). This screen measures three online ways of choosing the base among
F1, SJF and UNICEP, with only what a scheduler knows when it chooses, on the harm check's windows (same traces,
cleaning, semantics and draw: 20 windows of 1,024 jobs, seed 97):

* `history`: inside the window, every PERIOD arrivals, simulate each rule from an empty machine on the last HISTORY
  jobs that have arrived (true run times where they have ended, requested times where not; `--done-only`: only the
  ended ones), and run the best until the next choice. F1 until HISTORY/4 jobs have arrived.
* `rollout`: every PERIOD arrivals, run each rule to the end on the planning baseline's model of the present
  (`eval.planning`: the queue and running jobs by their estimates and `samples` replays of past arrivals) and take
  the lowest total bounded slowdown over the known waiting jobs.
* `preceding`: before each window, simulate each rule on the log's HISTORY jobs just before it (what the site ran
  last); the best runs the whole window.

With `--tree DIR` (an exported inspector, e.g. a `schedrl distill` output) the tree runs over the chosen base too.
`--queue-guard H` replaces the tree's queue guard (hours; `RejectMask.queue_wait`) without re-teaching it.

Usage (SCHEDRL_TRACE_PATH must hold the real traces):

    python tools/base_choice_screen.py history --period 64 --history 256 --traces Sandia-Ross,SDSC-Par
    python tools/base_choice_screen.py rollout --period 16 --samples 4 --traces Sandia-Ross,CTC-SP2
    python tools/base_choice_screen.py preceding --history 2048
    python tools/base_choice_screen.py none --tree T --queue-guard 12 --traces Sandia-Ross,CEA-Curie

Prints, per trace and semantics: the best heuristic, each rule's, the chosen base's and the tree's mean as a ratio
to the best's, with the upper end of the paired interval (`paired.against`, the harm check's bound), and how often
each rule was chosen. docs/experiments/inspector-trusted.md (2026-11-29, "Can the base be chosen online?") has the runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

import numpy as np

from schedrl.eval import paired
from schedrl.eval.inspector_harm import SEMANTICS, real_traces
from schedrl.heuristics import get_heuristic, keys
from schedrl.metrics import summarize
from schedrl.scenarios.workload import WorkloadSpec, cleaning_for
from schedrl.sim import SimConfig, Simulator
from schedrl.workload.sampling import choose_starts, sequence

RULES = ("f1", "sjf", "unicep")
"""The candidates: every rule that is the best heuristic on some real trace of the harm check."""
HEURISTICS = ("f1", "sjf", "unicep", "wfp3", "fcfs")
"""The harm check's heuristics (the inspector agent's baselines), of which the best is the reference."""


def bsld(schedule) -> float:
    return summarize(schedule).value("bsld")


class HistoryChoice:
    """`history`: re-chosen every `period` arrivals on the window's last `history` arrivals (see the module)."""

    def __init__(self, period: int, history: int, done_only: bool):
        self.period, self.history, self.done_only = period, history, done_only
        self.rules = {name: get_heuristic(name) for name in RULES}
        self._for = None

    def choose(self, sim: Simulator) -> str:
        s = sim.state
        arrived = int(np.searchsorted(s.submit, sim.now, side="right"))
        past = np.arange(max(0, arrived - self.history), arrived)
        ended = (s.end[past] >= 0) & (s.end[past] <= sim.now)
        if self.done_only:
            past, ended = past[ended], ended[ended]
        if len(past) < self.history // 4:
            return self.current
        jobs = sim.workload[past].with_columns(run=np.where(ended, s.run[past], s.est[past]))
        values = {name: bsld(rule.run(Simulator(jobs, sim.config))) for name, rule in self.rules.items()}
        return min(RULES, key=values.get)

    def pick(self, sim: Simulator) -> int:
        if self._for is not sim:
            self._for, self.current, self.last, self.chosen = sim, "f1", 0, []
        arrived = int(np.searchsorted(sim.state.submit, sim.now, side="right"))
        if arrived - self.last >= self.period:
            self.last = arrived
            self.current = self.choose(sim)
            self.chosen.append(self.current)
        return self.rules[self.current].pick(sim)


class RolloutChoice(HistoryChoice):
    """`rollout`: re-chosen every `period` arrivals by rollouts on the planning baseline's model (see the module)."""

    def __init__(self, period: int, samples: int):
        from schedrl.eval.planning import PlanningInspector

        super().__init__(period, 0, False)
        self.plan = PlanningInspector("f1", samples=samples, guard=0)

    def choose(self, sim: Simulator) -> str:
        from schedrl.eval.planning import _copy
        from schedrl.heuristics.hindsight import _compiled
        from schedrl.sim.engine import FINISHED
        from schedrl.sim.state import DONE, as_ref

        if len(sim.queue) < 2:
            return self.current
        if self.plan._for is not sim:
            self.plan._reset(sim)
            self.fast = {name: _compiled(rule, sim) for name, rule in self.rules.items()}
        proposal = int(self.rules[self.current].pick(sim))
        ratio = self.plan._ratio(sim)
        totals = dict.fromkeys(RULES, 0.0)
        for future in self.plan._future(sim, ratio):
            state, _, counted, procs = self.plan._model(sim, proposal, future, ratio)
            for name in RULES:
                kind, coef, _, rand = self.fast[name]
                fork = _copy(state)
                if keys.run_rule(as_ref(fork), kind, coef, procs, rand) != FINISHED:
                    totals[name] = np.inf
                    continue
                done = np.flatnonzero(counted & (fork.status == DONE))
                wait, run = fork.start[done] - fork.submit[done], fork.end[done] - fork.start[done]
                totals[name] += float(np.maximum((wait + run) / np.maximum(run, 10.0), 1.0).sum())
        return min(RULES, key=totals.get)


def tree_over(directory: str, chooser, queue_guard: float | None, base: str | None = None,
              starvation: float | None = None):
    """The exported inspector at `directory`, its proposals the chooser's (anything with `pick(sim)`) or `base`'s (a
    heuristic's name), and its queue guard and proposal guard (`starvation`) replaced (hours)."""
    from schedrl.eval.policies import resolve_policy

    policy = with_guards(resolve_policy(f"checkpoint:{directory}"), base, queue_guard, starvation)
    if chooser is not None:
        policy._propose = lambda sim: int(chooser.pick(sim))
    return policy


def with_guards(policy, base: str | None = None, queue_guard: float | None = None, starvation: float | None = None):
    """An inspector `policy` over `base` (a heuristic's name or tuned:FILE), its queue guard and proposal guard
    (`starvation`) replaced (hours); None leaves each as it is."""
    if base is not None:
        policy = policy.with_base(base)
    if queue_guard is not None:
        policy.reject_mask = replace(policy.reject_mask, queue_wait=queue_guard * 3600.0)
    if starvation is not None:
        policy.reject_mask = replace(policy.reject_mask, starvation_wait=starvation * 3600.0)
        policy.starvation_wait = policy.reject_mask.starvation_wait
    return policy


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("how", choices=("history", "rollout", "preceding", "none"), help="how the base is chosen")
    p.add_argument("--period", type=int, default=64, help="arrivals between choices (history, rollout)")
    p.add_argument("--history", type=int, default=256, help="jobs a choice looks back on (history, preceding)")
    p.add_argument("--done-only", action="store_true", help="history: only the jobs that have ended")
    p.add_argument("--samples", type=int, default=4, help="rollout: replays of past arrivals")
    p.add_argument("--traces", default=None, help="comma-separated (default: every real trace on disk)")
    p.add_argument("--presets", default=",".join(SEMANTICS))
    p.add_argument("--tree", default=None, help="an exported inspector to run over the chosen base")
    p.add_argument("--queue-guard", type=float, default=None, help="hours: the tree's queue guard (0: off)")
    args = p.parse_args(argv)
    traces = args.traces.split(",") if args.traces else real_traces()
    for preset in args.presets.split(","):
        config = SimConfig.preset(preset)
        for trace in traces:
            t0 = time.perf_counter()
            workload = WorkloadSpec(trace, cleaning_for(preset), preset).load()
            length = min(1024, len(workload))
            starts = choose_starts(workload, length, 20, 97, warn=lambda m: None)
            values: dict[str, list[float]] = {name: [] for name in (*HEURISTICS, "chosen", "tree")}
            chosen: list[str] = []
            for start in starts:
                window = sequence(workload, start, length)
                for name in HEURISTICS:
                    values[name].append(bsld(get_heuristic(name).run(Simulator(window, config))))
                make = {"history": lambda: HistoryChoice(args.period, args.history, args.done_only),
                        "rollout": lambda: RolloutChoice(args.period, args.samples)}.get(args.how)
                if args.how == "preceding":
                    before = workload[max(0, start - args.history):start]
                    rule = "f1"
                    if len(before) >= 64:
                        past = {name: bsld(get_heuristic(name).run(Simulator(before, config))) for name in RULES}
                        rule = min(RULES, key=past.get)
                    chosen.append(rule)
                    values["chosen"].append(values[rule][-1])
                elif make is not None:
                    chooser = make()
                    values["chosen"].append(bsld(Simulator(window, config).run(chooser)))
                    chosen += chooser.chosen
                if args.tree:
                    policy = tree_over(args.tree, make() if make is not None else None, args.queue_guard,
                                       chosen[-1] if args.how == "preceding" else None)
                    values["tree"].append(bsld(Simulator(window, config).run(policy)))
            means = {name: float(np.mean(v)) for name, v in values.items() if v}
            best = min(HEURISTICS, key=means.get)
            said = []
            for name in ("f1", "chosen", "tree"):
                if name not in means:
                    continue
                same = np.array_equal(values[name], values[best])
                c = None if same else paired.against(values, name, best, "bsld")
                upper = 0.0 if c is None else c["ci95_pct"][1]
                said.append(f"{name} {means[name] / means[best]:.3f} (upper {upper:+.1f}%)")
            shares = " ".join(f"{r}:{chosen.count(r) / max(1, len(chosen)):.2f}" for r in RULES) if chosen else ""
            print(f"{trace:12s} {preset:11s} best {best:6s} " + " ".join(
                f"{h} {means[h] / means[best]:.3f}" for h in ("sjf", "unicep")) + " | " + " | ".join(said) +
                  f" | {shares} | {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
