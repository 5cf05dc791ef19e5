"""Gymnasium registration of every agent's environment (`schedrl/RLScheduler-v0`, ...), done when `schedrl` is
imported.

The registry (`schedrl.agents`) knows the env ids and entry points each agent package declares in its `ENVS`; this
module hands them to gymnasium (no agent module is imported until an env is made). It sits above both the registry
and `schedrl.envs`, the env pieces the agents' envs build on, so the two import each other one way only (agents ->
envs). Importing any `schedrl.*` module imports `schedrl` first, which imports this one: RLlib's env runners, given
an env named `schedrl.envs:<id>`, find it registered.
"""

import gymnasium as gym

from schedrl.agents import env_entry_points


def register_envs() -> None:
    """Register every agent's envs with gymnasium (those already registered are left as they are)."""
    for env_id, (entry, vector_entry) in env_entry_points().items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry, vector_entry_point=vector_entry, disable_env_checker=True)


register_envs()
