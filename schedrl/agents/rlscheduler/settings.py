"""PPO settings of the RLScheduler agent (no ray/torch imports: read by the CLI and sweep files)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedrl.agents.rlscheduler.warm_start import AUTO_CLONES, check_teacher
from schedrl.agents.runners import RunnerSettings

VF_LR_KEY = "vf_lr"
"""``learner_config_dict`` key: learning rate of the value-network optimizer."""
TARGET_KL_KEY = "target_kl"
"""``learner_config_dict`` key: KL early-stopping target (None disables early stopping)."""
POLICY_UPDATE_STEPS_KEY = "policy_update_steps"
"""Learner metric: policy optimizer steps taken in the last update (at most num_epochs x minibatches)."""
WARM_START_KEY = "warm_start"
"""``learner_config_dict`` key: {"teacher", "episodes", "epochs", "seed", "gamma"}; teacher None: off (`warm_start.py`)."""
POLICY_EARLY_STOPPED_KEY = "policy_early_stopped"
"""Learner metric: 1.0 if the last update stopped its policy steps on KL, else 0.0."""

KL_STOP_FACTOR = 1.5
"""Spinning Up PPO (used by RLScheduler): policy steps stop once KL > 1.5 * target_kl."""


@dataclass(frozen=True)
class PPOSettings(RunnerSettings):
    """PPO hyperparameters; defaults are RLScheduler's (paper §V-A and the authors' code).

    "Authors' code" is DIR-LAB/deep-batch-scheduler, ``ppo-pick-jobs.py`` (the ``ppo()``
    signature and its command-line defaults), the implementation the paper cites for "more
    hyperparameters". See the module docstring for how the policy/value learning rates and the
    KL target map onto RLlib.
    """

    gamma: float = 1.0  # authors' code: --gamma default 1 (undiscounted episode reward)
    """Discount factor."""
    lambda_: float = 0.97  # authors' code: ppo(lam=0.97)
    """GAE lambda."""
    clip_param: float = 0.2  # authors' code: ppo(clip_ratio=0.2)
    """PPO ratio clipping."""
    lr: float = 3e-4  # authors' code: ppo(pi_lr=3e-4)
    """Learning rate of the policy optimizer."""
    vf_lr: float = 1e-3  # authors' code: ppo(vf_lr=1e-3); paper §V-A: "learning rate is 10^-3"
    """Learning rate of the value-network optimizer (a second Adam, see module docstring)."""
    target_kl: float | None = 0.01  # authors' code: ppo(target_kl=0.01)
    """Policy steps of an update stop once approx. KL > 1.5 * target_kl; None never stops."""
    num_epochs: int = 80  # paper §V-A: "80 iterations"; authors' code: train_pi_iters = train_v_iters = 80
    """Passes over the train batch per update."""
    train_batch_size_per_learner: int = 100 * 256  # paper §V-A: 100 trajectories x 256 jobs per epoch
    """Env steps sampled per training iteration."""
    minibatch_size: int | None = None  # Spinning Up takes full-batch gradient steps
    """Minibatch size; None means the whole train batch (one gradient step per epoch)."""
    entropy_coeff: float = 0.0  # Spinning Up PPO has no entropy bonus
    """Entropy bonus coefficient."""
    vf_clip_param: float = math.inf  # Spinning Up's value loss is plain, unclipped MSE
    """Clip on the per-sample value loss (RLlib's default 10 would cap large bounded slowdowns)."""
    num_env_runners: int = 1  # ours: 2-core machines fit one runner beside the learner
    """Sampling processes; 0 samples in the driver (tests, debugging)."""
    num_envs_per_env_runner: int = 4  # ours: vectorising pays more than runners on few cores
    """Environments stepped together by each env runner."""
    warm_start: str | None = None  # ours; the paper starts from random weights
    """Behaviour-clone this heuristic (or `auto`: the best on the training sequences) before PPO; None: off."""
    warm_start_episodes: int = 64  # ours: 16k decisions, ~4 s of demonstrations on one core
    """Training sequences the teacher schedules for the warm start."""
    warm_start_epochs: int = 16  # ours: ~98% greedy agreement with SJF on the default trace, ~7 s
    """Passes over the demonstrations (512-decision minibatches)."""
    warm_start_clones: int = AUTO_CLONES  # ours
    """With `auto`: how many of the best heuristics on the training sequences are cloned and scored on the
    validation sequences (the best clone is kept); 1 clones the best heuristic on the training sequences."""
    warm_start_smoothing: float = 0.0  # ours
    """Label smoothing of the clone: this share of the target spread over the valid actions, so a clone that
    matches its teacher exactly (key features) still explores under PPO. 0: plain cross-entropy."""
    overlap_sampling: bool = False  # ours (`schedrl/agents/overlapped_ppo.py`)
    """Env runners sample the next batch while the learner trains on the last one (one update of staleness);
    needs num_env_runners >= 1."""

    def __post_init__(self) -> None:
        problems = []
        if not 0.0 <= self.gamma <= 1.0:
            problems.append(f"gamma={self.gamma} must be in [0, 1]")
        if not 0.0 <= self.lambda_ <= 1.0:
            problems.append(f"lambda_={self.lambda_} must be in [0, 1]")
        for name in ("clip_param", "lr", "vf_lr", "vf_clip_param"):
            if not getattr(self, name) > 0:
                problems.append(f"{name}={getattr(self, name)} must be > 0")
        if self.target_kl is not None and not self.target_kl > 0:
            problems.append(f"target_kl={self.target_kl} must be > 0 or None")
        for name in ("num_epochs", "train_batch_size_per_learner", "num_envs_per_env_runner"):
            if getattr(self, name) < 1:
                problems.append(f"{name}={getattr(self, name)} must be >= 1")
        if self.minibatch_size is not None and not 1 <= self.minibatch_size <= self.train_batch_size_per_learner:
            problems.append(
                f"minibatch_size={self.minibatch_size} must be in [1, train_batch_size_per_learner="
                f"{self.train_batch_size_per_learner}] or None"
            )
        if self.entropy_coeff < 0:
            problems.append(f"entropy_coeff={self.entropy_coeff} must be >= 0")
        if self.num_env_runners < 0 or self.num_gpus_per_learner < 0:
            problems.append("num_env_runners and num_gpus_per_learner must be >= 0")
        for name, amount in (self.env_runner_resources or {}).items():
            if not isinstance(name, str) or not name or name in ("CPU", "GPU", "memory"):
                problems.append(f"env_runner_resources name {name!r} must be a custom resource name (not CPU/GPU/memory)")
            elif not (isinstance(amount, (int, float)) and amount > 0):
                problems.append(f"env_runner_resources[{name!r}]={amount!r} must be a number > 0")
        try:
            object.__setattr__(self, "warm_start", check_teacher(self.warm_start))
        except ValueError as e:
            problems.append(str(e))
        if self.warm_start_episodes < 1 or self.warm_start_epochs < 0:
            problems.append(f"warm_start_episodes={self.warm_start_episodes} must be >= 1 and "
                            f"warm_start_epochs={self.warm_start_epochs} >= 0")
        if self.warm_start_clones < 1:
            problems.append(f"warm_start_clones={self.warm_start_clones} must be >= 1")
        if not 0.0 <= self.warm_start_smoothing < 1.0:
            problems.append(f"warm_start_smoothing={self.warm_start_smoothing} must be in [0, 1)")
        if self.overlap_sampling and self.num_env_runners < 1:
            problems.append("overlap_sampling needs num_env_runners >= 1 (env runners sample while the learner trains)")
        if self.max_env_runner_restarts < 0:
            problems.append(f"max_env_runner_restarts={self.max_env_runner_restarts} must be >= 0")
        if problems:
            raise ValueError("invalid PPOSettings: " + "; ".join(problems))
