"""Warm start of RLSchert: the env's teacher cloned by DAgger before PPO (ours; the paper relies on Eq. 11 alone).

RLSchert's imitation term (Eq. 11) pulls PPO towards the teacher (kill rule, else SAF, else void)
while α_t is large, but through PPO's small, KL-limited steps: in 30-minute runs the greedy policy
never reached the teacher's level (docs/experiments/rlschert.md). Plain behaviour cloning of the teacher is not
enough either: a clone with about 95% agreement on the teacher's own states scored 25.8 average
slowdown on held-out sequences (SAF 10.9), because its few mistakes (waiting while a job fits) grow
the queue into states the teacher never visits, where it errs again (the compounding error of imitation). DAgger (Ross et al. 2011)
fixes exactly that, and the env already labels every state with the teacher's action:

1. round 0: the teacher drives `episodes` training sequences; every decision is recorded with the
   teacher's action as label and the discounted return of the trajectory as value target;
2. rounds 1..`rounds`: the clone's greedy policy drives `round_episodes` new training sequences,
   every state it reaches labelled with the teacher's action there; the clone is refitted on
   everything gathered so far.

Measured on the default env (no kills, seed 0; `examples/research/rlschert_dagger_probe.py`, docs/experiments/rlschert.md):
32 + 4 x 16 sequences, about 61,000 decisions, 160 s on one core; the greedy clone's held-out average
slowdown went 25.8 (plain cloning) -> 11.3 after one round and 11.25 after four (SAF 10.9). PPO with the
imitation term then starts from the teacher's level.

The rollouts run in the driver (numpy + the module's forward); the fits on the learner's module
(`schedrl.agents.cloning`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedrl.agents.returns import returns_to_go
from schedrl.agents.rlschert.keys import INFO_METRIC, INFO_TEACHER, OBS_ACTION_MASK, OBS_EXTRA, OBS_IMAGE, OBS_RUNNING

MODULE_INPUTS = (OBS_IMAGE, OBS_RUNNING, OBS_EXTRA, OBS_ACTION_MASK)
"""What the networks read (never the teacher's one-hot)."""


@dataclass
class Demonstrations:
    """States reached by some driver (teacher or clone), labelled with the teacher's action there."""

    obs: dict[str, list[np.ndarray]] = field(default_factory=lambda: {k: [] for k in MODULE_INPUTS})
    labels: list[int] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.labels)

    def arrays(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        return ({k: np.stack(v) for k, v in self.obs.items()}, np.asarray(self.labels, np.int64),
                np.asarray(self.returns, np.float32))


@dataclass
class RolloutStats:
    episodes: int = 0
    decisions: int = 0
    cut: int = 0
    """Episodes stopped at `max_decisions` (or truncated by the env)."""
    values: list[float] = field(default_factory=list)
    """Average slowdown of each episode that ended."""
    agreement: float = 0.0
    """Share of the driver's actions that were the teacher's."""


def rollouts(env, demos: Demonstrations, episodes: int, seed: int, gamma: float,
             act: Callable[[dict[str, np.ndarray]], int] | None = None, max_decisions: int = 1200,
             time_discount: bool = False) -> RolloutStats:
    """`episodes` training sequences (env seeds `seed`, `seed + 1`, ...) driven by `act(obs)` (None: the teacher),
    every decision added to `demos` with the teacher's action as label. Images are stored as uint8 (0/1).
    The value targets discount by `gamma` per decision, or with `time_discount` per time step (`advantages.py`)."""
    stats = RolloutStats()
    agree = 0
    void = env.config.num_nw
    for e in range(episodes):
        obs, info = env.reset(seed=seed + e)
        rewards: list[float] = []
        discounts: list[float] = []
        while True:
            teacher = int(info[INFO_TEACHER])
            for k in MODULE_INPUTS:
                demos.obs[k].append(obs[k].astype(np.uint8) if k == OBS_IMAGE else obs[k].copy())
            demos.labels.append(teacher)
            action = teacher if act is None else int(act(obs))
            agree += action == teacher
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(float(reward))
            discounts.append(gamma if not time_discount or action == void else 1.0)
            if terminated or truncated or len(rewards) >= max_decisions:
                break
        stats.episodes += 1
        stats.decisions += len(rewards)
        if terminated:
            stats.values.append(float(info[INFO_METRIC]))
        else:
            stats.cut += 1
        demos.returns.extend(returns_to_go(rewards, discounts).astype(np.float32).tolist())
    stats.agreement = agree / max(stats.decisions, 1)
    return stats


def dagger(module, env, spec: Mapping[str, Any],
           on_fit: Callable[[int, Mapping[str, float]], None] | None = None) -> dict[str, Any]:
    """Clone the env's teacher into `module` by DAgger (module docstring); returns the report.

    `on_fit(r, stats)`, if given, runs after each fit (r = 0 after round 0's, r after DAgger round r's).

    `env`: an `RLSchertEnv` or its config dict (training sequences are drawn from it). `spec`: {"episodes",
    "rounds", "round_episodes", "epochs", "round_epochs", "seed", "gamma", "discount"} (optional
    "max_decisions": where a rollout is cut, default 6 x simu_len; "kill_weight": the weight of the decisions
    the teacher kills in, default 1). Each fit is `schedrl.agents.cloning.clone` over everything gathered.
    """
    from schedrl.agents.cloning import clone
    from schedrl.agents.rlschert.env import RLSchertEnv
    from schedrl.agents.rlschert.policy import greedy_action

    t0 = time.perf_counter()
    if not isinstance(env, RLSchertEnv):
        env = RLSchertEnv(config=dict(env))
    seed, gamma = int(spec.get("seed") or 0), float(spec.get("gamma", 0.99))
    time_discount = spec.get("discount") == "time"
    # training sequences: env seeds far from the driver's validation/evaluation seeds and from each other
    base = 1_000_000 + 10_000 * seed
    max_decisions = int(spec.get("max_decisions") or 6 * env.config.simu_len)
    kill_weight = float(spec.get("kill_weight") or 1.0)

    def fit(d: Demonstrations, epochs: int) -> dict[str, float]:
        obs, labels, returns = d.arrays()
        # kills are ~2.5% of the teacher's labels: up-weighted, the clone learns them (docs/experiments/rlschert.md)
        weights = None if kill_weight == 1.0 else np.where(labels > env.config.num_nw, kill_weight, 1.0)
        return clone(module, obs, labels, returns, value_net=getattr(module, "value_net", None), epochs=epochs,
                     seed=seed, weights=weights)

    demos = Demonstrations()
    teacher = rollouts(env, demos, int(spec["episodes"]), base, gamma, None, max_decisions, time_discount)
    first = fit(demos, int(spec["epochs"]))
    if on_fit is not None:
        on_fit(0, first)
    stats, rounds = first, []
    for r in range(int(spec.get("rounds", 0))):
        n = int(spec.get("round_episodes") or spec["episodes"])
        driven = rollouts(env, demos, n, base + 1000 * (r + 1), gamma, lambda obs: greedy_action(module, obs),
                          max_decisions, time_discount)
        stats = fit(demos, int(spec.get("round_epochs") or spec["epochs"]))
        if on_fit is not None:
            on_fit(r + 1, stats)
        rounds.append({"episodes": driven.episodes, "decisions": driven.decisions, "agreement": driven.agreement,
                       "cut": driven.cut, "slowdown": float(np.mean(driven.values)) if driven.values else float("nan")})
    return {"teacher": env.config.teacher_label, "decisions": len(demos),
            "episodes": teacher.episodes + sum(r["episodes"] for r in rounds),
            "teacher_value": float(np.mean(teacher.values)) if teacher.values else float("nan"),
            "candidates": {}, "rounds": rounds, "demonstration_seconds": 0.0,
            **{k: v for k, v in stats.items() if k not in ("agreement_before", "clone_seconds")},
            "agreement_before": first["agreement_before"], "clone_seconds": time.perf_counter() - t0}


def warm_start(algorithm, spec: Mapping[str, Any]) -> dict[str, Any]:
    """DAgger-clone the teacher into `algorithm`'s module on its learner(s) and sync the env runners."""
    from schedrl.agents.cloning import clone_on_learners

    env_config = dict(algorithm.config.env_config)
    return clone_on_learners(algorithm, lambda module: dagger(module, env_config, spec))
