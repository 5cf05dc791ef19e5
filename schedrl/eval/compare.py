"""Run several policies under several backfilling strategies on the same sequences (RLScheduler Table V)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field, replace

import numpy as np

from schedrl.eval import paired
from schedrl.eval.policies import policy_label, resolve_policy, run_policy
from schedrl.eval.progress import Progress
from schedrl.metrics import UTIL_PREFIX, check_metric, lower_is_better, summarize
from schedrl.sim import SimConfig, Simulator
from schedrl.workload.sampling import MAX_SEQUENCES, choose_starts, sequence  # noqa: F401  (re-exported)
from schedrl.workload.workload import Workload


@dataclass
class Comparison:
    """Per-sequence metric values for every (backfill, policy) cell."""

    trace: str
    metric: str
    starts: list[int]
    length: int
    policies: list[str]
    """Policy names: spec strings as given, objects by `name` or class name (`policy_names`)."""
    backfills: list[str]
    config: SimConfig
    values: dict = field(default_factory=dict)  # (backfill, policy) -> list of per-sequence values
    labels: dict = field(default_factory=dict)  # policy name -> table column label where not `policy_label(name)`
    trained: list = field(default_factory=list)
    """Names of the trained policies (`checkpoint:` specs): each is paired with the `reference` or, without one, the
    best other policy per backfill."""
    reference: str | None = None
    """The heuristic every trained policy is paired with (a scenario's, chosen on its validation sequences); None:
    the best of the others on these sequences, and the comparison's line says so."""
    independent: int | None = None
    """How many of the sequences the paired intervals count (overlapping trace windows: the disjoint ones that fit,
    `schedrl.scenarios.scoring.independent_windows`); None: all of them."""
    semantics: dict = field(default_factory=dict)
    """(backfill, policy) -> the `SimConfig` the cell ran under (one per comparison and backfilling, but for a
    baseline's declared backfilling: `schedrl.scenarios.semantics.check_rows`)."""
    notes: list = field(default_factory=list)
    """Lines to say before the table: a policy trained under other semantics, and which it ran under."""

    def counting(self, independent: int | None) -> "Comparison":
        """This table with its paired intervals counting `independent` of its sequences (None or all: unchanged)."""
        self.independent = independent if independent is not None and independent < len(self.starts) else None
        return self

    @classmethod
    def from_scores(cls, scores, trained: list[str] = ()) -> "Comparison":
        """A scenario's scores (`schedrl.scenarios.scoring.Scores`) as a table: one row (the scenario's backfilling;
        each baseline under its own semantics), one column per method; `trained` are paired with the best other."""
        s = scores.scenario
        backfill = s.sim.backfill
        values = scores.values()
        data = scores.sequences.data  # the trace the starts index: the scenario's, or its evaluation's own
        trace = scores.sequences.source or getattr(data, "name", None) or s.workload.trace
        config = next((c for k, c in scores.semantics.items() if k in trained), s.sim) if scores.semantics else s.sim
        out = cls(trace, s.metric, list(scores.sequences.ids), scores.sequences.length, list(values), [backfill],
                  config, labels={k: k for k in values}, trained=list(trained))
        out.values = {(backfill, k): v for k, v in values.items()}
        out.semantics = {(backfill, k): c for k, c in scores.semantics.items()}
        return out

    def mean(self, backfill: str, policy: str) -> float:
        return float(np.mean(self.values[(backfill, policy)]))

    def best(self, backfill: str) -> str:
        """The policy with the best mean under `backfill`."""
        lower = lower_is_better(self.metric)
        means = {p: self.mean(backfill, p) for p in self.policies}
        return (min if lower else max)(means, key=means.get)

    def comparisons(self) -> list[dict]:
        """Per backfill, each trained policy paired with the best of the others (`schedrl.eval.paired`)."""
        out = []
        for b in self.backfills:
            values = {self.labels.get(p) or policy_label(p): self.values[(b, p)] for p in self.policies}
            trained = [self.labels.get(p) or policy_label(p) for p in self.trained]
            out += [{"backfill": b, **c}
                    for c in paired.comparisons(values, trained, self.metric, independent=self.independent,
                                                reference=self.reference)]
        return out

    def comparison_lines(self) -> list[str]:
        found = self.comparisons()
        where = [f"backfill {c['backfill']}: " if len(self.backfills) > 1 else "" for c in found]
        return [w + line for w, line in zip(where, paired.lines(found, self.metric))]

    def to_dict(self) -> dict:
        return {
            "trace": self.trace, "metric": self.metric, "starts": self.starts, "jobs": self.length,
            "config": {k: v for k, v in vars(self.config).items() if k != "backfill"},
            "results": [{"backfill": b, "policy": p, "mean": self.mean(b, p), "per_sequence": self.values[(b, p)],
                         **({"semantics": self.semantics[(b, p)].to_dict()} if (b, p) in self.semantics else {})}
                        for b in self.backfills for p in self.policies],
            **({"comparisons": self.comparisons()} if self.trained else {}),
        }

    def _cell(self, value: float) -> str:
        """A mean as the tables print it: utilisations in percent, one decimal; the rest with two decimals."""
        return f"{100 * value:.1f}%" if self.metric == "utilization" or self.metric.startswith(UTIL_PREFIX) else f"{value:.2f}"

    def _rows(self) -> tuple[list[str], list[list[str]]]:
        header = ["backfill"] + [self.labels.get(p) or policy_label(p) for p in self.policies]
        rows = []
        for b in self.backfills:
            best = self.best(b)
            # a slurm row names Slurm's parameters, which the title (every field but the backfilling) leaves out
            label = replace(self.config, backfill=b, backfill_choice="first-fit", event_order="standard").backfill_text \
                if b == "slurm" else b
            rows.append([label] + [self._cell(self.mean(b, p)) + ("*" if p == best else "") for p in self.policies])
        return header, rows

    def to_text(self) -> str:
        header, rows = self._rows()
        widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
        fmt = lambda r: "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
        what = (f"{self.metric[len(UTIL_PREFIX):]} utilisation" if self.metric.startswith(UTIL_PREFIX)
                else f"avg {self.metric}")
        title = (f"{what} on {self.trace}: mean over {len(self.starts)} sequences of {self.length} jobs "
                 f"({self.config.describe(backfill=False)}; * = best)")
        return "\n".join([title, fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
                         + self.comparison_lines())

    def to_markdown(self) -> str:
        header, rows = self._rows()
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        found = self.comparison_lines()
        return "\n".join(lines + ["", *found] * bool(found))

    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(["backfill", "policy", "mean"] + [f"seq{s}" for s in self.starts])
        for b in self.backfills:
            for p in self.policies:
                w.writerow([b, p, f"{self.mean(b, p):.6g}"] + [f"{v:.6g}" for v in self.values[(b, p)]])
        return out.getvalue()

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def judged(self, reference: str | None, names: dict[str, str] | None = None) -> "Comparison":
        """This table with its trained policies paired with `reference` (a scenario's; None: the best other) and shown
        under `names` (policy -> the name a reader knows it by, `schedrl.eval.policies.trained_labels`)."""
        self.reference = reference
        self.labels.update(names or {})
        return self


def policy_names(policies: list) -> list[str]:
    """Names for `Comparison.policies`: a spec string as given; a policy object by its `name` attribute or
    class name (`#2`, `#3` ... appended where two would otherwise share a name)."""
    names: list[str] = []
    for p in policies:
        base = p.strip() if isinstance(p, str) else policy_label(p)
        name, k = base, 1
        while name in names:
            k += 1
            name = f"{base}#{k}"
        names.append(name)
    return names


def compare(workload: Workload, policies: list, backfills: list[str], starts: list[int], length: int,
            metric: str = "bsld", config: SimConfig = SimConfig(), seed: int = 0, progress: bool | None = None) -> Comparison:
    """Every policy × backfill on every sequence; policies are specs (`sjf`, `checkpoint:PATH`) or objects
    with `pick(sim)` (a `FunctionPolicy` around an outside model, ...), labelled by `policy_names`. Every cell of a
    backfilling runs under one `SimConfig`: `config` with that backfilling and, where a trained policy chooses the
    backfilled job itself, every row so (`schedrl.scenarios.semantics.comparison_semantics`); `Comparison.notes` says
    which policies were trained under other semantics."""
    from schedrl.scenarios.semantics import check_rows, comparison_semantics, trained_note

    check_metric(metric, resources=True)
    names = policy_names(policies)
    resolved = {name: resolve_policy(p, seed) for name, p in zip(names, policies)}
    shared = comparison_semantics(config, resolved.values())
    result = Comparison(workload.name, metric, list(starts), length, names, list(backfills), shared,
                        labels={n: n for n, p in zip(names, policies) if not isinstance(p, str)},
                        trained=[n for n, p in zip(names, policies) if isinstance(p, str) and p.startswith("checkpoint:")])
    result.notes = [line for line in (trained_note(result.labels.get(p) or policy_label(p), resolved[p], shared)
                                      for p in names) if line]
    with Progress(len(policies) * len(backfills) * len(starts), "compare", enabled=progress) as bar:
        for b in backfills:
            cfg = replace(shared, backfill=b)
            for p in names:
                vals = []
                for s in starts:
                    schedule = run_policy(resolved[p], Simulator(sequence(workload, s, length), cfg))
                    vals.append(summarize(schedule).value(metric))
                    bar.update()
                result.values[(b, p)] = vals
                result.semantics[(b, p)] = cfg
            check_rows({p: result.semantics[(b, p)] for p in names}, f"{workload.name}, backfill {b}")
    return result
