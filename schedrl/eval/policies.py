"""Turn a policy name (`sjf`, `checkpoint:PATH`) into an object the simulator can run."""

from __future__ import annotations

from schedrl.heuristics import HEURISTICS, get_heuristic
from schedrl.sim.simulator import Schedule, Simulator

CHECKPOINT_PREFIX = "checkpoint:"


def resolve_policy(spec: str, seed: int = 0):
    """A heuristic by name, or a trained policy from `checkpoint:PATH` (loads torch lazily)."""
    spec = spec.strip()
    if spec.startswith(CHECKPOINT_PREFIX):
        from schedrl.models.checkpoint_policy import load_policy

        return load_policy(spec[len(CHECKPOINT_PREFIX):])
    if spec.lower() not in HEURISTICS:
        raise ValueError(f"unknown policy {spec!r}: use a heuristic ({', '.join(HEURISTICS)}) or checkpoint:PATH")
    return get_heuristic(spec, seed)


def policy_label(spec: str) -> str:
    """Short column label of a policy spec."""
    if spec.startswith(CHECKPOINT_PREFIX):
        return "RL"
    return spec.upper() if len(spec) <= 6 else spec


def run_policy(policy, sim: Simulator) -> Schedule:
    """Run `policy` to completion, on its compiled fast path when it has one."""
    fast = getattr(policy, "run", None)
    return fast(sim) if fast is not None else sim.run(policy)
