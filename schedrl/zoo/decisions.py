"""Every decision a policy makes, logged, so two policies can be shown to schedule identically.

An export is checked this way (the exported network against the checkpoint's RLModule, and half precision against
full) on whole episodes: the run's validation sequences.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedrl.zoo.card import DECISIONS, machine_of


class DecisionLog:
    """Wraps a policy's decision methods in place: each answer is logged as (method, answer); the machine of the
    first simulation is kept, and how many picks had a choice (more than one job waiting, the event simulator)."""

    def __init__(self, policy):
        self.calls: list[tuple[str, str]] = []
        self.machine: dict[str, float] | None = None
        self.choices = 0
        for name in DECISIONS:
            method = getattr(policy, name, None)
            if callable(method):
                setattr(policy, name, self._logged(name, method))

    def _logged(self, name: str, method):
        def decide(sim, *args, **kwargs):
            if self.machine is None:
                self.machine = machine_of(sim)
            self.choices += len(getattr(sim, "queue", ())) > 1
            answer = method(sim, *args, **kwargs)
            self.calls.append((name, repr(answer)))
            return answer
        return decide


def first_difference(a: DecisionLog, b: DecisionLog) -> int | None:
    """The index of the first decision where the logs differ (one running longer counts), or None."""
    for i, (x, y) in enumerate(zip(a.calls, b.calls)):
        if x != y:
            return i
    return None if len(a.calls) == len(b.calls) else min(len(a.calls), len(b.calls))


def logged(policy, run: Callable[[Any], Any]) -> tuple[DecisionLog, Any]:
    """The decisions `policy` makes in `run` (whole episodes: policy -> its scores), and the scores."""
    log = DecisionLog(policy)
    return log, run(policy)
