"""RLScheduler (Zhang et al., SC'20): kernel-based policy over the job queue, PPO, trajectory filtering.

Modules: `config` (env settings), `env` / `vector_env` (the SchedGym view over the simulator),
`observation` (job features), `modules` (RLlib RLModules: the kernel network and Table IV
ablations), `ppo` (Spinning-Up PPO on RLlib), `filtering` (trajectory filtering), `policy` (a
checkpoint as a simulator policy), `agent` (the `Agent` contract). Only `agent` is used from outside.
"""

ENV_ID = "schedrl/RLScheduler-v0"
ENVS = {ENV_ID: ("schedrl.agents.rlscheduler.env:RLSchedulerEnv",
                 "schedrl.agents.rlscheduler.vector_env:RLSchedulerVectorEnv")}
AGENT = "schedrl.agents.rlscheduler.agent:RLSchedulerAgent"
