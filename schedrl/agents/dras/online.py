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

DRAS-DQL online (`OnlineDQL`) goes on with DQN's own rule: epsilon-greedy picks at the run's epsilon floor
(`epsilon_min`), every decision into a fresh replay buffer of the run's capacity, from `learning_starts`
decisions on one gradient step on a replay batch of `train_batch_size_per_learner` per
`rollout_fragment_length` decisions (Huber loss on the TD error, double Q when the run used it, Adam
fresh at the run's learning rate), the target network copied every `target_network_update_freq` decisions.
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

        d = {**PGSettings().__dict__, **dict(settings)}
        return cls(lr=float(d["lr"]), gamma=float(d["gamma"]), batch_size=int(d["train_batch_size_per_learner"]),
                   decisions_per_update=int(d["decisions_per_update"]), seed=seed)

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

    def record(self, obs: Mapping[str, np.ndarray], action: int, reward: float, next_obs=None,
               done: bool = False) -> None:
        """One decision (`next_obs` and `done` are for `OnlineDQL`'s replay; REINFORCE needs only the rewards)."""
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


@dataclass(frozen=True)
class OnlineDQLSettings:
    """How the online DQL learner updates (from the run's `DQLSettings` by default)."""

    lr: float
    gamma: float = 1.0
    epsilon: float = 0.01
    batch_size: int = 64
    replay_capacity: int = 50_000
    learning_starts: int = 1000
    decisions_per_step: int = 16
    target_update_every: int = 500
    double_q: bool = True
    seed: int = 0

    @classmethod
    def from_run(cls, settings: Mapping[str, Any], seed: int = 0) -> "OnlineDQLSettings":
        from schedrl.agents.dras.settings import DQLSettings

        d = {**DQLSettings().__dict__, **dict(settings)}
        return cls(lr=float(d["lr"]), gamma=float(d["gamma"]), epsilon=float(d["epsilon_min"]),
                   batch_size=int(d["train_batch_size_per_learner"]), replay_capacity=int(d["replay_capacity"]),
                   learning_starts=int(d["learning_starts"]), decisions_per_step=int(d["rollout_fragment_length"]),
                   target_update_every=int(d["target_network_update_freq"]), double_q=bool(d["double_q"]), seed=seed)

    def __post_init__(self) -> None:
        if not self.lr > 0 or not 0 <= self.epsilon <= 1:
            raise ValueError(f"online DQL needs lr > 0 and 0 <= epsilon <= 1; got lr={self.lr}, epsilon={self.epsilon}")
        if min(self.batch_size, self.replay_capacity, self.decisions_per_step, self.target_update_every) < 1:
            raise ValueError("online DQL needs batch_size, replay_capacity, decisions_per_step and "
                             "target_update_every >= 1")


class OnlineDQL:
    """DQN's update rule, applied while scheduling (see the module docstring)."""

    def __init__(self, module, settings: OnlineDQLSettings):
        self.module = copy.deepcopy(module)
        self.module.train()
        self.net = self.module.net
        self.target = copy.deepcopy(self.net)
        self.settings = settings
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=settings.lr)
        self.rng = np.random.default_rng(settings.seed)
        self.replay: list[tuple] = []
        self.updates = 0
        self.decisions = 0

    def _q(self, net, obs: Mapping[str, np.ndarray]) -> torch.Tensor:
        q = net.per_job(torch.as_tensor(obs[OBS_STATE]), self.module.window)
        return torch.where(torch.as_tensor(obs[OBS_ACTION_MASK]) > 0, q, torch.full_like(q, float("-inf")))

    def act(self, obs: Mapping[str, np.ndarray]) -> int:
        valid = np.flatnonzero(obs[OBS_ACTION_MASK] > 0)
        if self.rng.random() < self.settings.epsilon:
            return int(self.rng.choice(valid))
        with torch.no_grad():
            return int(torch.argmax(self._q(self.net, {k: v[None] for k, v in obs.items()})[0]))

    def record(self, obs, action: int, reward: float, next_obs, done: bool) -> None:
        s = self.settings
        item = (obs, action, float(reward), next_obs, bool(done))
        if len(self.replay) < s.replay_capacity:
            self.replay.append(item)
        else:
            self.replay[self.decisions % s.replay_capacity] = item
        self.decisions += 1
        if self.decisions >= s.learning_starts and self.decisions % s.decisions_per_step == 0:
            self._step()
        if self.decisions % s.target_update_every == 0:
            self.target.load_state_dict(self.net.state_dict())

    def _step(self) -> None:
        s = self.settings
        picks = self.rng.integers(0, len(self.replay), size=s.batch_size)
        batch = [self.replay[i] for i in picks]

        def stack(i: int) -> dict[str, np.ndarray]:
            return {k: np.stack([b[i][k] for b in batch]) for k in (OBS_STATE, OBS_ACTION_MASK)}

        obs, next_obs = stack(0), stack(3)
        actions = torch.as_tensor([b[1] for b in batch])
        rewards = torch.as_tensor([b[2] for b in batch], dtype=torch.float32)
        done = torch.as_tensor([b[4] for b in batch])
        q = self._q(self.net, obs).gather(1, actions[:, None])[:, 0]
        with torch.no_grad():
            target_q = self._q(self.target, next_obs)
            if s.double_q:
                best = torch.argmax(self._q(self.net, next_obs), dim=1, keepdim=True)
            else:
                best = torch.argmax(target_q, dim=1, keepdim=True)
            nxt = target_q.gather(1, best)[:, 0]
            nxt = torch.where(done | torch.isinf(nxt), torch.zeros_like(nxt), nxt)
            y = rewards + s.gamma * nxt
        loss = torch.nn.functional.huber_loss(q, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.updates += 1

    def flush(self) -> None:
        """Nothing waits for the end of an episode: DQL learns from its replay as it goes."""


def online_schedules(module, env_config: Mapping[str, Any] | DRASEnvConfig, workload, starts: Sequence[int],
                     length: int, settings: OnlineSettings | OnlineDQLSettings,
                     baseline: PositionBaseline | None = None,
                     progress: Callable[[str], None] | None = None) -> tuple[list, OnlinePG | OnlineDQL]:
    """The schedule of each sequence `starts` (in order) under the online-learning policy, and the learner
    (`OnlinePG` for `OnlineSettings`, `OnlineDQL` for `OnlineDQLSettings`)."""
    from schedrl.agents.dras.env import DRASEnv

    cfg = env_config if isinstance(env_config, DRASEnvConfig) else DRASEnvConfig.from_dict(dict(env_config))
    cfg = replace(cfg, starts=tuple(int(s) for s in starts), sequence_length=int(length), curriculum="real",
                  jobs_range=(0, len(workload)))
    env = DRASEnv(cfg, workload=workload)
    learner = OnlineDQL(module, settings) if isinstance(settings, OnlineDQLSettings) else \
        OnlinePG(module, settings, baseline)
    schedules = []
    for i, start in enumerate(starts):
        obs, _ = env.reset()
        done = False
        while not done:
            action = learner.act(obs)
            next_obs, reward, done, _, _ = env.step(action)
            learner.record(obs, action, reward, next_obs, done)
            obs = next_obs
        learner.flush()
        schedules.append(env.sim.schedule())
        if progress:
            progress(f"online {i + 1}/{len(starts)}: sequence at {start} scheduled, {learner.decisions} decisions, "
                     f"{learner.updates} updates so far")
    return schedules, learner
