"""A trained base-rule network as a simulator policy: what the inspector's and learned backfilling's greedy policies
share (the run's base rule, its normalisation, the network's device). What the network decides is the subclass's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedrl.agents.baserule.config import base_label, make_base
from schedrl.agents.baserule.observation import Normalisation


class BaseRulePolicy:
    """Greedy decisions of a trained network (the RLModule or its ray-free network) over the base rule its run was
    trained on; the base and the normalisation come from the run's env config, so the policy runs on any trace with
    the same resources. `label` names the policy after its base: `RL(F1)`, `RL-BF(TUNED)`."""

    label = "RL"

    def __init__(self, module, env_config: Mapping[str, Any], name: str | None = None):
        self.module = module
        self.env_config = dict(env_config)
        self.base_name = str(self.env_config.get("base", "f1"))
        self.base = make_base(self.base_name)
        self.norm = Normalisation.from_dict(self.env_config["norm"])
        self.name = name or f"{self.label}({base_label(self.base_name)})"
        self.device = next(module.parameters()).device
