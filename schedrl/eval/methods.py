"""Many methods x many metrics on the same held-out sequences: DRAS Table IV / Fig. 6, MRSch Fig. 7.

`schedrl evaluate CKPT [CKPT ...] --metrics ...` builds a `MethodsTable`: the first checkpoint's agent's
baselines (each under its paper's semantics) and every checkpoint's greedy policy on one set of sequences
from the evaluation zone of the first checkpoint's trace, each method's `schedrl.metrics.Metrics` kept per
sequence. Rows are methods, columns the chosen aggregates (means over sequences); `--shares` adds how
jobs and resource-0 work were started (ready / reserved / backfilled; DRAS Table IV). `kiviat` draws the
normalised metrics as a radar chart (DRAS Fig. 6), `bars` one bar panel per metric (MRSch Fig. 7). Reaches agents only through the contract.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from schedrl.metrics import UTIL_PREFIX

# column name -> (Metrics attribute, lower is better, header)
COLUMNS: dict[str, tuple[str, bool, str]] = {
    "wait": ("avg_wait", True, "avg wait (s)"),
    "max_wait": ("max_wait", True, "max wait (s)"),
    "p95_wait": ("p95_wait", True, "p95 wait (s)"),
    "bsld": ("avg_bsld", True, "avg bsld"),
    "slowdown": ("avg_slowdown", True, "avg slowdown"),
    "turnaround": ("avg_turnaround", True, "avg turnaround (s)"),
    "utilization": ("utilization", False, "utilisation"),
    "fairness": ("max_user_bsld", True, "max user bsld"),
    "requeued": ("requeued", True, "requeued"),
}
SHARES: dict[str, tuple[str, str]] = {
    "jobs ready": ("ready_share", "jobs ready"),
    "jobs reserved": ("reserved_share", "jobs reserved"),
    "jobs backfilled": ("backfilled_share", "jobs backfilled"),
    "work ready": ("ready_work_share", "work ready"),
    "work reserved": ("reserved_work_share", "work reserved"),
    "work backfilled": ("backfilled_work_share", "work backfilled"),
}
DEFAULT_COLUMNS = ("wait", "max_wait", "slowdown", "utilization")


def parse_columns(text: str | None, resources: tuple[str, ...] = ()) -> list[str]:
    """Column names from `--metrics` (comma-separated); unknown names are one clear ValueError."""
    if not text:
        return list(DEFAULT_COLUMNS)
    names = [t.strip() for t in text.split(",") if t.strip()]
    for n in names:
        if n in COLUMNS or (n.startswith(UTIL_PREFIX) and (not resources or n[len(UTIL_PREFIX):] in resources)):
            continue
        hint = f", or util:NAME for a resource ({', '.join(resources)})" if resources else ", or util:NAME"
        raise ValueError(f"unknown metric {n!r} in --metrics; choose from {', '.join(COLUMNS)}{hint}")
    if not names:
        raise ValueError("--metrics is empty")
    return names


def column_value(metrics, name: str) -> float:
    """One column's value for one sequence's `Metrics`."""
    if name.startswith(UTIL_PREFIX):
        return metrics.value(name)
    if name in SHARES:
        return float(getattr(metrics, SHARES[name][0]))
    return float(getattr(metrics, COLUMNS[name][0]))


def lower_is_better(name: str) -> bool:
    return COLUMNS[name][1] if name in COLUMNS else False


def header(name: str) -> str:
    if name.startswith(UTIL_PREFIX):
        return f"{name[len(UTIL_PREFIX):]} utilisation"
    return SHARES[name][1] if name in SHARES else COLUMNS[name][2]


@dataclass
class MethodsTable:
    """Per method, per sequence `Metrics`; summarised as means over the sequences."""

    trace: str
    starts: list[int]
    jobs: int
    note: str
    columns: list[str]
    methods: dict = field(default_factory=dict)
    """Method label -> list of `Metrics` (one per sequence, in `starts` order); baselines first."""
    trained: list[str] = field(default_factory=list)
    """Labels of the trained policies (the rest are baselines)."""
    semantics: dict = field(default_factory=dict)
    """Method label -> the `SimConfig` it ran under (one per table, but for a baseline's declared backfilling)."""

    def mean(self, method: str, column: str) -> float:
        return float(np.mean([column_value(m, column) for m in self.methods[method]]))

    def best(self, column: str) -> str | None:
        if column in SHARES:
            return None
        means = {k: self.mean(k, column) for k in self.methods}
        return (min if lower_is_better(column) else max)(means, key=means.get)

    def _rows(self) -> tuple[list[str], list[list[str]]]:
        head = ["method"] + [header(c) for c in self.columns]
        best = {c: self.best(c) for c in self.columns}
        rows = []
        for k in self.methods:
            cells = [k]
            for c in self.columns:
                v = self.mean(k, c)
                text = f"{100 * v:.1f}%" if c in SHARES or c == "utilization" or c.startswith(UTIL_PREFIX) else f"{v:.2f}"
                cells.append(text + ("*" if best[c] == k else ""))
            rows.append(cells)
        return head, rows

    @property
    def title(self) -> str:
        shared = self.semantics.get(self.trained[0]) if self.trained else None
        return (f"{self.trace}: mean over {len(self.starts)} sequences of {self.jobs} jobs ({self.note}; "
                + (f"{shared.describe()}; " if shared is not None else "")
                + "* = best; shares of jobs and of resource-0 work by how they started)")

    def to_text(self) -> str:
        head, rows = self._rows()
        widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
        fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
        return "\n".join([self.title, fmt(head), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])

    def to_markdown(self) -> str:
        head, rows = self._rows()
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" + "--:|" * (len(head) - 1)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])

    def to_dict(self) -> dict:
        return {"trace": self.trace, "starts": self.starts, "jobs": self.jobs, "note": self.note,
                "columns": self.columns, "trained": self.trained,
                "methods": {k: {"mean": {c: self.mean(k, c) for c in self.columns},
                                **({"semantics": self.semantics[k].to_dict()} if k in self.semantics else {}),
                                "per_sequence": [m.to_dict() for m in ms]} for k, ms in self.methods.items()}}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


def kiviat(table: MethodsTable, path: str | Path, columns: list[str] | None = None) -> str:
    """Radar chart of the normalised columns (DRAS Fig. 6): on every axis the best method sits at 1, the others
    at best/value (lower-is-better columns) or value/best (higher-is-better), so larger is better everywhere. A
    method whose ring lies on another's (within 0.5% on every axis) says so in the legend, since it cannot be seen;
    `bars` shows close methods apart."""
    from schedrl.eval.plots import pyplot

    columns = [c for c in (columns or table.columns) if c not in SHARES]
    if len(columns) < 3:
        raise ValueError(f"a Kiviat chart needs at least 3 metrics, got {len(columns)} ({', '.join(columns)})")
    plt = pyplot()
    angles = np.linspace(0, 2 * np.pi, len(columns), endpoint=False)
    fig, ax = plt.subplots(figsize=(7, 7.4), subplot_kw={"projection": "polar"})
    ax.set_theta_offset(np.pi / 2 + np.pi / len(columns))  # no axis straight up, under the title
    rings: dict[str, np.ndarray] = {}
    for i, method in enumerate(table.methods):
        values = []
        for c in columns:
            means = np.array([table.mean(k, c) for k in table.methods])
            v = table.mean(method, c)
            if lower_is_better(c):
                best = means.min()
                values.append(best / v if v > 0 else 1.0)
            else:
                best = means.max()
                values.append(v / best if best > 0 else 1.0)
        ring = np.array(values)
        # drawn earlier and the same everywhere: this ring hides under it
        under = next((other for other, seen in rings.items() if np.allclose(ring, seen, rtol=0.005, atol=0)), None)
        rings[method] = ring
        style = "-" if method in table.trained else "--"
        ax.plot(np.append(angles, angles[0]), np.append(ring, ring[0]), style,
                linewidth=2 if method in table.trained else 1, color=f"C{i % 10}",
                label=method if under is None else f"{method} (on {under}'s ring)")
    ax.set_xticks(angles, [header(c) for c in columns])
    ax.set_ylim(0, 1.05)
    ax.set_rlabel_position(180 / len(columns))  # the radial scale halfway between two axes, clear of their labels
    fig.suptitle(f"{table.trace}: normalised metrics (1 = best method; larger is better)", fontsize="medium")
    fig.legend(loc="lower center", ncol=min(3, len(table.methods)), fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    from schedrl.outputs import save_figure

    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return str(path)


def bars(table: MethodsTable, path: str | Path, columns: list[str] | None = None) -> str:
    """One bar panel per column, one bar per method (MRSch Fig. 7's grouped bars); trained policies hatched."""
    from schedrl.eval.plots import pyplot

    columns = list(columns or table.columns)
    plt = pyplot()
    fig, axes = plt.subplots(1, len(columns), figsize=(max(6, 2.6 * len(columns)), 3.8), squeeze=False)
    methods = list(table.methods)
    x = np.arange(len(methods))
    for ax, c in zip(axes[0], columns):
        values = [table.mean(k, c) for k in methods]
        percent = c in SHARES or c == "utilization" or c.startswith(UTIL_PREFIX)
        heights = [100 * v for v in values] if percent else values
        drawn = ax.bar(x, heights, color=[f"C{i % 10}" for i in range(len(methods))])
        for bar, k in zip(drawn, methods):
            if k in table.trained:
                bar.set_hatch("//")
        ax.set_title(header(c) + (" (%)" if percent else ""), fontsize="medium")
        ax.set_xticks(x, methods, rotation=90, fontsize="small")  # upright labels would overlap
    fig.suptitle(f"{table.trace}: {len(table.starts)} sequences x {table.jobs} jobs", fontsize="medium")
    from matplotlib.patches import Patch

    fig.legend(handles=[Patch(facecolor="white", edgecolor="black", label="heuristic"),
                        Patch(facecolor="white", edgecolor="black", hatch="//", label="trained policy")],
               loc="upper left", fontsize="small", ncol=2)
    fig.tight_layout(rect=(0, 0, 1, 0.9))  # room above the panels for the title and the key
    from schedrl.outputs import save_figure

    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return str(path)


def unique_labels(names: list[str], taken: list[str]) -> list[str]:
    """`names` made distinct from each other and from `taken` (`#2`, `#3` ... appended)."""
    out: list[str] = []
    for base in names:
        name, k = base, 1
        while name in out or name in taken:
            k += 1
            name = f"{base}#{k}"
        out.append(name)
    return out


def methods_table(policies: list, workload, starts: list[int], jobs: int, columns: list[str], note: str,
                  sim_config=None, seed: int = 0) -> MethodsTable:
    """The first policy's agent's baselines and every trained policy (loaded with `load_policy`, so each has
    `.record`) on the sequences `starts` of `workload`, every row under one `SimConfig`: `sim_config` (default: the
    first run's) with the decision a trained policy cannot make otherwise
    (`schedrl.scenarios.semantics.comparison_semantics`); a baseline changes only its declared backfilling."""
    from schedrl.agents import get_agent
    from schedrl.scenarios.semantics import check_rows, comparison_semantics, row_semantics

    first = policies[0].record
    agent = get_agent(first.agent)
    judge = agent.judge(agent.env_config_class.from_dict(dict(first.env_config)))
    judge.trace_only(f"{agent.name} runs on the discrete-time cluster: a methods table needs event-simulator agents "
                     "(the RLSchert/DeepRM comparison is `schedrl evaluate CKPT`)")
    sim_config = comparison_semantics(sim_config or judge.sim, policies)
    labels = unique_labels([p.record.agent for p in policies], [b.name for b in judge.baselines])
    table = MethodsTable(getattr(workload, "name", "trace"), [int(s) for s in starts], jobs, note, list(columns),
                         trained=labels)
    table.methods.update(judge.baseline_metrics(workload, starts, jobs, sim_config=sim_config, seed=seed))
    table.semantics.update({b.name: row_semantics(sim_config, b.sim.backfill if b.sim is not None else None)
                            for b in judge.baselines})
    for label, policy in zip(labels, policies):
        other = get_agent(policy.record.agent)
        theirs = other.judge(other.env_config_class.from_dict(dict(policy.record.env_config)))
        theirs.trace_only(f"{label} runs on the discrete-time cluster and cannot join a trace's methods table")
        table.methods[label] = theirs.policy_metrics(policy, workload, starts, jobs, sim_config)
        table.semantics[label] = sim_config
    check_rows(table.semantics, f"the methods table on {table.trace}")
    for c in columns:  # a util:NAME column on a trace without that resource: say so before printing
        column_value(next(iter(table.methods.values()))[0], c)
    return table
