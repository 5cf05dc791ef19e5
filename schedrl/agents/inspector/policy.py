"""A trained inspector as a simulator policy: `defer(sim)` rejects the base's proposal, `pick(sim)` starts it.

Greedy decisions (the more probable of accept and reject). The base heuristic and the normalisation come from the
run's env config, so the policy runs on any trace (with the same resources). `Simulator.run` asks `defer` first at
every scheduling point; where it answers True the simulator moves to the next event and asks again. `explain` says
why, for people: a distilled tree's tests with their values (the Slurm adapter's audit log, `schedrl slurm explain`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from schedrl.agents.baserule.policy import BaseRulePolicy
from schedrl.agents.inspector.config import make_base
from schedrl.agents.inspector.mask import RejectMask
from schedrl.agents.inspector.observation import Observer
from schedrl.sim.simulator import Simulator


class InspectorPolicy(BaseRulePolicy):
    """Greedy decisions of a trained inspector network (an RLModule or the ray-free `InspectorNetwork`: both have
    `pi`)."""

    def __init__(self, module, env_config: Mapping[str, Any], name: str | None = None):
        super().__init__(module, env_config, name)
        self.reject_mask = RejectMask.of(self.env_config)
        """Where the policy was trained to be asked (the env's mask: `InspectorEnvConfig.starvation_wait`,
        `queue_starvation_wait` and `reject_where`; no guard and `any` in records before them)."""
        self.starvation_wait = self.reject_mask.starvation_wait
        self.observer = Observer(self.norm, bool(self.env_config.get("history_features", False)))
        self._proposed: tuple[Simulator, int] | None = None
        self._base_for: Simulator | None = None
        self.totals = {"inspections": 0, "rejections": 0, "guarded": 0, "masked": 0}
        """Counts over every simulation this policy ran: points where a rejection was allowed, rejections, points the
        starvation guard accepted without asking the network, and points `reject_where="pays"` did (no other waiting
        job the proposal competes with) (`schedrl inspector score` reports them)."""

    def with_base(self, base: str) -> "InspectorPolicy":
        """This policy over another base rule (a heuristic's name): the same network or tree, guard and mask, asked
        about that rule's proposals (`schedrl inspector harm --site-base`: a site's own best rule)."""
        from dataclasses import is_dataclass, replace

        out = type(self)(self.module, {**self.env_config, "base": base}, self.name)
        record = getattr(self, "record", None)
        if record is not None:
            env = {**record.env_config, "base": base}
            out.record = replace(record, env_config=env) if is_dataclass(record) else \
                type(record)(**{**vars(record), "env_config": env})
        return out

    def _propose(self, sim: Simulator) -> int:
        if self._base_for is not sim:  # a fresh base per simulation (the `random` heuristic's stream restarts)
            self.base, self._base_for = make_base(self.base_name), sim
        return int(self.base.pick(sim))

    def reject_logit(self, features: np.ndarray) -> float:
        """Reject's logit minus accept's for one observation."""
        with torch.inference_mode():
            logits = self.module.pi(torch.from_numpy(features)[None].to(self.device))[0].cpu().numpy()
        return float(logits[1] - logits[0])

    def defer(self, sim: Simulator) -> bool:
        """True: reject the base's proposal (nothing starts until the next event); never where no event is left."""
        j = self._propose(sim)
        if not self.reject_mask.allows(sim, j):
            self.totals["guarded"] += int(sim.has_event and self.reject_mask.guarded(sim, j))
            self.totals["masked"] += int(sim.has_event and not self.reject_mask.guarded(sim, j))
            self._proposed = (sim, j)
            return False
        self.totals["inspections"] += 1
        if self.reject_logit(self.observer.build(sim, j)) <= 0.0:
            self._proposed = (sim, j)
            return False
        self.totals["rejections"] += 1
        self._proposed = None
        return True

    def explain(self, sim: Simulator, proposal: int) -> dict[str, Any]:
        """Why `proposal` (the base's) is accepted or rejected at this point, changing nothing: `decide` (accept or
        reject), `by` (`tree`: `path` holds its tests with this point's values, as `schedrl zoo show` prints them;
        `network`: no path; `guard` or `mask`: a rejection is not allowed here, `path` says why)."""
        from schedrl.agents.inspector.tree import ACCEPT, REJECT, Units, duration

        j = int(proposal)
        if not self.reject_mask.allows(sim, j):
            if self.reject_mask.guarded(sim, j):
                if self.reject_mask.queue_guarded(sim):
                    oldest = sim.now - float(sim.state.submit[sim.queue[0]])
                    why = (f"a waiting job has waited {duration(oldest)}, past the policy's queue guard "
                           f"({duration(self.reject_mask.queue_wait)}): accepted without asking")
                else:
                    why = (f"it has waited {duration(sim.now - float(sim.state.submit[j]))}, past the policy's "
                           f"starvation guard ({duration(self.starvation_wait)}): accepted without asking")
                return {"decide": ACCEPT, "by": "guard", "path": [why]}
            why = ("no job is running: a rejection would wait for nothing" if not sim.has_event else
                   f"a rejection cannot pay here (the policy rejects only where {self.reject_mask.where!r} allows)")
            return {"decide": ACCEPT, "by": "mask", "path": [why + ": accepted without asking"]}
        x = self.observer.build(sim, j)
        tree = getattr(self.module, "tree", None)
        if tree is None:
            return {"decide": REJECT if self.reject_logit(x) > 0.0 else ACCEPT, "by": "network", "path": []}
        return {"decide": REJECT if tree.decide(x) else ACCEPT, "by": "tree",
                "path": tree.path_text(x, Units(float(self.norm.time_scale)))}

    def pick(self, sim: Simulator) -> int:
        """The base's proposal at this point (the one `defer` just accepted)."""
        proposed, self._proposed = self._proposed, None
        if proposed is not None and proposed[0] is sim:
            return proposed[1]
        return self._propose(sim)
