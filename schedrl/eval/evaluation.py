"""`Evaluation`: trained policies next to their agent's baselines on fixed held-out sequences, one table.

`schedrl train`'s final table (`schedrl.training.report.final_evaluation`) and `schedrl evaluate`'s single-metric and
discrete-time tables (`schedrl.eval.evaluate`) are one: the mean per column, then each trained column paired with the
scenario's reference, or where there is none the best baseline on these sequences (`schedrl.eval.paired.comparisons`),
with the interval counting only the independent sequences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedrl.eval import paired
from schedrl.metrics import METRICS


@dataclass
class Evaluation:
    """A trained policy next to its agent's baselines on fixed held-out sequences."""

    trace: str
    metric: str
    starts: list[int]
    jobs: int
    values: dict[str, list[float]]
    """Column label -> per-sequence values (baselines first, the trained policy last)."""
    note: str = "held out"
    """Where the sequences come from relative to training (`evaluation_note`)."""
    trained: tuple[str, ...] | None = None
    """The columns of trained policies (None: "RL" and "RL online" where present); the rest are baselines."""
    reference: str | None = None
    """The baseline every trained column is paired with (a scenario's, chosen on its validation sequences); None: the
    best baseline on these sequences, and the comparison's line says so."""
    independent: int | None = None
    """How many of the sequences count as independent samples (`Judge.independent`; None: all of them): where trace
    windows must share jobs, the paired intervals count only the disjoint windows that fit."""
    semantics: dict | None = None
    """Column label -> the `SimConfig` it ran under (trace tables: one per comparison, but for a baseline's declared
    backfilling, `schedrl.scenarios.semantics.check_rows`); None on the discrete-time cluster."""

    def __post_init__(self) -> None:
        if self.semantics:
            from schedrl.scenarios.semantics import check_rows

            check_rows(self.semantics, f"the table on {self.trace}")

    def mean(self, label: str) -> float:
        return float(np.mean(self.values[label]))

    def comparisons(self) -> list[dict]:
        """Each trained column against the best baseline, paired over the sequences (`schedrl.eval.paired`)."""
        return paired.comparisons(self.values, self.trained or ("RL", "RL online"), self.metric,
                                  independent=self.independent, reference=self.reference)

    def comparison_lines(self) -> list[str]:
        return paired.lines(self.comparisons(), self.metric)

    @property
    def best(self) -> str:
        means = {k: self.mean(k) for k in self.values}
        return (min if METRICS[self.metric][1] else max)(means, key=means.get)

    def to_dict(self) -> dict:
        return {"trace": self.trace, "metric": self.metric, "starts": self.starts, "jobs": self.jobs, "note": self.note,
                "results": [{"policy": k, "mean": self.mean(k), "per_sequence": v,
                             **({"semantics": self.semantics[k].to_dict()} if k in (self.semantics or {}) else {})}
                            for k, v in self.values.items()],
                "comparisons": self.comparisons()}

    def _shared(self) -> str | None:
        """The semantics every column ran under, as the title names it (a declared backfilling aside)."""
        if not self.semantics:
            return None
        trained = [k for k in (self.trained or ("RL", "RL online")) if k in self.semantics]
        return self.semantics[trained[0] if trained else next(iter(self.semantics))].describe()

    def _cells(self) -> tuple[list[str], list[str]]:
        header = list(self.values)
        return header, [f"{self.mean(k):.2f}" + ("*" if k == self.best else "") for k in header]

    def to_markdown(self) -> str:
        header, cells = self._cells()
        return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header), "| " + " | ".join(cells) + " |"]
                         + ["", *self.comparison_lines()] * bool(self.comparisons()))

    def to_text(self) -> str:
        header, cells = self._cells()
        widths = [max(len(h), len(c)) for h, c in zip(header, cells)]
        shared = self._shared()
        title = (f"avg {self.metric} on {self.trace}: mean over {len(self.starts)} sequences of {self.jobs} jobs "
                 f"({self.note}; " + (f"{shared}; " if shared else "") + "* = best)")
        return "\n".join([title, "  ".join(h.rjust(w) for h, w in zip(header, widths)),
                          "  ".join(c.rjust(w) for c, w in zip(cells, widths)), *self.comparison_lines()])
