"""RLSchert Table 7 against our heuristics on the discrete-time cluster: same settings, seeded sequences."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedrl.dtsim.cluster import DTSim
from schedrl.dtsim.config import DTSimConfig
from schedrl.dtsim.heuristics import HEURISTICS, KillRule, make_policy, run
from schedrl.dtsim.jobs import JobTable
from schedrl.dtsim.sequence import JobSequence, sample_sequence

# RLSchert Table 7: average slowdown on the test set (16 sequences, res_slot 20, job_rate 0.7)
TABLE7 = {False: {"tetris": 13.77, "random": 12.21, "sjf": 10.29, "tetris*": 10.24, "saf": 10.23},
          True: {"tetris": 14.75, "random": 11.2, "sjf": 10.25, "tetris*": 10.41, "saf": 10.33}}
"""kill policy used -> heuristic -> the paper's average slowdown."""
# RLSchert Table 8: average completion time on the test set, steps
TABLE8 = {False: {"tetris": 98.66, "random": 98.15, "sjf": 80.36, "tetris*": 80.37, "saf": 80.3},
          True: {"tetris": 105.66, "random": 94.95, "sjf": 80.82, "tetris*": 80.93, "saf": 81.13}}
"""kill policy used -> heuristic -> the paper's average completion time."""
TOLERANCE = 0.15
"""Acceptance: each heuristic within 15 % of Table 7."""


@dataclass(frozen=True)
class FidelityRow:
    """One heuristic's average slowdown over the sequences, next to the paper's."""

    policy: str
    """Heuristic name."""
    kill: bool
    """Whether RLSchert's rule-based kill policy ran alongside."""
    ours: float
    """Mean over sequences of each sequence's average slowdown."""
    stderr: float
    """Standard error of that mean across sequences."""
    paper: float
    """RLSchert Table 7."""
    completion: float
    """Mean average completion time, steps (RLSchert Eq. 14)."""
    paper_completion: float
    """RLSchert Table 8."""
    kills: float
    """Mean kills per sequence."""

    @property
    def relative(self) -> float:
        """ours / paper - 1."""
        return self.ours / self.paper - 1.0


def fidelity_sequences(table: JobTable, config: DTSimConfig, sequences: int = 16, seed: int = 0) -> list[JobSequence]:
    """The `sequences` seeded sequences `fidelity` (and `sweep`) runs at `config`: one child of SeedSequence(seed) each."""
    if sequences < 1:
        raise ValueError(f"sequences must be >= 1, got {sequences}")
    return [sample_sequence(table, config, np.random.default_rng(s))
            for s in np.random.SeedSequence(seed).spawn(sequences)]


def fidelity(table: JobTable, config: DTSimConfig = DTSimConfig(), sequences: int = 16, seed: int = 0,
             kill: bool | KillRule = False) -> list[FidelityRow]:
    """Every Table 7 heuristic on the same `sequences` seeded sequences (Random seeded per sequence).

    `kill`: True for RLSchert's kill rule alongside each heuristic, or the `KillRule` to use.
    """
    seqs = fidelity_sequences(table, config, sequences, seed)
    rows = []
    for name in HEURISTICS:
        results = [run(DTSim(table, seq, config), make_policy(name, seed=seed * 10_000 + i, kill=kill))
                   for i, seq in enumerate(seqs)]
        slow = np.array([r.avg_slowdown for r in results])
        rows.append(FidelityRow(policy=name, kill=kill is not False, ours=float(slow.mean()),
                                stderr=float(slow.std(ddof=1) / np.sqrt(len(slow))) if len(slow) > 1 else 0.0,
                                paper=TABLE7[kill is not False][name],
                                completion=float(np.mean([r.avg_completion for r in results])),
                                paper_completion=TABLE8[kill is not False][name],
                                kills=float(np.mean([r.kills for r in results]))))
    return rows


def format_rows(rows: list[FidelityRow]) -> str:
    """A markdown table, one row per heuristic."""
    lines = ["| policy | kill rule | ours (± s.e.) | Table 7 | ours / paper | within 15 % | completion | Table 8 | kills/seq |",
             "|---|---|--:|--:|--:|---|--:|--:|--:|"]
    for r in rows:
        lines.append(f"| {r.policy} | {'yes' if r.kill else 'no'} | {r.ours:.2f} ± {r.stderr:.2f} | {r.paper:.2f} | "
                     f"{r.relative:+.1%} | {'yes' if abs(r.relative) <= TOLERANCE else 'NO'} | "
                     f"{r.completion:.1f} | {r.paper_completion:.2f} | {r.kills:.1f} |")
    return "\n".join(lines)
