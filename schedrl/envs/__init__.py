"""Env pieces shared by the agents' envs: `masked_discrete` (a Discrete space sampling valid actions), `episodes`
(where episodes come from: fixed starts, seeded random, phased curricula), `settings`, `render`.

The envs are registered with gymnasium by `schedrl.registration`, which `import schedrl` (and so importing this
package) runs: this package knows no agent, and the agents' envs build on it.
"""

RLSCHEDULER_ENV_ID = "schedrl/RLScheduler-v0"
"""Kept for users of the env id; agents declare their ids in their package's `ENVS`."""
