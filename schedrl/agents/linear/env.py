"""The `linear` agent's env: pick one of the first `SLOTS` waiting jobs; reward -avg bsld at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import gymnasium as gym
import numpy as np

from schedrl.agents.dictconfig import DictConfig
from schedrl.agents.steps import checked_action
from schedrl.envs.episodes import EpisodeSource
from schedrl.envs.masked_discrete import MaskedDiscrete
from schedrl.envs.simulator_env import SimulatorEnv
from schedrl.metrics import summarize
from schedrl.scenarios.split import VALIDATION_SHARE, Split, training_end
from schedrl.sim import DECIDE_PICK, FINISHED, SimConfig, Simulator
from schedrl.sim.config import check_slurm_site
from schedrl.workload.workload import Workload

SLOTS = 32
"""Visible waiting jobs (the first of the queue, FCFS order)."""
FEATURES = 3
"""Per job: log1p(wait) / log1p(day), log1p(requested time) / log1p(day), requested share of the machine."""
DAY = 86_400.0


@dataclass(frozen=True)
class LinearEnvConfig(DictConfig):
    """What the env simulates. Unknown keys are rejected by `from_dict`."""

    dict_label = "linear env"
    tuple_fields = {"starts": int}
    dict_fields = {"slurm": None}

    trace: str = "default"
    """Catalog name or SWF path."""
    cleaning: str = "default"
    """Trace cleaning preset."""
    backfill: str = "none"
    """Backfilling while the picked job waits."""
    slurm: Mapping[str, int] = field(default_factory=dict)
    """Under backfill slurm, the site's Slurm (`SimConfig` fields of `schedrl.sim.config.SLURM_SITE`: bf_interval,
    bf_resolution, bf_window, bf_max_job_test, node_procs) over Slurm's defaults; a scenario's are given here."""
    sequence_length: int = 128
    """Jobs per episode."""
    starts: tuple[int, ...] = ()
    """Fixed starts (cycled); empty: seeded random starts."""
    train_fraction: float = 1.0
    """Random starts come from the first `train_fraction` of the cleaned trace (1: the whole trace, no held-out part;
    a scenario sets its own, `train linear --scenario default`: 0.6)."""
    validation_share: float = VALIDATION_SHARE
    """Share of the held-out part (its first jobs) validation sequences come from; evaluation takes the rest."""

    def __post_init__(self) -> None:
        from schedrl.sim.config import BACKFILLS
        from schedrl.workload.cleaning import CleaningRules

        if self.sequence_length < 2:
            raise ValueError(f"sequence_length must be >= 2, got {self.sequence_length}")
        Split(self.train_fraction, self.validation_share)  # both in (0, 1]
        if self.backfill not in BACKFILLS:
            raise ValueError(f"backfill must be one of {', '.join(BACKFILLS)}; got {self.backfill!r}")
        CleaningRules.preset(self.cleaning)
        object.__setattr__(self, "slurm", check_slurm_site(self.backfill, self.slurm))

    def sim_config(self) -> SimConfig:
        return SimConfig.preset("standard", discipline="pick-and-wait", backfill=self.backfill, **self.slurm)

    def workload(self) -> Workload:
        from schedrl.workload.catalog import load_trace
        from schedrl.workload.cleaning import CleaningRules

        return load_trace(self.trace, CleaningRules.preset(self.cleaning))


def observe(sim: Simulator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(jobs (SLOTS, FEATURES), mask (SLOTS,), visible job indices) of the simulator's state."""
    visible = sim.queue[:SLOTS].copy()
    k = len(visible)
    s = sim.state
    jobs = np.zeros((SLOTS, FEATURES), dtype=np.float32)
    scale = np.log1p(DAY)
    jobs[:k, 0] = np.minimum(np.log1p(sim.now - s.submit[visible]) / scale, 1.0)
    jobs[:k, 1] = np.minimum(np.log1p(s.est[visible]) / scale, 1.0)
    jobs[:k, 2] = s.req[visible, 0] / s.cap[0]
    mask = np.zeros(SLOTS, dtype=np.float32)
    mask[:k] = 1.0
    return jobs, mask, visible


class LinearEnv(SimulatorEnv):
    """Pick-and-wait over the simulator; terminal reward -avg bounded slowdown; `info["metric_value"]` the bsld."""

    def __init__(self, config: Mapping[str, Any] | LinearEnvConfig | None = None, render_mode: str | None = None,
                 **settings: Any):
        merged = self._configure(LinearEnvConfig, config, settings, render_mode)
        self.workload = merged.workload()
        # fixed starts or seeded random windows, and the driver's resume hook (`ContinuedEpisodes`)
        self.episodes = EpisodeSource(self.workload, merged.sequence_length, fixed=merged.starts,
                                      hi=training_end(merged.train_fraction, len(self.workload)))
        self.observation_space = gym.spaces.Dict({
            "jobs": gym.spaces.Box(0.0, 1.0, (SLOTS, FEATURES), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (SLOTS,), np.float32)})
        self.action_space = MaskedDiscrete(SLOTS)
        self.sim: Simulator | None = None
        self._mask = np.zeros(SLOTS, dtype=np.float32)

    def observation_of(self, sim: Simulator) -> tuple[dict, np.ndarray]:
        """This env's observation of `sim` at a pick, and the job behind each slot (`FunctionPolicy`)."""
        jobs, mask, visible = observe(sim)
        return {"jobs": jobs, "action_mask": mask}, visible

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        episode = self._next_episode(seed, options, self.config.sim_config())
        assert self.sim.advance() == DECIDE_PICK
        return self._observe(), {"start": episode.start}

    def _observe(self) -> dict:
        jobs, self._mask, self._visible = observe(self.sim)
        self.action_space.set_mask(self._mask)
        return {"jobs": jobs, "action_mask": self._mask.copy()}

    def step(self, action):
        a = checked_action(self.sim, self.sim is not None and self.sim.done, action, self._mask, lambda a: (
            f"action {a} is masked: only slots 0..{len(self._visible) - 1} hold waiting jobs"))
        self.sim.pick(int(self._visible[a]))
        if self.sim.advance() == FINISHED:
            bsld = summarize(self.sim.schedule()).value("bsld")
            obs = {"jobs": np.zeros((SLOTS, FEATURES), np.float32), "action_mask": np.zeros(SLOTS, np.float32)}
            return obs, -bsld, True, False, {"metric_value": bsld}
        return self._observe(), 0.0, False, False, {}
