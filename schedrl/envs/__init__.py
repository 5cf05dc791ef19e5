"""Gymnasium environments: thin views (observation, action, reward) over the simulator.

Importing this package registers the environments (`schedrl/RLScheduler-v0`).
"""

import gymnasium as gym

RLSCHEDULER_ENV_ID = "schedrl/RLScheduler-v0"

if RLSCHEDULER_ENV_ID not in gym.registry:
    gym.register(
        id=RLSCHEDULER_ENV_ID,
        entry_point="schedrl.envs.rlscheduler:RLSchedulerEnv",
        vector_entry_point="schedrl.envs.rlscheduler_vector:RLSchedulerVectorEnv",
        disable_env_checker=True,
    )

__all__ = ["RLSCHEDULER_ENV_ID"]
