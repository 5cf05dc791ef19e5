"""Keys of the DRAS observation and infos, shared by the env, the RLlib modules and the policy.

The observation is a `gymnasium.spaces.Dict`: the state matrix under `OBS_STATE`, the decision level
under `OBS_LEVEL` and the per-level action mask under `OBS_ACTION_MASK`. Everything that reads or
writes them imports the names from here, so a renamed key breaks loudly.
"""

OBS_STATE = "state"
"""Key of the (2W + N, 2) float32 state matrix (DRAS §III-A; layout in `observation.py`)."""

OBS_LEVEL = "level"
"""Key of the (1,) float32 level flag: 0.0 at a level-1 decision (pick/reserve), 1.0 at level 2 (backfill)."""

OBS_ACTION_MASK = "action_mask"
"""Key of the (W,) float32 mask: 1.0 for a slot holding a job the current level may choose."""

INFO_METRIC = "metric_value"
"""Info key at episode end: the objective (average wait, seconds) of the finished schedule."""

INFO_METRICS = "metrics"
"""Info key at episode end: every aggregate of `schedrl.metrics.summarize` as a dict."""

INFO_START = "start"
"""Info key: the start index of the episode's sequence in the cleaned trace."""

INFO_JOB = "job"
"""Info key after a step: the job (index in the sequence) the action chose."""

INFO_LEVEL = "level"
"""Info key after a step: the level (1 or 2) of the decision just taken."""

METRIC = "wait"
"""The objective DRAS is evaluated on (DRAS §V: average wait first among its metrics)."""
