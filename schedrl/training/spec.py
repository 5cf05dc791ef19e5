"""Sweeps and single runs by the names callers have always imported from here.

The definitions live in three modules, each readable on its own: `sweep.py` (`SweepSpec`, its sections,
`single_run`, trial expansion and labels), `sweep_file.py` (a sweep YAML read and validated into a
`SweepSpec`: `load_sweep`, `sweep_from_dict`, `apply_overrides`) and `yaml_reader.py` (typed YAML, search
spaces, `SweepError`). `tune_configs/README.md` describes every key.
"""

from __future__ import annotations

from schedrl.training.sweep import (SCHEDULERS, SWEEP_FILE, AshaOptions, EvaluateSpec, PBTOptions, ResourceSpec,
                                    StopSpec, SweepSpec, TrainingOptions, assign_path, expand_trials, group_label,
                                    lookup_path, model_name, short_value, single_run, trial_group, trial_settings,
                                    trial_values)
from schedrl.training.sweep_file import SpecReader, apply_overrides, load_sweep, sweep_from_dict
from schedrl.training.yaml_reader import ALIASES, Reader, SearchSpace, SweepError, is_search

__all__ = [
    "ALIASES", "SCHEDULERS", "SWEEP_FILE", "AshaOptions", "EvaluateSpec", "PBTOptions", "Reader", "ResourceSpec",
    "SearchSpace", "SpecReader", "StopSpec", "SweepError", "SweepSpec", "TrainingOptions", "apply_overrides",
    "assign_path", "expand_trials", "group_label", "is_search", "load_sweep", "lookup_path", "model_name",
    "short_value", "single_run", "sweep_from_dict", "trial_group", "trial_settings", "trial_values",
]
