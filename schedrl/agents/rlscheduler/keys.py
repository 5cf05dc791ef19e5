"""Observation keys and sizes shared by the environments and the RLlib modules.

The RLScheduler observation is a ``gymnasium.spaces.Dict`` with a job matrix under
``OBS_JOBS`` (``MAX_OBSV_SIZE`` rows, one per visible job) and a 0/1 vector under
``OBS_ACTION_MASK`` saying which rows are valid choices. Both the env and the models import
these names from here, so a renamed key breaks loudly instead of silently.
"""

OBS_JOBS = "jobs"
"""Key of the (MAX_OBSV_SIZE, F) float32 job-feature matrix."""

OBS_ACTION_MASK = "action_mask"
"""Key of the (MAX_OBSV_SIZE,) float32 mask: 1.0 for a selectable job slot, 0.0 otherwise."""

MAX_OBSV_SIZE = 128
"""Number of visible job slots; RLScheduler §IV-B3: MAX_OBSV_SIZE = 128 by default."""
