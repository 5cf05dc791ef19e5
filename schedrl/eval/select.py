"""Pick a training run's checkpoint a second time, on more validation sequences than training's own.

Training keeps the checkpoints with the best greedy validation on a few sequences, and choosing the best of
hundreds of such scores picks the luckiest (the winner's curse: docs/experiments/rlscheduler.md, docs/experiments/rlschert.md). This
module scores a run's kept checkpoints, through its agent (`Agent.score_policy`), on `sequences` validation
sequences drawn with a seed of their own: from the run's validation zone where the run holds part of the trace
out (`Agent.split_range`), as fresh sequence seeds for agents whose sequences are generated (RLSchert, DeepRM),
and for the paper's whole-trace protocol anywhere in the trace clear of the run's evaluation sequences (no job
in common). So the choice never sees the numbers it is later judged by. The agent's baselines are scored on the
same sequences for scale.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

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
    baselines: dict[str, float] = field(default_factory=dict)
    """The agent's baselines' mean on the same sequences (for scale)."""

    @property
    def best(self) -> str:
        return (min if self.lower_is_better else max)(self.scores, key=self.scores.get)

    def to_dict(self) -> dict:
        return {"metric": self.metric, "starts": self.starts, "jobs": self.jobs, "scores": self.scores,
                "best": self.best, "baselines": self.baselines}


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


def selection_ids(judge, workload, jobs: int, sequences: int, seed: int, held_out: dict) -> tuple[int, list[int]]:
    """(length, ids) of the selection sequences: the run's validation zone when it holds a part of the trace out or
    generates its sequences (`Judge.selection_sequences`), else (the paper's whole-trace protocol) starts anywhere
    that keep clear of the run's evaluation sequences."""
    chosen = judge.selection_sequences(workload, jobs, sequences, seed)
    if chosen is not None:
        return chosen
    jobs = min(jobs, len(workload))
    return jobs, validation_starts(workload, jobs, sequences, seed, held_out["starts"], held_out["jobs"])


def select_checkpoint(run_dir: str | Path, sequences: int = 10, jobs: int = 1024, seed: int = 30_000,
                      every: int = 1, log=print) -> Selection:
    """Score every `every`-th checkpoint of the run (and its last) on validation sequences (`selection_ids`) through
    the run's agent, with its baselines on the same sequences for scale; write `selection.json`."""
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import RUN_FILE, RunRecord, load_policy
    from schedrl.metrics import METRICS

    run_dir = Path(run_dir).expanduser().resolve()
    if sequences < 1 or every < 1:
        raise ValueError(f"--sequences and --every must be >= 1, got {sequences} and {every}")
    record = run_dir / RUN_FILE
    if not record.is_file():
        raise FileNotFoundError(f"{record} not found: give the --out directory of a `schedrl train` run")
    run = RunRecord.read(record)
    agent = get_agent(run.agent)
    judge = agent.judge(agent.env_config_class.from_dict(run.env_config))
    metric = judge.metric
    workload = judge.load()
    evaluation = run_dir / "evaluation.json"
    held_out = json.loads(evaluation.read_text()) if evaluation.is_file() else {"starts": [], "jobs": 0}
    length, ids = selection_ids(judge, workload, jobs, sequences, seed, held_out)
    checkpoints = run_checkpoints(run_dir)
    chosen = checkpoints[::every] + ([checkpoints[-1]] if (len(checkpoints) - 1) % every else [])
    what = judge.id_kind
    shown = ", ".join(map(str, ids[:10])) + (f", ... ({len(ids)} in {SELECTION_FILE})" if len(ids) > 10 else "")
    log(f"scoring {len(chosen)} of {len(checkpoints)} checkpoints on {len(ids)} validation sequences of {length} jobs "
        f"({what} {shown}; disjoint from the run's evaluation sequences)")
    baselines = {name: float(np.mean(v)) for name, v in judge.score_baselines(workload, ids, length).items()}
    lower = METRICS[metric][1]
    if baselines:
        best_name = (min if lower else max)(baselines, key=baselines.get)
        log(f"baselines there ({metric}): " + ", ".join(f"{k} {v:.2f}" for k, v in baselines.items())
            + f"; best {best_name}")
    scores = {}
    for i, checkpoint in enumerate(chosen, 1):
        values = judge.score_policy(load_policy(checkpoint), workload, ids, length)
        scores[str(checkpoint)] = float(np.mean(values))
        log(f"[{i}/{len(chosen)}] {checkpoint.name}: {metric} {scores[str(checkpoint)]:.2f}")
    selection = Selection(metric, lower, [int(i) for i in ids], length, scores, baselines)
    (run_dir / SELECTION_FILE).write_text(json.dumps(selection.to_dict(), indent=2))
    return selection
