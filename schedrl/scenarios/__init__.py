"""Scenarios: what a policy is trained and judged on (a layer between the simulators and the agents).

- `workload.WorkloadSpec`: the one owner of trace + cleaning + preset + augmentation -> `Workload`.
- `split`: the held-out protocol (training / validation / evaluation zones).
- `scenario.Scenario`: workload, simulator semantics (or the discrete-time cluster), split, fixed validation and
  evaluation sequences, metric, baselines and the reference heuristic; its definition hash.
- `standard`: the named standard scenarios; `registry.get_scenario`: by name, file, or `$SCHEDRL_SCENARIO_PATH`.
- `scoring`: a policy and the baselines on a scenario's sequences (event simulator or discrete-time cluster).

Imports: workload, sim, dtsim, heuristics and metrics only; never ray, torch, an agent, `training` or `eval`.
"""

from schedrl.scenarios.registry import get_scenario, standard
from schedrl.scenarios.scenario import BaselineSpec, Scenario, SequenceSpec
from schedrl.scenarios.split import Split
from schedrl.scenarios.workload import CLEANING_PRESETS, WorkloadSpec, cleaning_for

__all__ = ["BaselineSpec", "CLEANING_PRESETS", "Scenario", "SequenceSpec", "Split", "WorkloadSpec", "cleaning_for",
           "get_scenario", "standard"]
