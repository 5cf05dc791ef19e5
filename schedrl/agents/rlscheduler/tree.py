"""The RLScheduler kernel as a regression tree over one job's features: its priority key, readable (`schedrl distill`).

The kernel scores each visible job from that job's row of the observation alone (`observation.FEATURES`) and the
policy runs the job with the highest score. A distilled tree (`distill.py`) predicts a score from the same row:
`schedrl.agents.cart.RegressionTree`, whose leaves hold the priority. `tree_network` is the tree in place of the
kernel network (weights.safetensors holds its arrays, policy.json its readable form), so `CheckpointPolicy` runs it
as it runs the kernel: the job with the highest tree value, ties to the first in the queue (submit order), which is
the kernel's own tie rule (`numpy.argmax` over the visible jobs in queue order). `Units` prints each threshold in
the feature's unit ("the job's requested time > 2 h 10 min").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedrl.agents.cart import RegressionTree, TreeError, tree_module
from schedrl.agents.rlscheduler.observation import FEATURES, JobFeatures
from schedrl.duration import format_duration

NETWORK = "kernel-tree"
"""The `network` label of an exported kernel tree's architecture."""
TARGETS = ("rank", "score", "centred")
"""What a tree's leaves predict: the job's rank share among the visible jobs by the kernel's scores (1: its first
choice, 0: its last), the kernel's score (its logit), or the score less the mean score of the decision's visible
jobs."""

_TIME, _SHARE, _ID, _FLAG, _KEY = "time", "share", "id", "flag", "key"
MEANINGS: dict[str, tuple[str, str]] = {
    "wait": (_TIME, "the job's wait so far"),
    "requested_time": (_TIME, "the job's requested time"),
    "requested_procs": (_SHARE, "the job's share of the machine"),
    "user": (_ID, "the job's user id"),
    "group": (_ID, "the job's group id"),
    "app": (_ID, "the job's executable id"),
    "can_start_now": (_FLAG, "the job fits now"),
    "free_procs": (_SHARE, "free share of the machine"),
}
"""Each per-job feature's unit kind and wording (`tests/agents/rlscheduler/test_kernel_tree.py` checks all are here);
an extra resource's two columns and a key feature's column are worded by `meaning`."""


def feature_names(resources: Sequence[str], key_features: Sequence[str] = ()) -> tuple[str, ...]:
    """The observation's columns, named: `observation.FEATURES`, then each extra resource's request and free share,
    then each key feature (`key_f1`: 1 / (1 + the job's rank under F1))."""
    extra = tuple(f"{r}_{part}" for r in list(resources)[1:] for part in ("request", "free"))
    return FEATURES + extra + tuple(f"key_{k}" for k in key_features)


def meaning(name: str) -> tuple[str, str]:
    if name in MEANINGS:
        return MEANINGS[name]
    if name.startswith("key_"):
        return _KEY, f"{name[4:].upper()}'s rank of the job among the visible ones (0: its first choice)"
    if name.endswith("_request"):
        return _SHARE, f"the job's share of the machine's {name[:-8]}"
    if name.endswith("_free"):
        return _SHARE, f"free share of the machine's {name[:-5]}"
    return "", name


@dataclass(frozen=True)
class Units:
    """The policy's normalisation (`JobFeatures`), to print thresholds in seconds, shares and ids."""

    norm: JobFeatures

    def value(self, name: str, v: float) -> str:
        kind = meaning(name)[0]
        if kind == _TIME:
            v = min(max(v, 0.0), 1.0)
            scale = self.norm.time_scale
            return format_duration(math.expm1(v * math.log1p(scale)) if self.norm.log_times else v * scale)
        if kind == _SHARE:
            return f"{100 * v:.1f}%"
        if kind == _ID:
            return f"{v * getattr(self.norm, f'{name}_scale'):.0f}"
        if kind == _KEY:
            return f"{1.0 / v - 1.0:.1f}" if v > 0 else "unranked"
        return f"{v:.4g}"

    def condition(self, name: str, threshold: float, above: bool) -> str:
        kind, words = meaning(name)
        if kind == _FLAG:
            return words if above else words.replace(" fits ", " does not fit ")
        if kind == _KEY:  # the column is 1 / (1 + rank): above the threshold is a better (smaller) rank
            return f"{words} {'<' if above else '>='} {self.value(name, threshold)}"
        return f"{words} {'>' if above else '<='} {self.value(name, threshold)}"


def leaf_text(tree: RegressionTree, node: int) -> str:
    return f"priority {float(tree.value[node]):.2f} ({float(tree.samples[node]):,.0f} jobs)"


def text(tree: RegressionTree, units: Units) -> str:
    """The tree as nested if/else lines in the features' units, each leaf its priority and how many labelled jobs
    reached it."""
    return tree.text(units.condition, lambda node: leaf_text(tree, node))


def check_architecture(architecture: Mapping[str, Any], where: str) -> RegressionTree:
    """The tree of an exported kernel tree's architecture; TreeError (one line) for anything else."""
    features = architecture.get("features")
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise TreeError(f"{where}: architecture.features must be the list of the policy's feature names")
    if architecture.get("target") not in TARGETS:
        raise TreeError(f"{where}: architecture.target must be one of {', '.join(TARGETS)}; got "
                        f"{architecture.get('target')!r}")
    observation = architecture.get("observation")
    jobs = observation.get("jobs") if isinstance(observation, Mapping) else None
    if not isinstance(jobs, list) or len(jobs) != 2 or jobs[1] != len(features):
        raise TreeError(f"{where}: architecture.observation.jobs must be [slots, {len(features)}] (one column per "
                        "feature)")
    return RegressionTree.from_dict(architecture.get("tree"), features, where)


def tree_network(architecture: Mapping[str, Any], where: str = "the tree"):
    """The tree of an exported architecture as a torch module with the kernel network's interface (`job_scores` of
    rows, masked logits from `_forward`, `ROW_WISE`), so `CheckpointPolicy`, the export and the zoo run it as they
    run the kernel."""
    import torch

    from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, spaces
    from schedrl.agents.masking import mask_logits
    from schedrl.agents.rlscheduler.keys import OBS_ACTION_MASK, OBS_JOBS

    tree = check_architecture(architecture, where)

    class TreeKernel(tree_module(tree, architecture, where)):
        ROW_WISE = True

        def __init__(self):
            super().__init__()
            self.observation_space = spaces(architecture["observation"])

        def job_scores(self, jobs):
            rows = jobs.detach().cpu().numpy()
            flat = rows.reshape(-1, rows.shape[-1])
            return torch.from_numpy(tree.predict(flat).astype(np.float32).reshape(rows.shape[:-1]))

        def _forward(self, batch, **kwargs):
            obs = batch[OBS]
            return {ACTION_DIST_INPUTS: mask_logits(self.job_scores(obs[OBS_JOBS]), obs[OBS_ACTION_MASK])}

    return TreeKernel()


__all__ = ["MEANINGS", "NETWORK", "TARGETS", "Units", "feature_names", "text", "tree_network"]
