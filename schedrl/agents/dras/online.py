"""Online DRAS-PG: the policy keeps learning while it schedules the evaluation sequences (DRAS §V-D/E).

The paper tests DRAS "online": it goes on updating its network on the jobs it is being tested on. Here a
copy of the trained module schedules the evaluation sequences one after another, in the order given, through
the same env the training used (`DRASEnv` with fixed `starts`), sampling its picks from its policy as during
training, and learns from them exactly as `DRASPGLearner` does: decisions are collected in chunks of the run's
`train_batch_size_per_learner`, each gets its reward-to-go within its chunk and its position k, and one Adam
step is taken per `decisions_per_update` consecutive decisions against the per-position baseline b_k. The
baseline continues from the checkpoint's learner state when the checkpoint has one (else it starts empty);
Adam starts fresh at the run's learning rate. The schedules produced while learning are what is reported:
each sequence's schedule is that of the policy as it was when it ran, later sequences see a policy that has
learned on the earlier ones. The frozen module is never changed.

DRAS-DQL's online mode is not implemented (its learner is RLlib's DQN with a replay buffer): `evaluate
--online` says so for a DQL checkpoint.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns

from schedrl.agents.dras.config import DRASEnvConfig
from schedrl.agents.dras.keys import OBS_ACTION_MASK, OBS_LEVEL, OBS_STATE
from schedrl.agents.dras.learner import PositionBaseline
from schedrl.agents.returns import returns_to_go

LEARNER_STATE = Path("learner_group") / "learner" / "state.pkl"
"""Where an RLlib checkpoint keeps the learner's state (the DRAS baselines among it)."""


@dataclass(frozen=True)
class OnlineSettings:
    """How the online learner updates (from the run's `PGSettings` by default)."""

    lr: float
    gamma: float = 1.0
    batch_size: int = 1000
    """Decisions per chunk: rewards-to-go are taken within a chunk (the training's sampled batch)."""
    decisions_per_update: int = 100
    seed: int = 0

    @classmethod
    def from_run(cls, settings: Mapping[str, Any], seed: int = 0) -> "OnlineSettings":
        from schedrl.agents.dras.settings import PGSettings

        default = PGSettings()
        return cls(lr=float(settings.get("lr", default.lr)), gamma=float(settings.get("gamma", default.gamma)),
                   batch_size=int(settings.get("train_batch_size_per_learner", default.train_batch_size_per_learner)),
                   decisions_per_update=int(settings.get("decisions_per_update", default.decisions_per_update)),
                   seed=seed)

    def __post_init__(self) -> None:
        if not self.lr > 0:
            raise ValueError(f"online learning rate must be > 0; got {self.lr}")
        if self.decisions_per_update < 1 or self.batch_size < self.decisions_per_update:
            raise ValueError(f"online updates need 1 <= decisions_per_update ({self.decisions_per_update}) <= "
                             f"batch_size ({self.batch_size})")


def checkpoint_baseline(checkpoint: str | Path, module_id: str = "default_policy") -> PositionBaseline:
    """The per-position baseline b_k the run had reached at `checkpoint` (empty when it holds no learner state)."""
    baseline = PositionBaseline()
    path = Path(checkpoint) / LEARNER_STATE
    if path.is_file():
        with open(path, "rb") as f:
            state = pickle.load(f)
        saved = (state.get("dras_baselines") or {}).get(module_id)
        if saved:
            baseline.set_state(saved)
    return baseline


