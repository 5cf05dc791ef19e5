"""A training run's terminal output is schedrl's own lines: Ray's, Tune's and RLlib's notices that tell a schedrl
user nothing to do are quieted here, each at its source, before the driver starts Ray (`quiet_ray`).

What is quieted, and how (each was seen on every `schedrl train` run before; `tests/training/test_terminal_output.py`
checks that none comes back and that no line repeats):

- Ray's INFO lines in the driver ("Started a local Ray instance.", "Connecting to existing Ray cluster ...", Tune's
  "Wrote the latest version of all result files ..."): `ray.init(logging_level=WARNING)`, Ray's own setting for
  its logger; its warnings and errors still print.
- Ray's "Token authentication is enabled for this Ray cluster. Set RAY_AUTH_MODE=disabled to opt out": a filter
  on the logger that writes it (`ray._private.authentication.authentication_token_setup`) drops that notice only.
  Token authentication stays on: it is Ray's default for a new local instance, and a cluster's own choice when
  we connect to one. Its opposite, the warning that a cluster runs *without* authentication, still prints.
- RLlib's "You are running PPO on the new API stack! This is the new default behavior ...": a filter on the
  logger of `ray.rllib.algorithms.algorithm_config` drops that notice only. Every schedrl agent is written for
  the new API stack; there is no old stack to go back to.
- Tune's console reporter (a "Configuration for experiment" box, "View detailed results here", a TensorBoard
  hint), printed even at `verbose=0` by Tune's newer output engine: `RAY_AIR_NEW_OUTPUT=0`, Ray's documented
  switch to its legacy engine, which prints nothing at `verbose=0`. `schedrl train` prints one line per
  iteration itself (`schedrl.training.callbacks.ProgressLine`) and names its output directory.
- Tune's "Experiment state snapshotting has been triggered multiple times in the last 5.0 seconds and may become
  a bottleneck" (three lines, every few seconds in a run of short iterations). Tune forces a snapshot of the
  experiment state whenever a trial has written `num_to_keep` checkpoints since the last one; with a checkpoint
  at every validated iteration and 5 kept, short iterations make those snapshots frequent. The bottleneck it
  warns of is not there: measured on this project's 2-core machine, a snapshot (a copy of the experiment's few
  state files) took 0.02 s (Tune's own "Wrote ... in 0.0207s" at the end of a run), and a checkpoint 0.014-0.18 s
  (1.0-1.1 MB; `examples/research/checkpoint_cost.py`, DRAS-PG and RLScheduler), at most a few percent of an
  iteration (DRAS-PG's 1,600 decisions take 1.6 s at 1,000 env steps/s). The setting the warning itself names,
  `TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S=0`, turns it off. Tune's measured warning, that one
  snapshot took longer than 30 s (`TUNE_WARN_SLOW_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S`), stays on:
  it reports a real bottleneck when there is one.
- Ray's C++ line "logging.cc:303: Set ray log level from environment variable RAY_BACKEND_LOG_LEVEL to 3": printed
  because `schedrl train` and `schedrl tune` set that variable (to `fatal`) to quiet Ray's C++ logger. They no
  longer do: without it the driver's C++ logger printed nothing in these runs either.

Each environment variable is set only where the user has not set it, so any of them can be turned back on.
"""

from __future__ import annotations

import logging
import os

ENVIRONMENT = {
    # Tune's legacy console engine: silent at verbose=0 (the newer one prints a header box and paths regardless)
    "RAY_AIR_NEW_OUTPUT": "0",
    # the "snapshotting triggered multiple times" warning; the slow-snapshot warning stays on
    "TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S": "0",
}
"""Environment variables set (where unset) before Ray and Tune start."""

NOTICES = {
    "ray._private.authentication.authentication_token_setup": "Token authentication is enabled for this Ray cluster",
    "ray.rllib.algorithms.algorithm_config": "on the new API stack! This is the new default behavior",
}
"""Logger name -> the text of the one notice dropped from it (the logger's other records pass)."""


class DropNotice(logging.Filter):
    """Drops the records of one logger whose message contains `text`; every other record passes."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


def install_filters() -> None:
    """Add the `NOTICES` filters to their loggers, once (logging keeps logger objects by name, so this works before
    ray is imported)."""
    for name, text in NOTICES.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, DropNotice) and f.text == text for f in logger.filters):
            logger.addFilter(DropNotice(text))


def quiet_ray() -> dict:
    """Quiet the notices above in this process; returns the keyword arguments for the `ray.init` that follows."""
    for name, value in ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    install_filters()
    return {"logging_level": logging.WARNING}
