"""schedrl: reinforcement-learning HPC batch-job schedulers on one fast simulator.

Importing the package is cheap on purpose: it pulls in neither torch nor ray, so the
command-line tools for traces, simulation and heuristics start in well under a second. It does
register every agent's Gymnasium env (`gym.make("schedrl/RLScheduler-v0")` after `import schedrl`),
which imports gymnasium but none of the agents' env modules until an env is made.
"""

__version__ = "0.1.0"

import schedrl.envs  # noqa: E402,F401  (registers the envs; after __version__, which submodules read)
