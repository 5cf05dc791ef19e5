"""Keys a training trial's config, results and env infos carry between the driver, its callbacks, the reports and
the agents (as RLlib's `Columns`), and the one reading of the validation entry they share.

They sit here, beside the contract, because both sides read them: the driver (`schedrl.training`) sets the
learner config entries and its callback reports the result entries; an agent's warm start reads the validation
entry (RLScheduler clones on the run's validation sequences); the reports read both after the sweep.
"""

from __future__ import annotations

TRAIN_METRIC = "schedrl_train_metric"
"""Env-runner metric: the objective's value of each finished training episode (mean per iteration)."""
RESULT_KEY = "schedrl"
"""Result dict key holding validation numbers."""
VALIDATION_KEY = "schedrl_validation"
"""learner_config_dict key: {"starts", "length", "metric", "heuristics", "lower_is_better"} set by the driver."""
AGENT_KEY = "schedrl_agent"
"""learner_config_dict key: the agent's name, so callbacks on any process can ask it."""
VALIDATION_SCORE = "schedrl_validation_score"
"""Top-level result key repeating `RESULT_KEY/validation`: Tune's checkpoint manager ranks checkpoints only by
top-level keys (`training.driver.checkpoint_config` keeps the best by it)."""
WARM_START_RESULT = "warm_start"
"""`result[RESULT_KEY]` key of the first result: what `Agent.warm_start` did (teacher, agreement, seconds)."""
WARM_START_LOG = "warm_start.log"
"""A file in the trial's directory where a long warm start writes its progress lines (the inspector's teacher: one a
DAgger round); the driver's progress callback prints them as they come (a trial's own stdout does not reach the
terminal)."""
INFO_METRIC = "metric_value"
"""Env `info` key every agent's env sets on an episode's last step: the objective's raw value."""


def best_heuristic(validation: dict | None) -> tuple[str, float] | None:
    """(name, value) of the best baseline on the validation sequences (the `VALIDATION_KEY` entry)."""
    h = (validation or {}).get("heuristics")
    if not h:
        return None
    name = (min if validation["lower_is_better"] else max)(h, key=h.get)
    return name, float(h[name])
