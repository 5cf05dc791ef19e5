"""MRSch (Li et al., "MRSch: Multi-Resource Scheduling for HPC"): Direct Future Prediction over a
window of the queue, with a goal vector that weights the scarcer resource; and its baselines.

Modules: `config` (env settings), `workload` (trace + S1–S10 augmentation + the idle-power rule),
`observation` (state vector, measurements), `goal` (Eq. 1), `env` (the list-discipline view over the
simulator), `targets` / `replay` (DFP's future-measurement targets and replay buffer, numpy),
`modules` (RLlib RLModules: the DFP network, the scalar-reward policy), `dfp` (DFP as a custom RLlib
`Algorithm`), `ga` (the BBSched-style genetic-algorithm baseline), `policy` (a trained module as a
simulator policy), `settings`, `agent` (the `Agent` contract). Only `agent` is used from outside.

`mrsch` is this package's agent; the scalar-reward RL baseline (`mrsch-scalar`) is the sub-package
`schedrl.agents.mrsch.scalar`, which shares this env.
"""

ENV_ID = "schedrl/MRSch-v0"
ENVS = {ENV_ID: ("schedrl.agents.mrsch.env:MRSchEnv", None)}
AGENT = "schedrl.agents.mrsch.agent:MRSchAgent"
COMMANDS = {"mrsch": ("schedrl.agents.mrsch.goals",
                       "MRSch's goal vector over a held-out sequence per augmentation (`schedrl mrsch goals CKPT`)")}
"""`schedrl mrsch goals ...` (`goals.main`)."""
