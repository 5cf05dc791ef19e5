"""Policies for evaluation: names (`sjf`, `checkpoint:PATH`, `tuned:FILE`, `zoo:NAME`), objects, and outside models.

Anything with `pick(sim)` is a policy (`schedrl.agents.base.SchedulingPolicy`); `resolve_policy`
turns a spec string into one: a heuristic by name, a rule fitted to a trace (`schedrl tuned fit`,
`schedrl.heuristics.tuned`), or any agent's trained checkpoint through its run record
(`schedrl.agents.checkpoint.load_policy`, which also loads `zoo:NAME`). `FunctionPolicy` makes one of any
observation -> action callable (an SB3 model's `predict`, a plain function), so models trained
outside schedrl are scored on our sequences with our metrics (`examples/sb3_maskable_ppo.py`).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from schedrl.agents.checkpoint import ZOO_PREFIX
from schedrl.heuristics import HEURISTICS, get_heuristic
from schedrl.scenarios.scoring import baseline_metrics, run_policy  # noqa: F401  (re-exported: callers read them here)

CHECKPOINT_PREFIX = "checkpoint:"
TUNED_PREFIX = "tuned:"
PLAN_PREFIX = "plan:"


def resolve_policy(spec, seed: int = 0):
    """A heuristic by name, a fitted rule from `tuned:FILE`, a trained policy from `checkpoint:PATH` (loads torch
    lazily) or from schedrl's zoo (`zoo:NAME`), or a policy object."""
    if not isinstance(spec, str):
        if not callable(getattr(spec, "pick", None)):
            raise ValueError(f"{spec!r} is not a policy: give a name, checkpoint:PATH, or an object with pick(sim)")
        return spec
    spec = spec.strip()
    if spec.startswith(CHECKPOINT_PREFIX):
        from schedrl.agents.checkpoint import load_policy

        return load_policy(spec[len(CHECKPOINT_PREFIX):])
    if spec.startswith(ZOO_PREFIX):  # a policy of schedrl's zoo (`schedrl zoo list`), loaded without ray
        from schedrl.agents.checkpoint import CheckpointError, load_policy
        from schedrl.heuristics.tuned import load_rule
        from schedrl.zoo.manifest import rule_file
        from schedrl.zoo.store import ZooError

        try:
            rule = rule_file(spec[len(ZOO_PREFIX):])
        except ZooError as e:
            raise CheckpointError(str(e)) from None
        if rule is not None:  # a tuned rule the zoo keeps: its JSON file, checked against the manifest's sha256
            return load_rule(rule)
        return load_policy(spec)
    if spec.startswith(TUNED_PREFIX):
        from schedrl.heuristics.tuned import load_rule

        return load_rule(spec[len(TUNED_PREFIX):])
    if spec.startswith(PLAN_PREFIX):  # the inspector's online planning baseline (`schedrl.eval.planning`)
        from schedrl.eval.planning import from_spec

        return from_spec(spec)
    if spec.lower() not in HEURISTICS:
        import difflib

        close = difflib.get_close_matches(spec.lower(), list(HEURISTICS), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ValueError(f"unknown policy {spec!r}{hint}: use a heuristic ({', '.join(HEURISTICS)}), tuned:FILE, "
                         "checkpoint:PATH, zoo:NAME or plan:BASE[:key=value...]")
    return get_heuristic(spec, seed)


def policy_label(spec) -> str:
    """Short column label of a policy spec."""
    if not isinstance(spec, str):
        return str(getattr(spec, "name", type(spec).__name__))
    if spec.startswith(CHECKPOINT_PREFIX + ZOO_PREFIX):  # `evaluate zoo:NAME`'s column: the policy's name
        return spec[len(CHECKPOINT_PREFIX + ZOO_PREFIX):]
    if spec.startswith(CHECKPOINT_PREFIX):
        return "RL"
    if spec.startswith(ZOO_PREFIX):
        return spec[len(ZOO_PREFIX):]
    return spec.upper() if len(spec) <= 6 else spec




def trained_labels(paths, labels) -> dict[str, str]:
    """The names tables show for trained columns `labels` loaded from `paths`: a zoo policy's name (`zoo:NAME`);
    a checkpoint directory keeps its column label (`RL`, `inspector#2`), having no name of its own."""
    return {label: path[len(ZOO_PREFIX):] for path, label in zip(paths, labels)
            if isinstance(path, str) and path.startswith(ZOO_PREFIX)}


class FunctionPolicy:
    """An observation -> action callable as a policy, seeing the simulator through an env's observation.

    `act(observation)` returns an action (a slot of the env's action space); an `(action, state)` pair,
    as SB3's `model.predict` returns, is taken as its action. `observe(sim)` returns `(observation,
    jobs)`: the observation the model was trained on and the job (index in `sim`) behind each slot, as
    an env's `observation_of` does (`FunctionPolicy.for_env`). A masked or out-of-range action raises
    `ValueError` naming the policy, never a silent substitute.
    """

    def __init__(self, act: Callable[[Any], Any], observe: Callable[[Any], tuple[Any, np.ndarray]],
                 name: str | None = None):
        if not callable(act) or not callable(observe):
            raise TypeError("FunctionPolicy needs callables act(observation) and observe(sim)")
        self.act = act
        self.observe = observe
        owner = getattr(act, "__self__", None)  # a bound method such as model.predict: name the model
        self.name = name or (type(owner).__name__ if owner is not None else getattr(act, "__name__", "function"))

    @classmethod
    def for_env(cls, act: Callable[[Any], Any], env, name: str | None = None) -> "FunctionPolicy":
        """`act` observing the simulator as `env` (a schedrl env, wrapped or not) observes it."""
        base = getattr(env, "unwrapped", env)
        observe = getattr(base, "observation_of", None)
        if observe is None:
            raise ValueError(f"{type(base).__name__} has no observation_of(sim): FunctionPolicy.for_env needs a "
                             "schedrl env that can observe any simulator (RLScheduler-v0, Linear-v0)")
        return cls(act, observe, name)

    def pick(self, sim) -> int:
        observation, jobs = self.observe(sim)
        out = self.act(observation)
        if isinstance(out, tuple) and len(out) == 2:
            out = out[0]
        action = np.asarray(out).reshape(-1)
        if action.size != 1 or action.dtype.kind not in "iub":
            raise ValueError(f"{self.name} returned {out!r}: expected one integer action")
        a = int(action[0])
        mask = observation.get("action_mask") if isinstance(observation, dict) else None
        if not 0 <= a < len(jobs) or (mask is not None and mask[a] == 0):
            raise ValueError(f"{self.name} chose action {a}, which is masked: only slots 0..{len(jobs) - 1} hold "
                             "waiting jobs")
        return int(jobs[a])
