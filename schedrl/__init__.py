"""schedrl: reinforcement-learning HPC batch-job schedulers on one fast simulator.

Importing the package is cheap on purpose: it pulls in neither torch nor ray, so the
command-line tools for traces, simulation and heuristics start in well under a second.
"""

__version__ = "0.1.0"
