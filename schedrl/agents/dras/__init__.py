"""DRAS (Fan et al., "Deep Reinforcement Agent for Scheduling in HPC"): two-level scheduling agent.

Modules: `config` (env settings), `decisions` (DRAS's two levels on the simulator's list
discipline), `observation` (the [2W + N, 2] state), `env` (`schedrl/DRAS-v0`), `modules` (RLlib
RLModules: DRAS-PG's policy and DRAS-DQL's per-job Q network, Table III sizes), `learner`
(REINFORCE with DRAS's baseline; DQN builder), `settings` (algorithm settings), `policy` (a trained
module as a simulator policy), `agent` (the `Agent` classes: dras-pg, dras-dql, decima-pg).
Only `agent` is used from outside.
"""

ENV_ID = "schedrl/DRAS-v0"
ENVS = {ENV_ID: ("schedrl.agents.dras.env:DRASEnv", None)}
AGENT = "schedrl.agents.dras.agent:DRASPGAgent"
AGENTS = {
    "dras-pg": "schedrl.agents.dras.agent:DRASPGAgent",
    "dras-dql": "schedrl.agents.dras.agent:DRASDQLAgent",
    "decima-pg": "schedrl.agents.dras.agent:DecimaPGAgent",
}
"""Every agent this package holds: name -> "module:Class" (`AGENT` is the package's default, dras-pg)."""
