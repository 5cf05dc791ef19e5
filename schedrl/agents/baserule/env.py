"""The env skeleton of a base-rule agent: episodes from the training part of the trace, the base's value on each
sequence (computed once and cached), the reward relative to it, the checks a step begins with. What the env observes
and what an action does are the agent's own (`InspectorEnv`, `RLBackfillEnv`)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from schedrl.agents.baserule.config import BaseRuleEnvConfig, make_base
from schedrl.agents.baserule.observation import Normalisation
from schedrl.agents.steps import checked_action
from schedrl.envs.episodes import EpisodeSource, training_end
from schedrl.envs.simulator_env import SimulatorEnv
from schedrl.metrics import lower_is_better, summarize
from schedrl.sim import Simulator
from schedrl.workload.workload import Workload


def relative(value: float, base: float, metric: str, floor: float = 1e-9, clip: float = np.inf) -> float:
    """The reward: the metric's improvement over the base's value on the same sequence, as a share of that value
    (positive is better), the value floored at `floor` and the result clipped to [-`clip`, `clip`]."""
    scale = max(abs(base), floor)
    gain = (base - value) / scale if lower_is_better(metric) else (value - base) / scale
    return float(np.clip(gain, -clip, clip))


class BaseRuleEnv(SimulatorEnv):
    """A `SimulatorEnv` whose episodes are windows of the training part of its trace (`cfg.starts`, or seeded random
    ones), decided on top of the base rule `self.base`. Sets `config`, `workload`, `sim_config` (the policy's
    semantics), `base_config` (the base's own), `norm`, `episodes`, `base`; the subclass builds its observer and
    spaces. The episode ends with `finish`: the metric relative to the base's on the same sequence."""

    config_class: type[BaseRuleEnvConfig]

    def __init__(self, config: Mapping[str, Any] | BaseRuleEnvConfig | None, workload: Workload | None,
                 render_mode: str | None, settings: Mapping[str, Any]):
        cfg = self._configure(self.config_class, config, settings, render_mode)
        self.workload = workload if workload is not None else cfg.workload()
        self.sim_config, self.base_config = cfg.sim_config(), cfg.base_sim_config()
        end = training_end(cfg.train_fraction, len(self.workload))
        self.norm = Normalisation.from_dict(cfg.norm) if cfg.norm else Normalisation.from_trace(self.workload[:end])
        self.episodes = EpisodeSource(self.workload, cfg.sequence_length, fixed=cfg.starts, hi=end)
        # one base object: a heuristic or tuned rule keeps no state between simulations (`random`'s stream position
        # is the simulator's), and building one draws its random numbers
        self.base = make_base(cfg.base)
        self._base_values: dict[tuple[int, int], float] = {}
        self.sim: Simulator | None = None

    def base_value(self, start: int, jobs: Workload) -> float:
        """The base's metric under its own semantics on the sequence at `start` (cached per sequence; a sequence
        given by its jobs, `start` < 0, is computed every time)."""
        key = (int(start), len(jobs))
        if start < 0 or key not in self._base_values:
            value = summarize(self.base.run(Simulator(jobs, self.base_config))).value(self.config.metric)
            if start < 0:
                return value
            self._base_values[key] = value
        return self._base_values[key]

    def reward(self, value: float, base: float) -> float:
        """The last step's reward (`relative`, unfloored and unclipped unless the agent says otherwise)."""
        return relative(value, base, self.config.metric)

    def checked(self, action, masked) -> int:
        """`action` as a slot, after the checks every step begins with (`agents.steps.checked_action`)."""
        return checked_action(self.sim, self.sim is not None and self.sim.done, action, self._mask, masked)

    def finish(self, info: Mapping[str, Any]) -> tuple[float, dict[str, Any]]:
        """The reward and `info` of the step that scheduled the sequence: `metric_value`, `base_value`, then `info`
        and `start`."""
        value = summarize(self.sim.schedule()).value(self.config.metric)
        base = self.base_value(self.start, self.jobs)
        return self.reward(value, base), {"metric_value": value, "base_value": base, **info, "start": self.start}
