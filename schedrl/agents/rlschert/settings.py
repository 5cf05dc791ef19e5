"""Algorithm settings of the RLSchert and DeepRM agents and the imitation schedule (no ray/torch imports)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from schedrl.agents.runners import RunnerSettings

MODELS = ("mlp", "cnn")
"""Networks (RLSchert Table 3: ppo_bs128_mlp64_64, ppo_bs128_cnn); the first is the default."""
KILL_HEADS = ("flat", "slots")
"""How the network scores kill actions (`modules.py`): `flat` (the paper's), `slots` (ours: one scorer shared by the slots)."""
# RLSchert Table 4: alpha_t = 0.5 at the start, annealed to 0 ("at the end of the training, we set alpha_t to zero")
IMITATION_START = 0.5
IMITATION_STEPS = 200_000  # ours: the paper does not say over how many steps alpha_t decays
RLSCHERT_IMITATION: tuple[tuple[int, float], ...] = ((0, IMITATION_START), (IMITATION_STEPS, 0.0))
NO_IMITATION: tuple[tuple[int, float], ...] = ((0, 0.0),)

IMITATION_WEIGHT_KEY = "imitation_weight"
"""Learner metric: alpha_t used in this update."""
IMITATION_LOSS_KEY = "imitation_loss"
"""Learner metric: mean -log pi(teacher action) over the update's minibatches."""
TEACHER_AGREEMENT_KEY = "teacher_agreement"
"""Learner metric: fraction of samples whose most likely action is the teacher's."""
POLICY_STEPS_KEY = "policy_update_steps"
"""Learner metric: gradient steps taken in this update before the KL early stop."""
VALUE_STEPS_KEY = "value_only_steps"
"""Learner metric: value-only gradient steps taken in this update after the policy's KL early stop."""
SCHEDULE_KEY = "imitation_schedule"
VALUE_AFTER_STOP_KEY = "value_after_kl_stop"
TARGET_KL_KEY = "target_kl"
KL_STOP_FACTOR_KEY = "kl_stop_factor"
DISCOUNT_KEY = "discount"
"""``learner_config_dict`` key: "decision" or "time" (`advantages.py`)."""
DISCOUNTS = ("decision", "time")
WARM_START_KEY = "warm_start"
"""``learner_config_dict`` key: the DAgger warm start's spec (`warm_start.py`); None: off."""


def imitation_weight(schedule: Sequence[Sequence[float]], timestep: float) -> float:
    """alpha_t at `timestep` env steps: piecewise linear through the (timestep, value) points, constant outside them."""
    points = [(float(t), float(v)) for t, v in schedule]
    if timestep <= points[0][0]:
        return points[0][1]
    for (t0, v0), (t1, v1) in zip(points, points[1:]):
        if timestep <= t1:
            return v0 + (v1 - v0) * (timestep - t0) / (t1 - t0)
    return points[-1][1]


def check_schedule(schedule: Sequence[Sequence[float]]) -> tuple[tuple[int, float], ...]:
    """The schedule as a tuple of (int timestep, float value); ValueError when it is not increasing non-negative points."""
    try:
        points = tuple((int(t), float(v)) for t, v in schedule)
    except (TypeError, ValueError):
        raise ValueError(f"imitation_schedule must be (timestep, weight) pairs; got {schedule!r}") from None
    if not points:
        raise ValueError("imitation_schedule needs at least one (timestep, weight) point")
    if any(v < 0 for _, v in points) or any(t < 0 for t, _ in points):
        raise ValueError(f"imitation_schedule timesteps and weights must be >= 0; got {points}")
    if any(t1 <= t0 for (t0, _), (t1, _) in zip(points, points[1:])):
        raise ValueError(f"imitation_schedule timesteps must increase; got {points}")
    return points


@dataclass(frozen=True)
class RLSchertSettings(RunnerSettings):
    """PPO with the imitation term (RLSchert §3.5, Table 4), env runners and seeds."""

    lr: float = 1e-4  # RLSchert Table 4
    """Adam learning rate."""
    gamma: float = 0.99  # RLSchert Table 4, §3.4
    """Discount factor."""
    discount: str = "decision"  # RLSchert Table 4's gamma is per env step (decision)
    """`decision`: gamma per decision (RLlib's GAE); `time`: gamma per time step, kills and allocations within a
    step undiscounted (ours, `advantages.py`)."""
    lambda_: float = 0.95  # RLSchert Table 4: tau
    """GAE parameter."""
    clip_param: float = 0.2  # RLSchert Table 4: epsilon
    """PPO clip threshold."""
    num_epochs: int = 5  # RLSchert Table 4: epochs (ppo_epoch)
    """Passes over each sampled batch."""
    target_kl: float = 0.01  # RLSchert Table 4: KL target
    """KL target of the early stop."""
    kl_stop_factor: float = 1.5  # Spinning Up's early stop, as RLSchert's Algorithm 1 stops "by KL target"
    """An update stops taking policy steps once the approximate KL exceeds kl_stop_factor x target_kl."""
    value_after_kl_stop: bool = True  # Spinning Up's PPO: the value function takes all its steps
    """After the KL early stop the value network keeps training on the remaining minibatches (False: the whole
    update stops, value included)."""
    vf_loss_coeff: float = 0.25  # RLSchert Table 4: alpha_v
    """Weight of the value loss."""
    entropy_coeff: float = 0.02  # RLSchert Table 4: alpha_e
    """Weight of the entropy bonus."""
    minibatch_size: int = 128  # RLSchert Table 4: batch size 128
    """Samples per gradient step."""
    train_batch_size_per_learner: int = 4096  # ours: the paper does not give the env steps per update
    """Env steps sampled per training iteration."""
    imitation_schedule: tuple[tuple[int, float], ...] = RLSCHERT_IMITATION
    """alpha_t as (env steps sampled, weight) points, linear in between (RLSchert Eq. 11: 0.5 annealed to 0)."""
    warm_start: bool = True  # ours: the paper starts PPO from random weights (with Eq. 11's term)
    """Clone the env's teacher (kill rule, else SAF) by DAgger before PPO (`warm_start.py`)."""
    warm_start_episodes: int = 32  # ours: ~19,000 teacher decisions at the default env
    """Training sequences the teacher drives in round 0."""
    warm_start_rounds: int = 4  # ours: one round does most of it, 2-4 change little (docs/experiments/rlschert.md)
    """DAgger rounds after round 0 (the clone drives, the teacher labels)."""
    warm_start_round_episodes: int = 16
    """Training sequences the clone drives in each DAgger round."""
    warm_start_epochs: int = 8
    """Epochs of the fit after round 0."""
    warm_start_round_epochs: int = 4
    """Epochs of the refit after each DAgger round (over everything gathered)."""
    warm_start_kill_weight: float = 1.0
    """Weight of the decisions where the teacher kills in the clone's loss (kills are ~2.5% of its decisions)."""
    model: str = "mlp"
    """Network: `mlp` (64-64, RLSchert Table 3's best) or `cnn`."""
    kill_head: str = "flat"  # RLSchert: one output layer for all 14 actions
    """Kill logits from the network's output layer (`flat`) or from one MLP shared by the running slots (`slots`,
    ours: each slot's kill scored from that slot's features and the state's summary; `modules.py`)."""
    num_env_runners: int = 0  # ours: on 2 cores sampling in the driver beats a runner process
    """Sampling processes; 0 samples in the driver."""
    num_envs_per_env_runner: int = 4
    """Environments stepped together by each env runner."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "imitation_schedule", check_schedule(self.imitation_schedule))
        problems = []
        for name in ("lr", "target_kl", "kl_stop_factor", "clip_param"):
            if not getattr(self, name) > 0:
                problems.append(f"{name}={getattr(self, name)} must be > 0")
        for name in ("gamma", "lambda_"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name}={getattr(self, name)} must be in [0, 1]")
        for name in ("num_epochs", "minibatch_size", "train_batch_size_per_learner", "num_envs_per_env_runner",
                     "warm_start_episodes", "warm_start_round_episodes", "warm_start_epochs"):
            if getattr(self, name) < 1:
                problems.append(f"{name}={getattr(self, name)} must be >= 1")
        if not self.warm_start_kill_weight > 0:
            problems.append(f"warm_start_kill_weight={self.warm_start_kill_weight} must be > 0")
        if self.warm_start_rounds < 0 or self.warm_start_round_epochs < 0:
            problems.append(f"warm_start_rounds={self.warm_start_rounds} and warm_start_round_epochs="
                            f"{self.warm_start_round_epochs} must be >= 0")
        if self.num_env_runners < 0:
            problems.append(f"num_env_runners={self.num_env_runners} must be >= 0")
        if self.vf_loss_coeff < 0 or self.entropy_coeff < 0:
            problems.append("vf_loss_coeff and entropy_coeff must be >= 0")
        if self.discount not in DISCOUNTS:
            problems.append(f"discount must be one of {', '.join(DISCOUNTS)}; got {self.discount!r}")
        if self.model not in MODELS:
            problems.append(f"model must be one of {', '.join(MODELS)}; got {self.model!r}")
        if self.kill_head not in KILL_HEADS:
            problems.append(f"kill_head must be one of {', '.join(KILL_HEADS)}; got {self.kill_head!r}")
        if problems:
            raise ValueError("; ".join(problems))

    @classmethod
    def from_dict(cls, data: Mapping) -> "RLSchertSettings":
        data = dict(data)
        if "imitation_schedule" in data:
            data["imitation_schedule"] = check_schedule(data["imitation_schedule"])
        return cls(**data)

    def warm_start_spec(self) -> dict | None:
        """What `warm_start.dagger` needs (the seed and gamma are the built algorithm's); None when off."""
        if not self.warm_start:
            return None
        return {"episodes": self.warm_start_episodes, "rounds": self.warm_start_rounds,
                "round_episodes": self.warm_start_round_episodes, "epochs": self.warm_start_epochs,
                "round_epochs": self.warm_start_round_epochs, "discount": self.discount,
                "kill_weight": self.warm_start_kill_weight}


@dataclass(frozen=True)
class DeepRMSettings(RLSchertSettings):
    """DeepRM's: the same PPO without RLSchert's imitation term or our warm start."""

    imitation_schedule: tuple[tuple[int, float], ...] = NO_IMITATION
    """alpha_t points: none (DeepRM has no imitation term)."""
    warm_start: bool = False
    """DeepRM starts from random weights."""
