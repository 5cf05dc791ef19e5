"""Algorithm settings of the DRAS agents (no ray/torch imports: read by the CLI and sweep files)."""

from __future__ import annotations

from dataclasses import dataclass

from schedrl.agents.runners import RunnerSettings

# DRAS §IV-D: "The learning rate α is set to 0.001" (Adam)
PAPER_LR = 1e-3
# DRAS §III-C: epsilon starts at 1.0 and decays at the rate 0.995
EPSILON_DECAY = 0.995


@dataclass(frozen=True)
class _DRASSettings(RunnerSettings):
    """What both DRAS algorithms share: the runner settings (`schedrl.agents.runners`, defaults kept) and the network."""

    model: str = "scaled"
    """Network preset (`schedrl.agents.dras.modules.MODELS`): scaled (from W and N), theta, cori."""

    def _check(self) -> list[str]:
        """The problems of the fields both algorithms have (each declares its own `lr` and `gamma` defaults)."""
        problems = []
        if self.num_env_runners < 0:
            problems.append(f"num_env_runners={self.num_env_runners} must be >= 0")
        if self.num_envs_per_env_runner < 1:
            problems.append(f"num_envs_per_env_runner={self.num_envs_per_env_runner} must be >= 1")
        if not self.lr > 0:
            problems.append(f"lr={self.lr} must be > 0")
        if not 0.0 <= self.gamma <= 1.0:
            problems.append(f"gamma={self.gamma} must be in [0, 1]")
        return problems


@dataclass(frozen=True)
class PGSettings(_DRASSettings):
    """DRAS-PG (and Decima-PG): REINFORCE with the paper's baseline (DRAS §III-B, Eq. 3)."""

    lr: float = PAPER_LR
    """Adam learning rate."""
    gamma: float = 1.0  # DRAS Eq. (3): undiscounted rewards-to-go within an update
    """Discount of the rewards-to-go."""
    train_batch_size_per_learner: int = 1000  # ours: RLlib's per-iteration overhead wants more than one update
    """Decisions sampled per training iteration."""
    decisions_per_update: int = 100  # ours: DRAS §III-C updates "every ten scheduling instances"; see learner.py
    """Decisions per gradient step (consecutive minibatches of the iteration's batch)."""

    def __post_init__(self) -> None:
        problems = self._check()
        if self.train_batch_size_per_learner < 1 or self.decisions_per_update < 1:
            problems.append("train_batch_size_per_learner and decisions_per_update must be >= 1")
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class DQLSettings(_DRASSettings):
    """DRAS-DQL: RLlib's DQN (target network, replay) over the per-job Q network (DRAS §III-B, Eq. 4)."""

    lr: float = PAPER_LR
    """Adam learning rate."""
    gamma: float = 1.0  # DRAS Eq. (4): r_k + max_a Q(s_k+1, a), undiscounted
    """Discount of the TD target."""
    epsilon_start: float = 1.0  # DRAS §III-C
    """Initial exploration rate."""
    epsilon_decay: float = EPSILON_DECAY  # DRAS §III-C
    """Factor applied to epsilon every `epsilon_decay_steps` decisions."""
    epsilon_decay_steps: int = 100  # ours: the paper does not say what one decay step is
    """Decisions between two decays."""
    epsilon_min: float = 0.01  # ours: keeps some exploration once the decay is done
    """Floor of epsilon."""
    train_batch_size_per_learner: int = 64
    """Replayed transitions per gradient step."""
    replay_capacity: int = 50_000
    """Transitions kept in the replay buffer."""
    learning_starts: int = 1000
    """Decisions sampled before the first update."""
    target_network_update_freq: int = 500
    """Decisions between target network updates."""
    rollout_fragment_length: int = 16  # ours: one gradient step per 16 decisions (replay ratio 64/16 = 4)
    """Decisions sampled between two gradient steps."""
    decisions_per_iteration: int = 1000  # RLlib's DQN default
    """Decisions sampled per training iteration (at least)."""
    double_q: bool = True  # ours: RLlib's default; the paper's Eq. (4) is plain DQN
    """Double Q-learning targets."""

    def __post_init__(self) -> None:
        problems = self._check()
        if not 0.0 < self.epsilon_decay <= 1.0 or not 0.0 <= self.epsilon_min <= self.epsilon_start <= 1.0:
            problems.append("epsilon must satisfy 0 <= epsilon_min <= epsilon_start <= 1 and 0 < epsilon_decay <= 1")
        if self.rollout_fragment_length < 1 or self.decisions_per_iteration < 1:
            problems.append("rollout_fragment_length and decisions_per_iteration must be >= 1")
        if self.epsilon_decay_steps < 1:
            problems.append(f"epsilon_decay_steps={self.epsilon_decay_steps} must be >= 1")
        if problems:
            raise ValueError("; ".join(problems))

    def epsilon_schedule(self) -> list[tuple[int, float]]:
        """Epsilon as RLlib's piecewise-linear schedule: start x decay^(t / decay_steps), floored at epsilon_min.

        One point every ten decays; between points RLlib interpolates linearly (within 0.001 of the
        geometric curve for the paper's 0.995)."""
        points: list[tuple[int, float]] = []
        k = 0
        value = self.epsilon_start
        while value > self.epsilon_min and self.epsilon_decay < 1.0:
            points.append((k * self.epsilon_decay_steps, value))
            k += 10
            value = self.epsilon_start * self.epsilon_decay ** k
        points.append((k * self.epsilon_decay_steps, max(self.epsilon_min, min(value, self.epsilon_start))))
        return points
