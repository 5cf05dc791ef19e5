"""Configuration of the discrete-time cluster (DeepRM's model as RLSchert §3 and Table 2 set it up)."""

from __future__ import annotations

from dataclasses import dataclass

ESTIMATES = ("running", "prerun")
REQUEUE_ESTIMATES = ("latest", "prerun")


@dataclass(frozen=True)
class DTSimConfig:
    """One resource pool in 5-minute steps; the defaults are RLSchert's Table 2 (res_slot 20 within its 12-24 range)."""

    res_slot: int = 20
    """Resource units in the pool (RLSchert Table 2: 12 to 24; one unit = 10 cores)."""
    time_horizon: int = 120
    """Steps of the future-allocation canvas (RLSchert Table 2: 120); a job must fit inside it to be allocated."""
    num_nw: int = 5
    """Visible waiting-job slots: the oldest `num_nw` waiting jobs (RLSchert Table 2: 5)."""
    backlog: int = 600
    """Waiting jobs beyond the visible slots; an arrival that finds them all taken is dropped and counted (Table 2: 600)."""
    num_kill: int = 8
    """Running-queue slots, one kill action each; allocated jobs (running or placed in the future) hold one, and no
    job is allocated while all are held (RLSchert §4.1.3: 8 kill actions)."""
    job_rate: float = 0.7
    """Probability that a job arrives at each of the first `simu_len` steps (Bernoulli arrivals; Table 2: 0.3 to 0.95)."""
    simu_len: int = 200
    """Arrival steps of a sequence (Table 2: 200); the episode runs on until every job has finished."""
    max_seq: int = 3000
    """Time-step cap: an episode still running at this step ends truncated (Table 2: max_seq 3000)."""
    job_len: int = 100
    """Longest runtime estimate in steps: estimates are clipped to [1, job_len] (Table 2: 100; the paper limits runtime to 100 steps)."""
    estimates: str = "running"
    """`running`: a running job's estimate follows the recorded per-step re-estimates (RLSchert); `prerun`: the
    pre-run prediction only (DeepRM)."""
    requeue_estimate: str = "latest"
    """What a killed job is requeued with: `latest`, its latest re-estimate (RLSchert §4: rescheduled "after
    re-estimating the runtime"), or `prerun`, its pre-run prediction."""
    predictable: float = 1.0
    """Fraction of jobs whose re-estimates are followed while they run (RLSchert Table 9's predictable job
    proportion); the others keep their pre-run prediction, as `estimates="prerun"` does for every job. Which
    jobs: one uniform draw per job made with the sequence's own RNG (`sample_sequence`), job j predictable
    when its draw < `predictable`; 1.0 (every job) draws nothing. Only matters with `estimates="running"`."""

    def __post_init__(self) -> None:
        for name in ("res_slot", "time_horizon", "num_nw", "num_kill", "simu_len", "max_seq", "job_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"DTSimConfig.{name} must be a positive integer, got {value!r}")
        if not isinstance(self.backlog, int) or self.backlog < 0:
            raise ValueError(f"DTSimConfig.backlog must be an integer >= 0, got {self.backlog!r}")
        if not 0.0 < self.job_rate <= 1.0:
            raise ValueError(f"DTSimConfig.job_rate must be in (0, 1], got {self.job_rate!r}")
        if (isinstance(self.predictable, bool) or not isinstance(self.predictable, (int, float))
                or not 0.0 <= self.predictable <= 1.0):
            raise ValueError(f"DTSimConfig.predictable must be a fraction in [0, 1], got {self.predictable!r}")
        if self.job_len > self.time_horizon:
            raise ValueError(f"DTSimConfig.job_len={self.job_len} exceeds time_horizon={self.time_horizon}: "
                             "the longest job must fit on the canvas (RLSchert §3.3)")
        if self.max_seq < self.simu_len:
            raise ValueError(f"DTSimConfig.max_seq={self.max_seq} is shorter than simu_len={self.simu_len}")
        if self.estimates not in ESTIMATES:
            raise ValueError(f"DTSimConfig.estimates must be one of {', '.join(ESTIMATES)}; got {self.estimates!r}")
        if self.requeue_estimate not in REQUEUE_ESTIMATES:
            raise ValueError(f"DTSimConfig.requeue_estimate must be one of {', '.join(REQUEUE_ESTIMATES)}; "
                             f"got {self.requeue_estimate!r}")

    @property
    def void_action(self) -> int:
        """The action that advances time (RLSchert's None action)."""
        return self.num_nw

    @property
    def n_actions(self) -> int:
        """num_nw allocations, the void action, num_kill kills (RLSchert §4.1.3: 5 + 1 + 8 = 14)."""
        return self.num_nw + 1 + self.num_kill
