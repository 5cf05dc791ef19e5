"""PPO after imitation, kept near the student (issue 55): RLlib's PPO learner with one more term in the loss,
`anchor` x KL(student || policy) on each batch's observations, the student being the policy network as the teacher's
warm start left it, frozen (`freeze_anchor`).

Without the term PPO from a fitted student drifted away from it within iterations (docs/experiments/
inspector-teacher.md, screen 1: an untrained value network's advantages and nothing holding the policy where the
teacher put it); with it, a rejection the student never made must pay for itself in PPO's advantage before the policy
makes it. The anchor lives on the learner and is not checkpointed: a run resumed from a checkpoint continues as plain
PPO (said once, in the trial's log).

Imports ray and torch: `agent.py` imports this module only inside the functions that build or warm-start a run.
"""

from __future__ import annotations

import copy
import logging

import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns

from schedrl.agents.inspector.env import OBS_ACTION_MASK, OBS_FEATURES
from schedrl.agents.masking import mask_logits

ANCHOR_KEY = "inspector_anchor"
"""`learner_config_dict` key of the KL coefficient (`InspectorSettings.anchor`)."""
ANCHOR_KL = "anchor_kl"
"""The learner's metric: the batch's mean KL(student || policy)."""


def anchor_kl(student_logits: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """KL(student || policy) per observation, from two sets of masked logits (a masked action has probability 0
    under both and adds nothing)."""
    p = torch.softmax(student_logits, dim=-1)
    return (p * (torch.log_softmax(student_logits, dim=-1) - torch.log_softmax(logits, dim=-1))).sum(-1)


class AnchoredPPOLearner(PPOTorchLearner):
    """PPO's loss plus `learner_config_dict[ANCHOR_KEY]` x the mean KL from the frozen student (`anchor` set by
    `freeze_anchor`; without it, plain PPO)."""

    anchor: torch.nn.Module | None = None
    _warned = False

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        loss = super().compute_loss_for_module(module_id=module_id, config=config, batch=batch, fwd_out=fwd_out)
        coeff = float((config.learner_config_dict or {}).get(ANCHOR_KEY) or 0.0)
        if coeff <= 0:
            return loss
        if self.anchor is None:
            if not self._warned:
                logging.getLogger(__name__).warning("no frozen student on this learner (a resumed run): plain PPO")
                self._warned = True
            return loss
        obs = batch[Columns.OBS]
        with torch.no_grad():
            student = mask_logits(self.anchor(obs[OBS_FEATURES]), obs[OBS_ACTION_MASK])
        kl = anchor_kl(student, fwd_out[Columns.ACTION_DIST_INPUTS]).mean()
        self.metrics.log_dict({ANCHOR_KL: kl.detach()}, key=module_id, window=1)
        return loss + coeff * kl


def freeze(module) -> torch.nn.Module:
    """A frozen copy of `module`'s policy network (`pi`)."""
    anchor = copy.deepcopy(module.pi)
    for p in anchor.parameters():
        p.requires_grad_(False)
    return anchor.eval()


def freeze_anchor(algorithm) -> None:
    """On every learner: the module's policy network as it is now (after the warm start) becomes the anchor."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    def set_anchor(learner):
        learner.anchor = freeze(learner.module[DEFAULT_MODULE_ID].unwrapped())
        return True

    for result in algorithm.learner_group.foreach_learner(set_anchor):
        result.get()


__all__ = ["ANCHOR_KEY", "AnchoredPPOLearner", "anchor_kl", "freeze", "freeze_anchor"]
