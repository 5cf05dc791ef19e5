"""Pick a training run's checkpoint by validation on long sequences the final evaluation does not use.

`schedrl train` evaluates its last checkpoint, and its per-iteration validation (a few sequences of
the training length, 256 jobs) is too noisy to choose by: on Lublin-1 it ranked the policy below
SJF while the 1,024-job evaluation put it ahead of every heuristic. This module scores every
checkpoint of a run greedily on `sequences` validation sequences of evaluation length, drawn with
their own seed and kept clear of the run's evaluation sequences (no job of a validation sequence
lies in an evaluation sequence), so the choice never sees the numbers it is later judged by.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from schedrl.eval.compare import compare
from schedrl.workload.workload import Workload

SELECTION_FILE = "selection.json"
"""Written into the run directory: the validation starts, every checkpoint's score, the best."""


@dataclass(frozen=True)
class Selection:
    """Validation scores of a run's checkpoints and the one chosen."""

    metric: str
    lower_is_better: bool
    starts: list[int]
    jobs: int
    scores: dict[str, float]
    """Checkpoint path -> mean validation metric."""

    @property
    def best(self) -> str:
        return (min if self.lower_is_better else max)(self.scores, key=self.scores.get)

    def to_dict(self) -> dict:
        return {"metric": self.metric, "starts": self.starts, "jobs": self.jobs, "scores": self.scores,
                "best": self.best}


def run_checkpoints(run_dir: Path) -> list[Path]:
    """The checkpoints of a `schedrl train` run, in training order."""
    found = sorted(run_dir.glob("*/*/checkpoint_*"))
    if not found:
        raise FileNotFoundError(f"no checkpoints under {run_dir}: is it a `schedrl train --out` directory?")
    return found


def validation_starts(workload: Workload, jobs: int, sequences: int, seed: int,
                      avoid: list[int], avoid_jobs: int) -> list[int]:
    """`sequences` seeded starts whose `jobs`-job sequences share no job with any avoided sequence."""
    last = len(workload) - jobs
    if last < 0:
        raise ValueError(f"trace {workload.name!r} has {len(workload)} jobs, fewer than --jobs {jobs}")
    free = np.ones(last + 1, dtype=bool)
    for s in avoid:  # a start s' overlaps [s, s + avoid_jobs) when s - jobs < s' < s + avoid_jobs
        free[max(0, s - jobs + 1):max(0, min(last + 1, s + avoid_jobs))] = False
    candidates = np.flatnonzero(free)
    if len(candidates) < sequences:
        raise ValueError(f"only {len(candidates)} starts of {workload.name!r} keep {jobs}-job sequences clear of "
                         f"the {len(avoid)} evaluation sequences; ask for fewer --sequences or --jobs")
    rng = np.random.default_rng(seed)
    return sorted(int(s) for s in rng.choice(candidates, size=sequences, replace=False))


def select_checkpoint(run_dir: str | Path, sequences: int = 10, jobs: int = 1024, seed: int = 30_000,
                      every: int = 1, log=print) -> Selection:
    """Score every `every`-th checkpoint of the run (and its last) on validation sequences; write `selection.json`."""
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import RUN_FILE, RunRecord
    from schedrl.metrics import METRICS

    run_dir = Path(run_dir).expanduser().resolve()
    if sequences < 1 or every < 1:
        raise ValueError(f"--sequences and --every must be >= 1, got {sequences} and {every}")
    record = run_dir / RUN_FILE
    if not record.is_file():
        raise FileNotFoundError(f"{record} not found: give the --out directory of a `schedrl train` run")
    run = RunRecord.read(record)
    agent = get_agent(run.agent)
    env = agent.env_config_class.from_dict(run.env_config)
    metric, sim = agent.metric(env), run.sim_config
    workload = agent.load_workload(env)
    jobs = min(jobs, len(workload))
    evaluation = run_dir / "evaluation.json"
    held_out = json.loads(evaluation.read_text()) if evaluation.is_file() else {"starts": [], "jobs": 0}
    starts = validation_starts(workload, jobs, sequences, seed, held_out["starts"], held_out["jobs"])
    checkpoints = run_checkpoints(run_dir)
    chosen = checkpoints[::every] + ([checkpoints[-1]] if (len(checkpoints) - 1) % every else [])
    log(f"scoring {len(chosen)} of {len(checkpoints)} checkpoints on {sequences} validation sequences of {jobs} jobs "
        f"(starts {', '.join(map(str, starts))}; none overlaps the {len(held_out['starts'])} evaluation sequences)")
    scores = {}
    for i, checkpoint in enumerate(chosen, 1):
        result = compare(workload, [f"checkpoint:{checkpoint}"], [sim.backfill], starts, jobs, metric, sim,
                         progress=False)
        scores[str(checkpoint)] = result.mean(sim.backfill, result.policies[0])
        log(f"[{i}/{len(chosen)}] {checkpoint.name}: {metric} {scores[str(checkpoint)]:.2f}")
    selection = Selection(metric, METRICS[metric][1], starts, jobs, scores)
    (run_dir / SELECTION_FILE).write_text(json.dumps(selection.to_dict(), indent=2))
    return selection
