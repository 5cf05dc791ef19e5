"""`SimulatorEnv`: the Gymnasium plumbing every event-simulator env shares (RLScheduler, DRAS, MRSch, the linear
example): its render modes, its config read from keywords or `config=`, an episode started on a fresh `Simulator`,
the boolean action mask of maskable-policy libraries and rendering. What the env observes, decides and rewards is
its own."""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium as gym
import numpy as np

from schedrl.envs.episodes import ContinuedEpisodes, Episode
from schedrl.envs.render import RENDER_MODES, check_render_mode, render
from schedrl.envs.settings import C, env_config
from schedrl.sim import SimConfig, Simulator


class SimulatorEnv(ContinuedEpisodes, gym.Env):
    """A `gymnasium.Env` stepping a `schedrl.sim.Simulator` on episodes from `self.episodes` (`EpisodeSource`).
    Subclasses keep the current mask in `self._mask` (float, 1 where valid)."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    sim: Simulator | None
    _mask: np.ndarray

    def _configure(self, config_class: type[C], config: Mapping[str, Any] | C | None, settings: Mapping[str, Any],
                   render_mode: str | None) -> C:
        """The env config (`config=` or keywords; unknown keys refused) as `self.config`, and `self.render_mode`."""
        self.config = env_config(config_class, config, settings)
        self.render_mode = check_render_mode(render_mode)
        return self.config

    def _next_episode(self, seed: int | None, options: dict | None, sim_config: SimConfig) -> Episode:
        """Gymnasium's reset (seeded through the episode source), the next episode (fixed starts, filtering or
        curriculum) and a fresh simulator on its jobs as `self.sim`."""
        super().reset(seed=self.episodes.reset_seed(seed))
        episode = self.episodes.for_reset(self.np_random, options)
        self.sim = Simulator(episode.jobs, sim_config)
        return episode

    def action_masks(self) -> np.ndarray:
        """The current action mask as booleans (the sb3-contrib `MaskablePPO` convention)."""
        return self._mask > 0

    def render(self):
        return render(self.sim, self.render_mode)
