"""A trained RLScheduler checkpoint as a policy with the heuristics' interface (`pick(sim)`).

Greedy decisions (the most probable visible job). The env configuration saved beside the run
(`schedrl_run.json`) supplies the normalisation constants, so the policy can be evaluated on a
trace other than the one it was trained on (RLScheduler Table VII).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from schedrl.envs.job_features import JobFeatures, ObservationBuilder
from schedrl.envs.keys import OBS_ACTION_MASK, OBS_JOBS
from schedrl.sim.simulator import Simulator

RUN_FILE = "schedrl_run.json"
MODULE_SUBPATH = Path("learner_group") / "learner" / "rl_module" / "default_policy"


def find_module_dir(path: Path) -> Path:
    """The RLModule directory inside an RLlib checkpoint (or the path itself if it is one)."""
    if (path / MODULE_SUBPATH).is_dir():
        return path / MODULE_SUBPATH
    if (path / "module_state.pt").exists() or (path / "class_and_ctor_args.pkl").exists():
        return path
    raise FileNotFoundError(f"{path} is not an RLlib checkpoint (no {MODULE_SUBPATH})")


def find_run_file(path: Path) -> Path:
    """`schedrl_run.json` of the run a checkpoint belongs to (searched upwards from it)."""
    for directory in [path, *path.parents]:
        if (directory / RUN_FILE).exists():
            return directory / RUN_FILE
    raise FileNotFoundError(f"no {RUN_FILE} above {path}: was it written by `schedrl train`?")


class CheckpointPolicy:
    """Greedy decisions of a trained RLModule; usable from `simulate`, `compare` and `evaluate`."""

    def __init__(self, module: RLModule, env_config: dict, name: str = "RL"):
        self.module = module
        self.env_config = env_config
        self.norm = JobFeatures.from_dict(env_config["norm"])
        self.name = name
        self._builder: ObservationBuilder | None = None
        self._for: Simulator | None = None

    def scores(self, jobs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Logits of the valid slots of one observation (the module's own forward, no RLlib wrappers)."""
        valid = int(mask.sum())
        with torch.inference_mode():
            if getattr(self.module, "ROW_WISE", False):
                # a row-wise kernel scores each job alone: score just the valid rows (decision latency)
                return self.module.job_scores(torch.from_numpy(jobs[:valid])).numpy()
            batch = {Columns.OBS: {OBS_JOBS: torch.from_numpy(jobs)[None], OBS_ACTION_MASK: torch.from_numpy(mask)[None]}}
            return self.module._forward(batch)[Columns.ACTION_DIST_INPUTS][0, :valid].numpy()

    def pick(self, sim: Simulator) -> int:
        if self._for is not sim:
            self._builder = ObservationBuilder(sim.workload, self.norm, len(sim.resources))
            self._for = sim
        jobs, mask, visible = self._builder.build(sim)
        return int(visible[int(np.argmax(self.scores(jobs, mask)))])


def load_policy(path: str | Path) -> CheckpointPolicy:
    """Load a checkpoint written by `schedrl train` (a Tune trial checkpoint or its RLModule dir)."""
    path = Path(path).expanduser().resolve()
    if not path.exists():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    run = json.loads(find_run_file(path).read_text())
    module = RLModule.from_checkpoint(str(find_module_dir(path)))
    module.eval()
    return CheckpointPolicy(module, run["env_config"], name=f"RL({path.name})")
