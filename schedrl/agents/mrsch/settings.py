"""Algorithm settings of the MRSch agents (no ray): DFP's and the scalar-reward baseline's PPO."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from schedrl.agents.runners import RunnerSettings


@dataclass(frozen=True)
class MRSchRunnerSettings(RunnerSettings):
    """The runner defaults both MRSch trainings share (each redeclared field keeps its place in `RunnerSettings`)."""

    seed: int = 0
    """Seed of RLlib (env seeds, network init) and, under DFP, of the replay sampling."""
    env_runner_resources: Mapping[str, float] = field(default_factory=dict)
    """Custom Ray resources each env runner needs (placement on a cluster)."""
    max_env_runner_restarts: int = 3
    """Restarts of a failed env runner before the run fails."""


@dataclass(frozen=True)
class DFPSettings(MRSchRunnerSettings):
    """How DFP trains MRSch (`dfp.build_dfp_config`)."""

    lr: float = 1e-4
    """Adam learning rate (DFP, Dosovitskiy & Koltun 2017, §4.2: 1e-4)."""
    minibatch_size: int = 64
    """Decisions per gradient step (DFP §4.2: minibatches of 64)."""
    replay_capacity: int = 20_000
    """Most recent decisions kept for replay (DFP §4.2: 20,000)."""
    updates_per_iteration: int = 32
    """Gradient steps per training iteration (after each iteration's episodes are sampled)."""
    episodes_per_iteration: int = 1
    """Whole episodes each env runner samples per iteration."""
    learning_starts: int = 256
    """Decisions in the replay buffer before the first gradient step."""
    epsilon_decay: float = 0.995
    """ε multiplier per decision, from ε = 1 (MRSch §IV-C: 0.995)."""
    epsilon_floor: float = 0.05
    """Smallest ε (our choice; the paper does not give one)."""


@dataclass(frozen=True)
class ScalarSettings(MRSchRunnerSettings):
    """How PPO trains the scalar-reward baseline (MRSch §IV-D: a policy-gradient agent)."""

    lr: float = 3e-4
    """Adam learning rate."""
    gamma: float = 0.99
    """Discount of the per-decision utilisation reward."""
    lambda_: float = 0.95
    """GAE λ."""
    train_batch_size: int = 2048
    """Env steps per iteration."""
    minibatch_size: int = 256
    """Steps per gradient step."""
    num_epochs: int = 4
    """Passes over each iteration's batch."""
    clip_param: float = 0.2
    """PPO clip range."""
    entropy_coeff: float = 0.01
    """Entropy bonus."""
    hiddens: tuple[int, ...] = (256, 128)
    """Hidden layers of the policy and value MLPs."""
