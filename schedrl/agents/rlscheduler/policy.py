"""A trained RLScheduler module as a policy with the heuristics' interface (`pick(sim)`).

Greedy decisions (the most probable visible job). The env configuration of the run record supplies
the normalisation constants, so the policy can be evaluated on a trace other than the one it was
trained on (RLScheduler Table VII).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from schedrl.agents.cloning import module_device
from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS
from schedrl.agents.rlscheduler.observation import JobFeatures, ObservationBuilder, n_features
from schedrl.agents.rlscheduler.keys import OBS_ACTION_MASK, OBS_JOBS
from schedrl.sim.simulator import Simulator

if TYPE_CHECKING:
    from ray.rllib.core.rl_module.rl_module import RLModule


class CheckpointPolicy:
    """Greedy decisions of a trained RLModule; usable from `simulate`, `compare` and `evaluate`."""

    def __init__(self, module: RLModule, env_config: dict, name: str = "RL"):
        self.module = module
        # a learner's module is on its GPU (the warm start scores its clones there); a checkpoint's on the CPU
        self.device = module_device(module)
        self.env_config = env_config
        self.norm = JobFeatures.from_dict(env_config["norm"])
        self.key_features = tuple(env_config.get("key_features", ()))  # runs before key features have none
        self.name = name
        self._builder: ObservationBuilder | None = None
        self._for: Simulator | None = None

    def scores(self, jobs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Logits of the valid slots of one observation (the module's own forward, no RLlib wrappers)."""
        valid = int(mask.sum())
        with torch.inference_mode():
            if getattr(self.module, "ROW_WISE", False):
                # a row-wise kernel scores each job alone: score just the valid rows (decision latency)
                return self.module.job_scores(torch.from_numpy(jobs[:valid]).to(self.device)).cpu().numpy()
            batch = {OBS: {OBS_JOBS: torch.from_numpy(jobs)[None].to(self.device),
                                   OBS_ACTION_MASK: torch.from_numpy(mask)[None].to(self.device)}}
            return self.module._forward(batch)[ACTION_DIST_INPUTS][0, :valid].cpu().numpy()

    def pick(self, sim: Simulator) -> int:
        jobs, mask, visible = self.observe(sim)
        return int(visible[int(np.argmax(self.scores(jobs, mask)))])

    def observe(self, sim: Simulator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(job matrix, mask, visible job indices) of `sim` now, as the module sees them (ValueError, one line, on a
        machine with other resources than the module's)."""
        if self._for is not sim:
            expected = getattr(getattr(self.module, "observation_space", None), "spaces", {}).get(OBS_JOBS)
            keys = len(self.key_features)
            if expected is not None and expected.shape[-1] != n_features(len(sim.resources), keys):
                trained = (expected.shape[-1] - n_features(1, keys)) // 2 + 1
                raise ValueError(f"{self.name} was trained on a machine with {trained} resource(s); this simulation "
                                 f"has {len(sim.resources)} ({', '.join(sim.resources)}): evaluate it on workloads "
                                 "with the same resources (no --augment unless it was trained with one)")
            self._builder = ObservationBuilder(sim.workload, self.norm, len(sim.resources), self.key_features)
            self._for = sim
        return self._builder.build(sim)
