"""GAE with the discount applied per time step, not per decision (`discount="time"`, ours).

On the discrete-time cluster many decisions share one time step: allocations and kills take no
time, only the void action moves the clock on, and the reward (Eq. 9/10) is paid when it does. With
γ per decision (RLlib's GAE, RLSchert Table 4's γ 0.99 per env step) every allocation or kill
taken before the next void action puts that step's penalty off by one more factor of γ, so a
policy gains by taking decisions that do not move time: with kills it learns to kill and
re-allocate running jobs over and over (a 30-minute run, docs/experiments/rlschert.md: thousands of kills per
sequence, average slowdown 100+). Discounting per time step removes that gain: decision t's
discount is γ when it is the void action and 1 otherwise, in the TD residual and in the GAE
recursion,

    δ_t = r_t + γ_t V(s_{t+1}) - V(s_t),    A_t = δ_t + γ_t λ A_{t+1},    γ_t = γ if a_t is void else 1,

so the returns are Σ_k γ^(time steps passed) r_k, the same for any order of decisions within a step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.evaluation.postprocessing import Postprocessing
from ray.rllib.utils.numpy import convert_to_numpy

def time_step_discounts(actions: np.ndarray, void_action: int, gamma: float) -> np.ndarray:
    """γ_t of each decision: `gamma` where the action is the void action (time moves on), else 1."""
    return np.where(np.asarray(actions) == void_action, np.float32(gamma), np.float32(1.0)).astype(np.float32)


def value_targets(values: np.ndarray, rewards: np.ndarray, terminateds: np.ndarray, truncateds: np.ndarray,
                  discounts: np.ndarray, lambda_: float) -> np.ndarray:
    """GAE value targets (advantage + value) over consecutive episode chunks with a per-decision discount.

    The arrays are flat over the chunks, each chunk ending in the artificial extra step RLlib's PPO
    learner appends (`AddOneTsToEpisodesAndTruncate`): `terminateds[t]` means no s_{t+1} (no bootstrap),
    `truncateds[t]` a chunk boundary (bootstrap from V(s_{t+1}), no propagation across it), as RLlib's GAE.
    """
    values = np.asarray(values, dtype=np.float32)
    rewards = np.asarray(rewards, dtype=np.float32)
    discounts = np.asarray(discounts, dtype=np.float32)
    live = 1.0 - np.asarray(terminateds, dtype=np.float32)
    carry = live * (1.0 - np.asarray(truncateds, dtype=np.float32))
    following = np.append(values[1:], np.float32(0.0))
    deltas = rewards + discounts * live * following - values
    advantages = np.empty_like(values)
    running = 0.0
    for t in range(len(values) - 1, -1, -1):
        running = deltas[t] + discounts[t] * lambda_ * carry[t] * running
        advantages[t] = running
    return advantages + values


class TimeStepGAE(ConnectorV2):
    """Learner connector piece: advantages and value targets with `value_targets` (module docstring).

    Replaces RLlib's `GeneralAdvantageEstimation` at the end of the PPO learner pipeline; advantages are
    standardised per module as there.
    """

    def __init__(self, input_observation_space=None, input_action_space=None, *, gamma: float, lambda_: float,
                 void_action: int):
        super().__init__(input_observation_space, input_action_space)
        self.gamma, self.lambda_, self.void_action = float(gamma), float(lambda_), int(void_action)

    def __call__(self, *, rl_module, episodes, batch: dict[str, Any], **kwargs):
        import torch

        for module_id, columns in batch.items():
            module = rl_module[module_id] if module_id in rl_module.keys() else None
            if module is None or not isinstance(module, ValueFunctionAPI):
                continue
            if module.is_stateful():
                raise ValueError("discount='time' supports stateless modules only")
            predicted = module.compute_values(columns)
            device = predicted.device
            values = convert_to_numpy(predicted).astype(np.float32)
            discounts = time_step_discounts(convert_to_numpy(columns[Columns.ACTIONS]), self.void_action, self.gamma)
            targets = value_targets(values, convert_to_numpy(columns[Columns.REWARDS]),
                                    convert_to_numpy(columns[Columns.TERMINATEDS]),
                                    convert_to_numpy(columns[Columns.TRUNCATEDS]), discounts, self.lambda_)
            advantages = targets - values
            advantages = (advantages - advantages.mean()) / max(1e-4, float(advantages.std()))
            columns[Postprocessing.ADVANTAGES] = torch.as_tensor(advantages, device=device)
            columns[Postprocessing.VALUE_TARGETS] = torch.as_tensor(targets, device=device)
        return batch
