"""Policies for evaluation: names (`sjf`, `checkpoint:PATH`), objects, and outside models.

Anything with `pick(sim)` is a policy (`schedrl.agents.base.SchedulingPolicy`); `resolve_policy`
turns a spec string into one: a heuristic by name, or any agent's trained checkpoint through its
run record (`schedrl.agents.checkpoint.load_policy`).
"""

from __future__ import annotations

from schedrl.heuristics import HEURISTICS, get_heuristic
from schedrl.metrics import summarize
from schedrl.sim.simulator import Schedule, Simulator

CHECKPOINT_PREFIX = "checkpoint:"


def resolve_policy(spec, seed: int = 0):
    """A heuristic by name, a trained policy from `checkpoint:PATH` (loads torch lazily), or a policy object."""
    if not isinstance(spec, str):
        if not callable(getattr(spec, "pick", None)):
            raise ValueError(f"{spec!r} is not a policy: give a name, checkpoint:PATH, or an object with pick(sim)")
        return spec
    spec = spec.strip()
    if spec.startswith(CHECKPOINT_PREFIX):
        from schedrl.agents.checkpoint import load_policy

        return load_policy(spec[len(CHECKPOINT_PREFIX):])
    if spec.lower() not in HEURISTICS:
        raise ValueError(f"unknown policy {spec!r}: use a heuristic ({', '.join(HEURISTICS)}) or checkpoint:PATH")
    return get_heuristic(spec, seed)


def policy_label(spec) -> str:
    """Short column label of a policy spec."""
    if not isinstance(spec, str):
        return str(getattr(spec, "name", type(spec).__name__))
    if spec.startswith(CHECKPOINT_PREFIX):
        return "RL"
    return spec.upper() if len(spec) <= 6 else spec


def run_policy(policy, sim: Simulator) -> Schedule:
    """Run `policy` to completion, on its compiled fast path when it has one."""
    fast = getattr(policy, "run", None)
    return fast(sim) if fast is not None else sim.run(policy)


def run_baseline(baseline, workload, sim_config, metric: str, seed: int = 0) -> float:
    """An agent's `Baseline` on one sequence (its own SimConfig if it has one): the metric's value."""
    config = baseline.sim or sim_config
    policy = baseline.make() if baseline.make is not None else get_heuristic(baseline.policy, seed)
    return summarize(run_policy(policy, Simulator(workload, config))).value(metric)
