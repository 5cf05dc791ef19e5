"""`linear`: the smallest complete agent, written only through the `Agent` contract (an example).

A per-job linear scorer over three features (log wait, log requested time, requested share of the
machine) of the first 32 waiting jobs, trained with RLlib's stock PPO on a pick-and-wait view of the
simulator. It exists to show, and to test, that an agent is one folder plus one registry line:
`env.py` (config and env), `module.py` (the RLModule), `agent.py` (the contract). See
docs/architecture.md, "Adding an agent".
"""

ENV_ID = "schedrl/Linear-v0"
ENVS = {ENV_ID: ("schedrl.agents.linear.env:LinearEnv", None)}
AGENT = "schedrl.agents.linear.agent:LinearAgent"