class OnlinePG:
    """REINFORCE with DRAS's baseline, applied while scheduling (see the module docstring)."""

    def __init__(self, module, settings: OnlineSettings, baseline: PositionBaseline | None = None):
        self.module = copy.deepcopy(module)
        self.module.train()
        self.settings = settings
        self.baseline = baseline if baseline is not None else PositionBaseline()
        self.optimizer = torch.optim.Adam(self.module.parameters(), lr=settings.lr)
        self.rng = np.random.default_rng(settings.seed)
        self.updates = 0
        self.decisions = 0
        self._chunk: list[tuple[dict[str, np.ndarray], int, float]] = []

    def _logits(self, obs: Mapping[str, np.ndarray | torch.Tensor], grad: bool) -> torch.Tensor:
        batch = {Columns.OBS: {k: torch.as_tensor(obs[k]) for k in (OBS_STATE, OBS_ACTION_MASK, OBS_LEVEL)}}
        with torch.set_grad_enabled(grad):
            return self.module._forward(batch)[Columns.ACTION_DIST_INPUTS]

    def act(self, obs: Mapping[str, np.ndarray]) -> int:
        """A pick sampled from the current policy over the valid slots."""
        logits = self._logits({k: v[None] for k, v in obs.items()}, grad=False)[0].double().numpy()
        valid = obs[OBS_ACTION_MASK] > 0
        z = np.where(valid, logits, -np.inf)
        p = np.exp(z - z.max())
        p /= p.sum()
        return int(self.rng.choice(len(p), p=p))

    def record(self, obs: Mapping[str, np.ndarray], action: int, reward: float) -> None:
        self._chunk.append((obs, action, float(reward)))
        self.decisions += 1
        if len(self._chunk) >= self.settings.batch_size:
            self.flush()

    def flush(self) -> None:
        """Learn from the decisions collected so far (call at the end of each episode too)."""
        chunk, self._chunk = self._chunk, []
        if not chunk:
            return
        returns = returns_to_go([r for _, _, r in chunk], self.settings.gamma)
        positions = np.arange(len(chunk))
        per = self.settings.decisions_per_update
        # whole updates in order, as the training learner takes them; a short chunk is one update
        bounds = [(i, i + per) for i in range(0, len(chunk) - per + 1, per)] or [(0, len(chunk))]
        for lo, hi in bounds:
            obs = {k: np.stack([o[k] for o, _, _ in chunk[lo:hi]]) for k in (OBS_STATE, OBS_ACTION_MASK, OBS_LEVEL)}
            actions = torch.as_tensor([a for _, a, _ in chunk[lo:hi]])
            logits = self._logits(obs, grad=True)
            logp = torch.distributions.Categorical(logits=logits).log_prob(actions)
            g = torch.as_tensor(returns[lo:hi], dtype=logp.dtype)
            b = torch.as_tensor(self.baseline(positions[lo:hi]), dtype=logp.dtype)
            loss = -torch.mean(logp * (g - b))
            self.baseline.add(positions[lo:hi], returns[lo:hi])
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.updates += 1


def online_schedules(module, env_config: Mapping[str, Any] | DRASEnvConfig, workload, starts: Sequence[int],
                     length: int, settings: OnlineSettings, baseline: PositionBaseline | None = None,
                     progress: Callable[[str], None] | None = None) -> tuple[list, OnlinePG]:
    """The schedule of each sequence `starts` (in order) under the online-learning policy, and the learner."""
    from schedrl.agents.dras.env import DRASEnv

    cfg = env_config if isinstance(env_config, DRASEnvConfig) else DRASEnvConfig.from_dict(dict(env_config))
    cfg = replace(cfg, starts=tuple(int(s) for s in starts), sequence_length=int(length), curriculum="real",
                  jobs_range=(0, len(workload)))
    env = DRASEnv(cfg, workload=workload)
    learner = OnlinePG(module, settings, baseline)
    schedules = []
    for i, start in enumerate(starts):
        obs, _ = env.reset()
        done = False
        while not done:
            action = learner.act(obs)
            next_obs, reward, done, _, _ = env.step(action)
            learner.record(obs, action, reward)
            obs = next_obs
        learner.flush()
        schedules.append(env.sim.schedule())
        if progress:
            progress(f"online {i + 1}/{len(starts)}: sequence at {start} scheduled, {learner.decisions} decisions, "
                     f"{learner.updates} updates so far")
    return schedules, learner
