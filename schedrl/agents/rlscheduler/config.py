"""Configuration of the RLScheduler environment: a frozen dataclass built from RLlib's env_config dict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Mapping

from schedrl.agents.dictconfig import DictConfig, check_choices
from schedrl.metrics import METRICS
from schedrl.sim.config import BACKFILLS, PRESETS, check_slurm_site

REWARD_BASELINES = ("none", "sjf", "f1", "wfp3", "unicep", "fcfs")
"""`reward_baseline` values: none, or the heuristic the final reward is measured against."""

DENSE_METRICS = ("bsld", "wait", "turnaround", "slowdown")
"""Objectives that are a mean over jobs of (a per-job weight x the job's wait) plus a term no schedule changes,
so `dense_reward` can pay them out while the waiting happens (see `RLSchedulerEnv`)."""

# RLScheduler §V-A: training sequences of 256 jobs; §V-B: evaluation on sequences of 1,024 jobs
TRAIN_SEQUENCE_LENGTH = 256
EVAL_SEQUENCE_LENGTH = 1024


@dataclass(frozen=True)
class RLSchedulerEnvConfig(DictConfig):
    """What an `RLSchedulerEnv` simulates and rewards. Unknown keys are rejected by `from_dict`."""

    dict_label = "RLScheduler env"
    tuple_fields = {"starts": int, "train_starts": int, "key_features": str}
    dict_fields = {"norm": None, "slurm": None}

    DERIVED_FIELDS: ClassVar[tuple[str, ...]] = ("train_starts", "filter_phase1_episodes", "filter_phase1_iterations")
    """Filled in from the data by `RLSchedulerAgent.prepare` (trajectory filtering); never set by hand."""

    trace: str = "default"
    """Catalog name or SWF path of the workload."""
    cleaning: str = "default"
    """Trace cleaning preset: default, none or rlscheduler."""
    preset: str = "standard"
    """Simulator semantics: `standard` (schedrl's) or `rlscheduler` (SchedGym's, to reproduce the paper)."""
    metric: str = "bsld"
    """Objective rewarded at the end of an episode: bsld, wait, turnaround, slowdown, utilization, fairness."""
    backfill: str = "none"
    """Backfilling during the waits: none, easy, conservative, rlscheduler or slurm."""
    slurm: Mapping[str, int] = field(default_factory=dict)
    """Under backfill slurm, the site's Slurm (`SimConfig` fields of `schedrl.sim.config.SLURM_SITE`: bf_interval,
    bf_resolution, bf_window, bf_max_job_test, node_procs) over Slurm's defaults; a scenario's are given here."""
    sequence_length: int = TRAIN_SEQUENCE_LENGTH
    """Jobs per episode."""
    starts: tuple[int, ...] = ()
    """Fixed start indices, cycled through in order (evaluation); empty: seeded random starts."""
    train_starts: tuple[int, ...] = ()
    """Trajectory filtering phase 1: random starts drawn only from these (see `filtering.py`)."""
    filter_phase1_episodes: int = 0
    """Episodes (per env instance) drawn from `train_starts` before switching to all starts (phase 2)."""
    filter_phase1_iterations: int = 0
    """Training iterations phase 1 was sized for (`filter_phase1_episodes` follows a trial's batch size)."""
    reward_baseline: str = "none"
    """`none`: the final reward is the objective itself (the paper). `sjf` (or another of `REWARD_BASELINES`):
    the objective relative to that heuristic on the same sequence, (sjf - value) / sjf for lower-is-better
    metrics, so sequences of very different difficulty give comparable rewards; each sequence's best schedule
    is unchanged (our addition)."""
    train_fraction: float = 1.0
    """Training sequences lie inside the first `train_fraction` of the cleaned trace; validation and
    evaluation sequences come from the rest, so they are never trained on. 1.0: the paper's protocol
    (random windows of the whole trace for training and testing alike)."""
    validation_share: float = 0.25
    """Share of the held-out part (its first jobs) that the validation sequences choosing the checkpoint come
    from; the final evaluation takes the rest (`Agent.split_range`)."""
    dense_reward: bool = False
    """False: the whole reward at the end of the episode (the paper). True (ours): the same episode return,
    paid as it accrues: after every decision, minus the objective's waiting cost the queue accrued since the
    previous one (e.g. for bsld each waiting job's elapsed wait / max(run time, 10 s), over the sequence's
    job count, over the baseline heuristic's value with `reward_baseline`), the rest at the end; only for
    the metrics in `DENSE_METRICS`."""
    key_features: tuple[str, ...] = ()
    """Heuristics whose priority rank among the visible jobs is an extra feature column each (ours; the
    paper has none): e.g. ("f1",) lets the kernel network represent F1's choice exactly, which its key's
    absolute submit time otherwise hides from the observation. See `observation.KEY_FEATURE_HEURISTICS`."""
    norm: Mapping[str, float] = field(default_factory=dict)
    """Normalisation constants (see `JobFeatures`); empty: derived from this trace. Saved with checkpoints."""

    def __post_init__(self) -> None:
        check_choices(self, metric=METRICS, preset=PRESETS, backfill=BACKFILLS)
        object.__setattr__(self, "slurm", check_slurm_site(self.backfill, self.slurm))
        from schedrl.workload.cleaning import CleaningRules

        CleaningRules.preset(self.cleaning)  # raises ValueError naming the valid presets
        if self.reward_baseline not in REWARD_BASELINES:
            raise ValueError(f"reward_baseline must be one of {', '.join(REWARD_BASELINES)}; got {self.reward_baseline!r}")
        if self.dense_reward and self.metric not in DENSE_METRICS:
            raise ValueError(f"dense_reward needs a metric that is a mean of per-job waits ({', '.join(DENSE_METRICS)}); "
                             f"{self.metric!r} is not: use the final reward (dense_reward=False)")
        from schedrl.agents.rlscheduler.observation import check_key_features

        object.__setattr__(self, "key_features", check_key_features(self.key_features))
        if self.sequence_length < 1:
            raise ValueError(f"sequence_length must be >= 1; got {self.sequence_length}")
        if not 0.0 < self.train_fraction <= 1.0:
            raise ValueError(f"train_fraction must be in (0, 1]; got {self.train_fraction}")
        if not 0.0 < self.validation_share < 1.0:
            raise ValueError(f"validation_share must be in (0, 1) (the held-out part is split between validation "
                             f"and evaluation); got {self.validation_share}")
