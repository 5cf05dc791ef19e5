"""The RLScheduler policy networks' computation, defined once and without ray (the kernel network and the Table IV
ablations), and their inference wrapper. Torch and numpy only.

`job_scores` and `queue_logits` are how every network reads the job matrix: the RLModules (modules/) build their `pi`
layers and compute with these functions. `QueueNetwork` is the policy part of a trained `JobQueueModule`: the same
`pi` layers under the same parameter names (rebuilt from the architecture), the same masked logits (`_forward`) and
per-row scores (`job_scores`), so `CheckpointPolicy` (policy.py) runs it as it runs the RLModule. The value network is
not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, build, describe, observation_shapes, spaces
from schedrl.agents.masking import mask_logits
from schedrl.agents.rlscheduler.keys import OBS_ACTION_MASK, OBS_JOBS

NETWORKS = {"KernelPolicyModule": "kernel", "FlatMLPPolicyModule": "flat", "LeNetPolicyModule": "lenet"}
"""RLModule class -> how its `pi` reads the job matrix (modules/kernel.py, modules/flat.py)."""


KINDS = ("kernel", "flat", "lenet")
"""How a network's `pi` reads the job matrix: per row (`kernel`), over the flattened matrix (`flat`, Table IV's MLPs)
or with the features as channels (`lenet`)."""


def job_scores(kind: str, pi: nn.Module, jobs: torch.Tensor) -> torch.Tensor:
    """Unmasked logits (B, slots) of a job matrix (B, slots, F); the kernel scores rows (N, F) alone too."""
    if kind == "kernel":
        return pi(jobs).squeeze(-1)
    if kind == "flat":
        return pi(jobs.flatten(start_dim=-2))
    # lenet: (B, slots, F) -> (B, F, slots): features are the conv channels, jobs the length
    return pi(jobs.transpose(-1, -2))


def queue_logits(kind: str, pi: nn.Module, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """Masked job-picking logits (`mask_logits`: finite, not -inf, or PPO's gradients turn NaN). The kernel scores only
    the valid rows: queues are mostly padding (identical logits where it matters, an order of magnitude less compute
    in training)."""
    if kind == "kernel":
        valid = obs[OBS_ACTION_MASK] > 0
        logits = obs[OBS_JOBS].new_zeros(valid.shape)
        logits[valid] = job_scores(kind, pi, obs[OBS_JOBS][valid])
    else:
        logits = job_scores(kind, pi, obs[OBS_JOBS])
    return mask_logits(logits, obs[OBS_ACTION_MASK])


class QueueNetwork(nn.Module):
    """Masked job-picking logits from `pi` over a (B, slots, F) job matrix (`queue_logits`, as the RLModule)."""

    def __init__(self, architecture: Mapping[str, Any]):
        super().__init__()
        self.architecture = dict(architecture)
        self.kind = architecture["network"]
        if self.kind not in KINDS:
            raise ValueError(f"unknown RLScheduler network {self.kind!r} (known: {', '.join(KINDS)})")
        self.observation_space = spaces(architecture["observation"])
        self.num_slots, self.num_features = self.observation_space.spaces[OBS_JOBS].shape
        self.ROW_WISE = self.kind == "kernel"
        self.pi = build(architecture["pi"])

    def job_scores(self, jobs: torch.Tensor) -> torch.Tensor:
        """Unmasked logits (B, slots) of a job matrix (B, slots, F); the kernel scores rows (N, F) alone too."""
        return job_scores(self.kind, self.pi, jobs)

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return {ACTION_DIST_INPUTS: queue_logits(self.kind, self.pi, batch[OBS])}


def architecture_of(module) -> dict[str, Any]:
    """What `QueueNetwork` needs of a trained RLScheduler RLModule, as JSON."""
    kind = NETWORKS.get(type(module).__name__)
    if kind is None:
        raise ValueError(f"{type(module).__name__} is not an RLScheduler policy module ({', '.join(NETWORKS)})")
    return {"network": kind, "observation": observation_shapes(module.observation_space), "pi": describe(module.pi)}


def inference_network(source) -> QueueNetwork:
    """The network of an exported `architecture` dict, or with the architecture of a trained RLModule."""
    return QueueNetwork(source if isinstance(source, Mapping) else architecture_of(source))
