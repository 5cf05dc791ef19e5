"""Policy networks by name: the RLScheduler kernel network and its Table IV ablations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from schedrl.agents.rlscheduler.modules.flat import FlatMLPPolicyModule, LeNetPolicyModule
from schedrl.agents.rlscheduler.modules.kernel import KernelPolicyModule
from schedrl.agents.rlscheduler.modules.queue_module import JobQueueModule

# name -> (module class, preset model_config); RLScheduler Table IV
MODELS: dict[str, tuple[type[JobQueueModule], dict[str, Any]]] = {
    "kernel": (KernelPolicyModule, {}),
    "mlp_v1": (FlatMLPPolicyModule, {"policy_hiddens": (128, 128, 128)}),  # Table IV MLP_v1
    "mlp_v2": (FlatMLPPolicyModule, {"policy_hiddens": (32, 16, 8)}),  # Table IV MLP_v2
    "mlp_v3": (FlatMLPPolicyModule, {"policy_hiddens": (32, 32, 32, 32, 32)}),  # Table IV MLP_v3
    "lenet": (LeNetPolicyModule, {}),  # Table IV LeNet
}


def module_spec(name: str, model_config: Mapping[str, Any] | None = None) -> RLModuleSpec:
    """The ``RLModuleSpec`` of policy network ``name``, with ``model_config`` over its preset.

    Unknown names or ``model_config`` keys raise ``ValueError`` before anything is built.
    """
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; valid names: {sorted(MODELS)}")
    module_class, preset = MODELS[name]
    config = module_class.resolve_config({**preset, **dict(model_config or {})})
    return RLModuleSpec(module_class=module_class, model_config=config)
