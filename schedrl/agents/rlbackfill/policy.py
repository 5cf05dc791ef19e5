"""A trained learned-backfilling network as a simulator policy: `pick(sim)` is the base heuristic's, `backfill(sim)`
the network's greedy choice among the candidates (or None, "start none", where the run allowed `skip`).

The decision points are the env's (`decisions`): a single candidate without `skip` starts without asking the network.
The base heuristic, the normalisation, `slots` and `skip` come from the run's env config, so the policy runs on any
trace with the same resources. It must run under `backfill_choice="policy"` (the run record's `SimConfig`); under
first-fit semantics the simulator never asks `backfill`, and the policy schedules as its base with EASY.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from schedrl.agents.baserule.policy import BaseRulePolicy
from schedrl.agents.rlbackfill.decisions import choices, forced, next_decision
from schedrl.agents.rlbackfill.inference import rows_with_context
from schedrl.agents.rlbackfill.observation import Observer
from schedrl.sim.simulator import Simulator


class RLBackfillPolicy(BaseRulePolicy):
    """Greedy decisions of a trained network (the RLModule or the ray-free `RLBackfillNetwork`: both have `kernel`)."""

    label = "RL-BF"

    def __init__(self, module, env_config: Mapping[str, Any], name: str | None = None):
        super().__init__(module, env_config, name)
        self.slots = int(self.env_config.get("slots", 32))
        self.skip = bool(self.env_config.get("skip", False))
        self.observer = Observer(self.norm, self.slots, self.skip)

    def pick(self, sim: Simulator) -> int:
        """The base heuristic's pick (a heuristic keeps no state between simulations: `random`'s stream position is
        the simulator's)."""
        return int(self.base.pick(sim))

    def run(self, sim: Simulator):
        """Schedule the whole workload: the base's picks and the forced backfills in compiled code, `backfill(sim)` at
        every choice (the env's decision points); the same schedule as `sim.run(self)`."""
        while next_decision(sim, self.base, self.skip, self.slots) is not None:
            sim.backfill(self.backfill(sim))
        return sim.schedule()

    def scores(self, obs: Mapping[str, np.ndarray]) -> np.ndarray:
        """The kernel's score of every row of one observation (unmasked)."""
        with torch.inference_mode():
            rows = rows_with_context(torch.from_numpy(obs["jobs"]), torch.from_numpy(obs["context"]))
            return self.module.kernel(rows.to(self.device)).squeeze(-1).cpu().numpy()

    def choose(self, sim: Simulator, candidates: np.ndarray) -> int:
        """The greedy action (row index) at a decision with `candidates`."""
        obs = self.observer.build(sim, candidates)
        scores = self.scores(obs)
        scores[obs["action_mask"] == 0] = -np.inf
        return int(np.argmax(scores))

    def backfill(self, sim: Simulator) -> int | None:
        """The candidate to start now, or None to start none before the next event (only where `skip` was trained)."""
        cands = choices(sim, self.slots)
        job = forced(cands, self.skip)
        if job is not None:
            return job
        action = self.choose(sim, cands)
        return None if action == self.slots else int(cands[action])
