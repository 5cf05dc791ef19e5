"""Configuration of the RLSchert / DeepRM env: a frozen dataclass built from RLlib's env_config dict (no ray/torch)."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from schedrl import paths
from schedrl.agents.dictconfig import DictConfig, check_choices
from schedrl.dtsim import DTSimConfig, JobTable, load_jobs, synthetic_jobs
from schedrl.dtsim.jobs import VASP_FILENAME, find_vasp_jobs, shared_data_dir

REWARDS = ("slowdown", "completion")
ESTIMATES = ("recorded", "prerun")
TEACHERS = {"saf": "SAF", "saf-hold": "SAF + hold"}
"""Allocation teachers of the imitation term and the warm start (value: the label reports use): RLSchert's SAF,
or ours, SAF holding long jobs back (`schedrl.dtsim.heuristics.SAFHold`, L = 60, R = 3)."""
SYNTHETIC = "synthetic"
"""`jobs` value selecting the seeded synthetic job table explicitly."""
DATA_PATH_ENV = paths.DATA_PATH
"""Environment variable: directories (os.pathsep-separated) searched for the VASP job file and relative `jobs` paths
(a relative directory is taken relative to where the process started: `schedrl.paths`)."""

SEQUENCE_FIELDS = ("jobs", "synthetic_size", "res_slot", "job_len", "job_rate", "simu_len", "predictable", "max_seq")
"""The fields that decide what a seeded sequence is: its job table (and the check of it against the pool), its
arrivals, which jobs follow their re-estimates, and its step cap. Checkpoints that agree on these are scored on
the same sequences by `schedrl evaluate A B` (how they schedule: kills, estimates, rewards, images, may differ)."""


@dataclass(frozen=True)
class RLSchertEnvConfig(DictConfig):
    """What an `RLSchertEnv` simulates and rewards; defaults are RLSchert Table 2. Unknown keys are rejected by `from_dict`."""

    dict_label = "RLSchert env"
    tuple_fields = {"sequence_seeds": int}

    res_slot: int = 20
    """Resource units in the pool (RLSchert Table 2: 12 to 24; one unit = 10 cores)."""
    job_rate: float = 0.7
    """Probability of an arrival at each of the first `simu_len` steps (Table 2: 0.3 to 0.95)."""
    simu_len: int = 200
    """Arrival steps per episode (Table 2: 200)."""
    num_nw: int = 5
    """Visible waiting-job slots (Table 2: 5)."""
    horizon: int = 120
    """Steps of the canvas and of every job image (Table 2: time_horizon 120)."""
    backlog: int = 600
    """Waiting jobs beyond the visible slots (Table 2: 600)."""
    num_kill: int = 8
    """Running-queue slots, one kill action each (RLSchert §4.1.3: 8)."""
    job_len: int = 100
    """Longest runtime estimate in steps (Table 2: 100)."""
    max_seq: int = 3000
    """Step cap of an episode (Table 2: 3000)."""
    job_width: int = 10
    """Width of each waiting-job image in units, capped at res_slot (`image_job_width`): the widest job drawable
    (VASP: 10 units = 100 cores)."""
    reward: str = "slowdown"
    """`slowdown` (RLSchert Eq. 9: -sum 1/estimated length per step) or `completion` (Eq. 10: -jobs in the system per step)."""
    kill: bool = True
    """True: Discrete(num_nw + 1 + num_kill) with kill actions (RLSchert); False: Discrete(num_nw + 1) (DeepRM, RLSchert without kill)."""
    estimates: str = "recorded"
    """`recorded`: running jobs follow the recorded re-estimates (RLSchert); `prerun`: the pre-run prediction only (DeepRM)."""
    requeue_estimate: str = "latest"
    """A killed job is requeued with its `latest` re-estimate or its `prerun` prediction (`schedrl.dtsim.DTSimConfig`)."""
    predictable: float = 1.0
    """Fraction of jobs whose re-estimates are followed while they run (RLSchert Table 9); the others keep their
    pre-run prediction. Chosen per sequence with the sequence's own RNG (`schedrl.dtsim.sample_sequence`)."""
    work_conserving: bool = False
    """Ours, not the paper's: the void action (let time pass) is invalid while a visible job can start at once
    (earliest-fit offset 0), as the heuristics never idle then. Off: DeepRM's and RLSchert's action space, where a
    greedy policy can void forever with jobs that fit (docs/experiments/rlschert.md)."""
    teacher: str = "saf"
    """The allocation teacher (`TEACHERS`) the `teacher` observation follows when the kill rule names no kill: `saf`
    (RLSchert §3.5) or `saf-hold` (ours: SAF that holds a job predicted longer than 60 steps unless it leaves 3
    units free)."""
    jobs: str = ""
    """Job file (VASP CSV); empty: `rlschert-vasp-jobs.csv.gz` from $SCHEDRL_DATA_PATH or ../shared/data, else the
    synthetic table (with a note on stderr); `synthetic`: the synthetic table."""
    synthetic_size: int = 1000
    """Jobs in the synthetic table (when it is used)."""
    sequence_seeds: tuple[int, ...] = ()
    """Fixed sequence seeds, cycled through in order (validation, evaluation); empty: sequences drawn from the env's RNG."""

    def __post_init__(self) -> None:
        if isinstance(self.job_rate, bool) or not isinstance(self.job_rate, (int, float)) or not 0.0 < self.job_rate <= 1.0:
            raise ValueError(f"job_rate must be in (0, 1] (the arrival probability per step); got {self.job_rate!r}")
        if (isinstance(self.predictable, bool) or not isinstance(self.predictable, (int, float))
                or not 0.0 <= self.predictable <= 1.0):
            raise ValueError(f"predictable must be a fraction in [0, 1] (the share of jobs whose re-estimates are "
                             f"followed); got {self.predictable!r}")
        for name in ("res_slot", "job_width", "synthetic_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        check_choices(self, reward=REWARDS, teacher=TEACHERS, estimates=ESTIMATES)
        for name in ("kill", "work_conserving"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false; got {getattr(self, name)!r}")
        self.dtsim_config()  # the cluster's own checks (positive sizes, job_len <= horizon, ...)

    @property
    def teacher_label(self) -> str:
        """How reports name the teacher: `kill rule + SAF`, `SAF + hold`, ..."""
        return ("kill rule + " if self.kill else "") + TEACHERS[self.teacher]

    @property
    def n_actions(self) -> int:
        """num_nw allocations, void, and num_kill kills when `kill` (RLSchert §4.1.3: 14; DeepRM: 6)."""
        return self.num_nw + 1 + (self.num_kill if self.kill else 0)

    @property
    def image_job_width(self) -> int:
        """Columns of each waiting-job image: min(job_width, res_slot) (no job is wider than the pool)."""
        return min(self.job_width, self.res_slot)

    def dtsim_config(self) -> DTSimConfig:
        """The discrete-time cluster these settings describe."""
        return DTSimConfig(res_slot=self.res_slot, time_horizon=self.horizon, num_nw=self.num_nw, backlog=self.backlog,
                           num_kill=self.num_kill, job_rate=float(self.job_rate), simu_len=self.simu_len,
                           max_seq=self.max_seq, job_len=self.job_len,
                           estimates="running" if self.estimates == "recorded" else "prerun",
                           requeue_estimate=self.requeue_estimate, predictable=float(self.predictable))

    def jobs_path(self) -> Path | None:
        """The job file these settings read, or None for the synthetic table; FileNotFoundError for a named file that is absent."""
        if self.jobs == SYNTHETIC:
            return None
        if self.jobs:
            path = Path(self.jobs).expanduser()
            if path.is_file():
                return path.resolve()
            for d in paths.env_paths(DATA_PATH_ENV):
                if not path.is_absolute() and (d / path).is_file():
                    return (d / path).resolve()
            raise FileNotFoundError(f"job file {self.jobs} not found (also looked in ${DATA_PATH_ENV})")
        found = find_vasp_jobs()
        return None if found is None else found.resolve()

    def portable(self) -> RLSchertEnvConfig:
        """These settings as a run hands them to its trials, which Tune runs in their own trial directories: a `jobs`
        file named relative to the working directory made absolute. A name found only in `$SCHEDRL_DATA_PATH`
        stays a name (each process looks it up there, as every node of a cluster can), as do `""` and `synthetic`."""
        if self.jobs in ("", SYNTHETIC) or Path(self.jobs).is_absolute():
            return self
        path = Path(self.jobs).expanduser()
        return replace(self, jobs=str(path.resolve())) if path.is_file() else self

    def job_table(self) -> JobTable:
        """The job table, checked against the pool: ValueError when res_slot or job_width is below the largest job."""
        path = self.jobs_path()
        if path is None:
            if self.jobs != SYNTHETIC:
                print(f"note: {VASP_FILENAME} not found in ${DATA_PATH_ENV} or {shared_data_dir()}; "
                      f"using the synthetic job table ({self.synthetic_size} jobs)", file=sys.stderr)
            table = _synthetic(self.synthetic_size)
        else:
            table = _load(str(path), path.stat().st_mtime_ns)
        self.check_table(table)
        return table

    def check_table(self, table: JobTable) -> None:
        """ValueError in one line when the largest job does not fit the pool or the job image."""
        biggest = int(table.units.max())
        if biggest > self.res_slot:
            raise ValueError(f"res_slot={self.res_slot} is smaller than the largest job of {table.source} ({biggest} units)")
        if biggest > self.image_job_width:
            raise ValueError(f"job_width={self.job_width} is smaller than the largest job of {table.source} ({biggest} units)")


@functools.lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int) -> JobTable:
    # every env of a runner reads the same (read-only) table once
    return load_jobs(path)


@functools.lru_cache(maxsize=4)
def _synthetic(n: int) -> JobTable:
    return synthetic_jobs(n, seed=0)
