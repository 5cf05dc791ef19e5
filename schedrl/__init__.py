"""schedrl: reinforcement-learning HPC batch-job schedulers on one fast simulator.

Importing the package is cheap on purpose: it pulls in neither torch nor ray, so the
command-line tools for traces, simulation and heuristics start in well under a second. It does
register every agent's Gymnasium env (`gym.make("schedrl/RLScheduler-v0")` after `import schedrl`),
which imports gymnasium but none of the agents' env modules until an env is made.
"""

import logging as _logging

# first: where the process started, and the path variables made absolute before anything (Ray) inherits them
import schedrl.paths  # noqa: F401

__version__ = "0.1.0"


class _RLModuleConfigNotice(_logging.Filter):
    """Drops Ray 2.60's `RLModule(config=[RLModuleConfig object])` deprecation notice, a false alarm:
    `RLModule.__init__` itself builds an `RLModuleConfig` for every module, including those built the
    current way (keyword arguments, as all of ours and RLlib's own are), so it fires on every checkpoint
    load and training run with nothing to change on our side. Other deprecation notices pass."""

    def filter(self, record: _logging.LogRecord) -> bool:
        return "RLModule(config=[RLModuleConfig object])" not in record.getMessage()


# the logger of ray._common.deprecation (named, so ray need not be imported to filter it)
_logging.getLogger("ray._common.deprecation").addFilter(_RLModuleConfigNotice())

import schedrl.registration  # noqa: E402,F401  (registers the envs; after __version__, which submodules read)

_API = ("load_policy", "compare", "Policy")
"""`schedrl.load_policy`, `schedrl.compare`, `schedrl.Policy` (schedrl/api.py), imported on first use so that
`import schedrl` stays cheap."""


def __getattr__(name: str):
    if name in _API:
        import schedrl.api

        return getattr(schedrl.api, name)
    raise AttributeError(f"module 'schedrl' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
