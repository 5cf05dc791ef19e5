"""`schedrl.load_policy`: any policy by the names the commands take, with both of the ways to use it from Python.

`pick(sim)` chooses a job in a simulator, for every kind (a rule, a tuned rule, a planner, a learned policy), as
`compare`, `evaluate` and the leaderboard run it. `act(observation)` is a learned policy's greedy action on an
observation of the Gymnasium env it was trained on (`gymnasium.make(policy.env_id, **policy.env_config)`), computed
by its ray-free network (`schedrl.agents.acting`): a checkpoint's RLModule is turned into that network first, as
`schedrl export` does, so neither form needs ray.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

KINDS = ("rule", "tuned rule", "planner", "learned", "outside policy")
"""What `Policy.kind` says."""


class Policy:
    """A loaded policy: `pick(sim)` for every kind, `act(observation)` for a learned one; every other attribute is
    the underlying policy's (`record`, `backfill`, ... so the simulator and `compare` treat it as they treat it)."""

    def __init__(self, policy, kind: str, network=None, agent=None):
        self.policy = policy
        self.kind = kind
        self.network = network
        """The ray-free torch network `act` runs (None for a rule or a planner)."""
        self._agent = agent

    def __getattr__(self, name: str):
        if name in ("policy", "__setstate__"):  # not set yet (copy, pickle): no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self.policy, name)

    def __repr__(self) -> str:
        return f"<schedrl policy {self.name!r}: {self.kind}{f', env {self.env_id}' if self.env_id else ''}>"

    @property
    def name(self) -> str:
        return str(getattr(self.policy, "name", None) or type(self.policy).__name__)

    @property
    def env_id(self) -> str | None:
        """The Gymnasium id of the env a learned policy was trained on (None for the others)."""
        return self._agent.env_id if self._agent is not None else None

    @property
    def env_config(self) -> dict[str, Any]:
        """The keyword arguments that make its training env (`gymnasium.make(env_id, **env_config)`), the
        normalisation learned from its data included; {} for the others."""
        record = getattr(self.policy, "record", None)
        return dict(record.env_config) if self._agent is not None and record is not None else {}

    def pick(self, sim) -> int:
        """The job (an index in `sim`'s workload) to start next, of those `sim` shows waiting."""
        pick = getattr(self.policy, "pick", None)
        if pick is None:
            raise ValueError(f"{self.name} runs on the discrete-time cluster (`schedrl.dtsim`): it decides with "
                             "act(sim) there, or act(observation) on its env's observation; it has no pick(sim)")
        return pick(sim)

    def act(self, observation):
        """The greedy action on one observation of the policy's env (a dict of arrays, as `env.reset` and `env.step`
        return it). On the discrete-time cluster a policy's `act(sim)` of a `schedrl.dtsim` simulator works as
        before."""
        if not isinstance(observation, Mapping):
            own = getattr(self.policy, "act", None)
            if own is not None:  # RLSchert's and DeepRM's decision on the discrete-time cluster
                return own(observation)
        if self.network is None:
            raise ValueError(f"{self.name} is a {self.kind}: it has no network to act on an env observation; "
                             "pick(sim) chooses its job in a simulator")
        from schedrl.agents.acting import greedy_action

        return greedy_action(self.network, observation, self.name)


def load_policy(spec, name: str | None = None) -> Policy:
    """A policy by any name the commands take: a heuristic (`f1`), `tuned:FILE`, `plan:BASE[:key=value...]`,
    `zoo:NAME` (a shipped policy or tuned rule), `checkpoint:PATH` or a checkpoint or exported directory, or an
    object with `pick(sim)` (an outside policy). A ValueError (FileNotFoundError for a missing checkpoint) names what
    could not be loaded."""
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import ZOO_PREFIX, load_policy as load_learned
    from schedrl.eval.policies import CHECKPOINT_PREFIX, PLAN_PREFIX, TUNED_PREFIX, resolve_policy
    from schedrl.zoo.store import is_exported

    if isinstance(spec, Policy):
        return spec
    text = spec.strip() if isinstance(spec, str) else None
    named = text is not None and text.startswith((ZOO_PREFIX, TUNED_PREFIX, PLAN_PREFIX))
    if text is not None and (text.startswith(CHECKPOINT_PREFIX) or not named and Path(text).expanduser().is_dir()):
        path = text[len(CHECKPOINT_PREFIX):] if text.startswith(CHECKPOINT_PREFIX) else text
        inner = load_learned(path, name)
        agent = get_agent(inner.record.agent)
        return Policy(inner, "learned", inner.module if is_exported(path) else _network(agent, inner), agent)
    inner = resolve_policy(spec)
    if name is not None:
        inner.name = name
    agent_name = getattr(getattr(inner, "record", None), "agent", None)  # a tuned rule's record is its file's dict
    if text is not None and text.startswith(ZOO_PREFIX) and agent_name is not None:
        agent = get_agent(agent_name)
        return Policy(inner, "learned", inner.module, agent)
    if text is not None and text.startswith(PLAN_PREFIX):
        return Policy(inner, "planner")
    if text is None:
        return Policy(inner, "outside policy")
    tuned = text.startswith(TUNED_PREFIX) or text.startswith(ZOO_PREFIX)
    return Policy(inner, "tuned rule" if tuned else "rule")


def _network(agent, policy):
    """A checkpoint's ray-free network, or None where its agent has none (`Exportable`)."""
    from schedrl.agents.acting import network_of
    from schedrl.agents.base import Exportable

    if not isinstance(agent, Exportable):
        return None
    return network_of(agent, policy.record, policy.module)
