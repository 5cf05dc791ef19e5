"""Gymnasium registration of every agent's environment, and env pieces shared by agents.

Importing this package registers the envs each agent package declares in its `ENVS`
(`schedrl/RLScheduler-v0`, ...). Shared pieces: `masked_discrete` (a Discrete space sampling valid
actions), `episodes` (where episodes come from: fixed starts, seeded random, phased curricula).
"""

import gymnasium as gym

from schedrl.agents import env_entry_points

for _env_id, (_entry, _vector_entry) in env_entry_points().items():
    if _env_id not in gym.registry:
        gym.register(id=_env_id, entry_point=_entry, vector_entry_point=_vector_entry, disable_env_checker=True)

RLSCHEDULER_ENV_ID = "schedrl/RLScheduler-v0"
"""Kept for users of the env id; agents declare their ids in their package's `ENVS`."""
