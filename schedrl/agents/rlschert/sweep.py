"""A trained RLSchert or DeepRM checkpoint as a method of `schedrl.dtsim.sweep` (`schedrl dtsim sweep --checkpoint`;
the sweep reaches it through `DTSimSweep.dtsim_method`, `schedrl.agents.base`).

Loading imports ray and torch (through `schedrl.agents.checkpoint.load_policy`); this module itself does not,
so `schedrl dtsim sweep` without checkpoints never pays for them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.observation import image_shape
from schedrl.dtsim.config import DTSimConfig
from schedrl.dtsim.jobs import JobTable
from schedrl.dtsim.sweep import SkipCell

SWEPT_FIELDS = ("res_slot", "job_rate", "simu_len", "predictable")
"""Env fields the sweep sets on a checkpoint's own env config; the rest (kill, estimates, horizon, ...) stay as trained."""


class CheckpointMethod:
    """A discrete-time agent's checkpoint, greedy, with its own env settings (DeepRM: pre-run estimates, no kills) and
    the sweep's res_slot, job_rate, simu_len and predictable."""

    def __init__(self, path: str | Path, label: str | None = None, loaded=None):
        from schedrl.agents import get_agent
        from schedrl.agents.checkpoint import load_policy

        path = Path(path)
        loaded = load_policy(path) if loaded is None else loaded  # CheckpointError / FileNotFoundError naming the file
        agent = get_agent(loaded.record.agent)
        if not issubclass(agent.env_config_class, RLSchertEnvConfig):  # the discrete-time cluster's agents
            raise ValueError(f"{path} is a {agent.name} checkpoint; the sweep runs checkpoints of the discrete-time "
                             "agents (rlschert, deeprm)")
        self.agent = agent
        self.module = loaded.module
        self.trained = RLSchertEnvConfig.from_dict(dict(loaded.record.env_config))
        self.path = path
        self.label = label or f"{agent.name}:{path.name}"

    def env_at(self, config: DTSimConfig) -> RLSchertEnvConfig:
        """The checkpoint's env config with the sweep's settings."""
        return replace(self.trained, **{f: getattr(config, f) for f in SWEPT_FIELDS})

    def policy_at(self, config: DTSimConfig, table: JobTable):
        env = self.env_at(config)
        trained_shape, shape = image_shape(self.trained), image_shape(env)
        if shape != trained_shape:
            raise SkipCell(f"trained at res_slot {self.trained.res_slot} (image {trained_shape[0]} x {trained_shape[1]}); "
                           f"at res_slot {env.res_slot} the image is {shape[0]} x {shape[1]}, which its network cannot "
                           "read: train one at this res_slot")
        try:
            env.check_table(table)
        except ValueError as e:
            raise SkipCell(str(e)) from None
        return self.agent.policy_from_module(self.module, env.to_dict()), env.dtsim_config()
