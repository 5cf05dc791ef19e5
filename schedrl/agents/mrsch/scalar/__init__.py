"""`mrsch-scalar`: MRSch's scalar-reward RL baseline (§IV-D), PPO on the MRSch env with the reward
0.5·U_node + 0.5·U_BB. Its env is the `mrsch` package's (`schedrl/MRSch-v0`), registered there."""

ENVS: dict = {}
AGENT = "schedrl.agents.mrsch.agent:MRSchScalarAgent"
