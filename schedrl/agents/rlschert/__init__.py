"""RLSchert (Wang et al., Applied Sciences 2021) and its DeepRM baseline on the discrete-time cluster (`schedrl.dtsim`).

Modules: `config` (env settings), `keys` (observation/info keys), `observation` (the §3.3 state, the
masks, the imitation teacher, shared by the env and the trained policy), `env` (`schedrl/RLSchert-v0`),
`modules` (RLlib RLModules: MLP 64-64, CNN), `learner` (PPO with the imitation term), `settings`
(algorithm settings), `policy` (a trained module as a dtsim policy), `evaluation` (episodes of the
discrete-time cluster, heuristics and trained policies alike), `agent` (the `Agent` classes).
Only `agent` is used from outside.
"""

ENV_ID = "schedrl/RLSchert-v0"
ENVS = {ENV_ID: ("schedrl.agents.rlschert.env:RLSchertEnv", None)}
AGENT = "schedrl.agents.rlschert.agent:RLSchertAgent"
AGENTS = {
    "rlschert": "schedrl.agents.rlschert.agent:RLSchertAgent",
    "deeprm": "schedrl.agents.rlschert.agent:DeepRMAgent",
}
"""Every agent this package holds: name -> "module:Class" (`AGENT` is the package's default, rlschert)."""
