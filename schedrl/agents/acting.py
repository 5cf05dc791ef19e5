"""A learned policy acting on its env's observation: the greedy action of its ray-free network (torch, never ray).

A policy's `pick(sim)` builds the observation itself from a simulator; `act` answers the question an RL user asks
first: given the observation `gymnasium.make(env_id, **env_config)` emitted, which action? Every agent's exported
network (`inference_module`) takes that observation as it is, batched: the env and the network share the agent's
observation keys and shapes (the architecture's `observation`), checked here before the forward pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS, QF_PREDS

MASK = "action_mask"
"""The key of the valid-action mask in every agent's observation."""


def network_of(agent, record, module) -> torch.nn.Module:
    """The ray-free network of a checkpoint's trained RLModule, its weights loaded (what `schedrl export` stores)."""
    from schedrl.agents.checkpoint import _exportable

    net = _exportable(agent).inference_module(record, module)
    state = module.state_dict()
    net.load_state_dict({k: state[k] for k in net.state_dict()}, strict=True)
    return net.eval()


def batched(observation: Mapping[str, Any], shapes: Mapping[str, Any] | None, who: str) -> dict[str, torch.Tensor]:
    """One observation as a batch of one (float32 tensors); a missing part or a shape other than the network's
    (`shapes`, the architecture's `observation`) is a ValueError naming it."""
    if not isinstance(observation, Mapping):
        raise ValueError(f"{who} acts on its env's observation (a dict of arrays), not on a {type(observation).__name__}")
    if MASK not in observation:
        raise ValueError(f"{who}: the observation has no {MASK!r} (its keys: {', '.join(observation)})")
    out = {}
    for key, value in observation.items():
        array = np.asarray(value, dtype=np.float32)
        if shapes is not None and key in shapes and tuple(array.shape) != tuple(shapes[key]):
            raise ValueError(f"{who}: observation part {key!r} has shape {tuple(array.shape)}; its network takes "
                             f"{tuple(shapes[key])} (the env of its run: gymnasium.make(policy.env_id, "
                             "**policy.env_config))")
        out[key] = torch.from_numpy(array)[None]
    if shapes is not None:
        missing = [key for key in shapes if key not in out]
        if missing:
            raise ValueError(f"{who}: the observation lacks {', '.join(map(repr, missing))}, which its network reads")
    return out


def action_scores(net: torch.nn.Module, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """(1, actions) scores of a batched observation, the highest the greedy action: the network's logits (PPO and
    policy-gradient agents), Q values (DRAS-DQL) or DFP objectives (MRSch), as its agent's own policy reads them."""
    if hasattr(net, "compute_q_values"):
        return net.compute_q_values({OBS: obs})[QF_PREDS]
    if hasattr(net, "_forward"):
        return net._forward({OBS: obs})[ACTION_DIST_INPUTS]
    if hasattr(net, "forward_inference"):
        return net.forward_inference({OBS: obs})[ACTION_DIST_INPUTS]
    if hasattr(net, "scores"):
        return net.scores(obs)
    raise ValueError(f"{type(net).__name__}: no known way to score an observation")


def greedy_action(net: torch.nn.Module, observation: Mapping[str, Any], who: str = "the policy") -> int:
    """The valid action `net` scores highest on one observation of its env."""
    shapes = getattr(net, "architecture", {}).get("observation")
    obs = batched(observation, shapes, who)
    with torch.inference_mode():
        scores = action_scores(net, obs)[0].float().numpy()
    mask = obs[MASK][0].numpy() > 0
    if scores.shape != mask.shape:
        raise ValueError(f"{who}: its network scores {scores.shape[0]} actions; the observation's mask has "
                         f"{mask.shape[0]}")
    if not mask.any():
        raise ValueError(f"{who}: the observation's {MASK!r} allows no action")
    return int(np.flatnonzero(mask)[int(np.argmax(scores[mask]))])
