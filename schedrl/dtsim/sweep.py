"""RLSchert §4.5's sweeps on the discrete-time cluster: average slowdown against job_rate (Fig. 10), res_slot
(Fig. 11) or the predictable job proportion (Table 9), for the heuristics and any other method.

For each value of the swept setting, `sweep` draws the same seeded sequences as `fidelity` does at that
setting (`fidelity_sequences`) and runs on them every Table 7 heuristic (Random seeded as `fidelity`
seeds it; with `kill`, also with the rule-based kill policy) and every extra `Method`: any object with a
`label` and `policy_at(config, table)`. This module knows no agent and no checkpoint. `schedrl dtsim sweep
--checkpoint` builds a method for each checkpoint whose agent declares the optional `DTSimSweep` capability
(`dtsim_method(path, label, loaded)` in `schedrl.agents.base`; RLSchert and DeepRM, as
`schedrl.agents.rlschert.sweep.CheckpointMethod`) and refuses any other agent's checkpoint with one line
(`schedrl.cli.dtsim.sweep_agent`). A method that cannot run at a value (a checkpoint whose observation shape
depends on res_slot) raises `SkipCell`; its cell is left empty with the reason as a note. numpy only: methods
bring their own imports.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from schedrl.dtsim.cluster import DTSim
from schedrl.dtsim.config import DTSimConfig
from schedrl.dtsim.fidelity import fidelity_sequences
from schedrl.dtsim.heuristics import HEURISTICS, KillRule, Policy, make_policy, run
from schedrl.dtsim.jobs import JobTable
from schedrl.dtsim.sequence import JobSequence

PARAMS = ("job_rate", "res_slot", "predictable")
"""Settings `sweep` can vary: RLSchert Fig. 10 (job_rate), Fig. 11 (res_slot), Table 9 (predictable)."""
PAPER_VALUES = {"job_rate": (0.3, 0.5, 0.7, 0.85, 0.95), "res_slot": (12, 16, 20, 24), "predictable": (0.0, 0.5, 0.8, 1.0)}
"""The values RLSchert §4.5 sweeps (Table 2's ranges; Table 9's proportions)."""


class SkipCell(Exception):
    """A method cannot run at this value; the message says why (it becomes the cell's note)."""


class Method(Protocol):
    """A scheduler the sweep runs next to the heuristics."""

    label: str
    """Its column in the table."""

    def policy_at(self, config: DTSimConfig, table: JobTable) -> tuple[Policy, DTSimConfig]:
        """A policy for the cluster `config` and the config its sims run under (the method may fix fields of its
        own, e.g. DeepRM's pre-run estimates; job_rate, simu_len and predictable must stay `config`'s so the
        sequences are the sweep's); SkipCell when it cannot run there."""
        ...


@dataclass(frozen=True)
class Cell:
    """One method at one value."""

    values: tuple[float, ...]
    """Average slowdown of each sequence (empty when skipped)."""
    note: str = ""
    """Why the cell is empty, or what to know about it (truncated episodes)."""

    @property
    def mean(self) -> float:
        return float(np.mean(self.values)) if self.values else math.nan

    @property
    def stderr(self) -> float:
        if len(self.values) < 2:
            return 0.0 if self.values else math.nan
        return float(np.std(self.values, ddof=1) / np.sqrt(len(self.values)))


@dataclass
class SweepResult:
    """Rows = values of `param`, columns = methods."""

    param: str
    values: list[float]
    methods: list[str]
    cells: dict[str, list[Cell]] = field(default_factory=dict)
    """method -> one cell per value."""
    settings: dict = field(default_factory=dict)
    """The base cluster, sequences, seed, job table."""

    def to_dict(self) -> dict:
        return {"param": self.param, "values": self.values, "methods": self.methods, "settings": self.settings,
                "cells": {m: [{"value": v, "mean": None if not c.values else c.mean,
                               "stderr": None if not c.values else c.stderr,
                               "per_sequence": list(c.values), "note": c.note}
                              for v, c in zip(self.values, cells)] for m, cells in self.cells.items()}}


def parse_values(param: str, text: str) -> list[float]:
    """Comma-separated values of `param`; ValueError in one line for an unknown param or a bad value."""
    if param not in PARAMS:
        raise ValueError(f"unknown --param {param!r}; choose one of {', '.join(PARAMS)}")
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError(f"--values is empty; e.g. {','.join(str(v) for v in PAPER_VALUES[param])}")
    out: list[float] = []
    for t in items:
        try:
            v = float(t)
        except ValueError:
            raise ValueError(f"--values: {t!r} is not a number") from None
        if param == "res_slot":
            if v != int(v):
                raise ValueError(f"--values: res_slot takes whole resource units, got {t}")
            out.append(int(v))
        else:
            out.append(v)
    return out


def config_at(base: DTSimConfig, param: str, value: float) -> DTSimConfig:
    """`base` with `param` set to `value` (the config's own checks: ValueError naming the field and range)."""
    if param not in PARAMS:
        raise ValueError(f"unknown sweep parameter {param!r}; choose one of {', '.join(PARAMS)}")
    return replace(base, **{param: value})


def check_values(table: JobTable, base: DTSimConfig, param: str, values: Sequence[float]) -> list[DTSimConfig]:
    """The cluster config at every value, checked before anything runs (a res_slot below the largest job included)."""
    configs = [config_at(base, param, v) for v in values]
    biggest = int(table.units.max())
    for c in configs:
        if c.res_slot < biggest:
            raise ValueError(f"res_slot={c.res_slot} is smaller than the largest job of {table.source or 'the job table'} "
                             f"({biggest} units); sweep res_slot from {biggest} up")
    return configs


def sequence_slowdown(sim: DTSim) -> float:
    """Average slowdown of the episode (RLSchert Eq. 13) over every arrived, undropped job; a job left unfinished at
    `max_seq` counts as finishing then (a lower bound, as the env's metric). Without truncation this is `Summary.avg_slowdown`."""
    r = sim.records()
    keep = ~r.dropped
    if not keep.any():
        return math.nan
    finish = np.where(r.finish >= 0, r.finish, sim.now)[keep]
    return float(np.mean((finish - r.arrival[keep]) / r.real[keep]))


def score(table: JobTable, sequences: Sequence[JobSequence], config: DTSimConfig, policy_for) -> tuple[list[float], int]:
    """Average slowdown of each sequence under `policy_for(i)` (a fresh policy per sequence) and the truncated episodes."""
    values, truncated = [], 0
    for i, seq in enumerate(sequences):
        sim = DTSim(table, seq, config)
        run(sim, policy_for(i))
        values.append(sequence_slowdown(sim))
        truncated += sim.truncated
    return values, truncated


def heuristic_labels(kill: bool) -> list[str]:
    """Column labels of the heuristics: Table 7's order, then the same with `+kill`."""
    return list(HEURISTICS) + ([f"{h}+kill" for h in HEURISTICS] if kill else [])


def sweep(table: JobTable, base: DTSimConfig, param: str, values: Sequence[float], sequences: int = 16, seed: int = 0,
          kill: bool | KillRule = False, methods: Sequence[Method] = (), log=None) -> SweepResult:
    """Every heuristic (and, with `kill`, with the kill rule) and every method at each value of `param`.

    At value v the sequences are `fidelity_sequences(table, config_at(base, param, v), sequences, seed)`:
    a heuristic's cell is the mean of what `fidelity` reports for it at that setting.
    """
    if sequences < 1:
        raise ValueError(f"sequences must be >= 1, got {sequences}")
    configs = check_values(table, base, param, values)
    labels = heuristic_labels(kill is not False) + [m.label for m in methods]
    if len(set(labels)) != len(labels):
        raise ValueError(f"two methods share a label: {', '.join(labels)}")
    result = SweepResult(param=param, values=list(values), methods=labels, cells={m: [] for m in labels},
                         settings={"sequences": sequences, "seed": seed, "jobs": table.source, "n_jobs": len(table),
                                   "base": {k: getattr(base, k) for k in ("res_slot", "job_rate", "simu_len",
                                                                           "predictable", "estimates", "num_nw",
                                                                           "time_horizon", "requeue_estimate")},
                                   "kill": kill is not False})
    kill_rule = KillRule() if kill is True else kill
    for value, config in zip(values, configs):
        seqs = fidelity_sequences(table, config, sequences, seed)
        for name in HEURISTICS:
            for with_kill in ([False, kill_rule] if kill is not False else [False]):
                label = name if with_kill is False else f"{name}+kill"
                vals, truncated = score(table, seqs, config,
                                        lambda i, n=name, k=with_kill: make_policy(n, seed=seed * 10_000 + i, kill=k))
                result.cells[label].append(Cell(tuple(vals), _truncation_note(truncated, sequences)))
        for method in methods:
            try:
                policy, method_config = method.policy_at(config, table)
                vals, truncated = score(table, seqs, method_config, lambda i: policy)
                cell = Cell(tuple(vals), _truncation_note(truncated, sequences))
            except SkipCell as e:
                cell = Cell((), str(e))
            except RuntimeError as e:  # a policy that never moves time on (`run`'s guard)
                cell = Cell((), f"failed: {e}")
            result.cells[method.label].append(cell)
        if log is not None:
            log(f"{param} {value}: done")
    return result


def _truncation_note(truncated: int, sequences: int) -> str:
    return f"{truncated} of {sequences} episodes hit max_seq (unfinished jobs counted up to it)" if truncated else ""


def format_table(result: SweepResult) -> str:
    """A markdown table (rows = values, columns = methods; mean ± standard error over the sequences), then the notes."""
    head = f"| {result.param} | " + " | ".join(result.methods) + " |"
    lines = [head, "|--:|" + "--:|" * len(result.methods)]
    notes = []
    for i, value in enumerate(result.values):
        row = []
        for m in result.methods:
            c = result.cells[m][i]
            if c.values:
                row.append(f"{c.mean:.2f} ± {c.stderr:.2f}" + (f" ({len(notes) + 1})" if c.note else ""))
            else:
                row.append(f"n/a ({len(notes) + 1})")
            if c.note:
                notes.append(f"({len(notes) + 1}) {m} at {result.param} {value}: {c.note}")
        lines.append(f"| {value:g} | " + " | ".join(row) + " |")
    return "\n".join(lines + notes)


MARKERS = "osD^v<>ph*"
"""One marker per method of a sweep plot, so lines that meet stay told apart."""
REFERENCES = ("sjf+kill", "sjf")
"""The column the plot's lower panel divides by, the first present: `rlschert-vasp`'s reference heuristic (SJF+KILL,
docs/scenarios.md), or SJF in a sweep without kills."""
RATIO_RANGE = (0.5, 1.5)
"""The lower panel's widest axis: a point beyond it is drawn at the edge with its value written, so one far-off cell
does not squash the few percent between the others."""


def relative(cells: Sequence[Cell], reference: Sequence[Cell]) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's mean over the reference's on the same sequences, and the standard error of that ratio from the
    paired differences (nan where either cell is empty)."""
    ratio, err = [], []
    for c, r in zip(cells, reference):
        if not c.values or not r.values or r.mean <= 0:
            ratio.append(math.nan)
            err.append(math.nan)
            continue
        diff = np.array(c.values) - np.array(r.values)
        ratio.append(c.mean / r.mean)
        err.append(float(np.std(diff, ddof=1) / np.sqrt(len(diff)) / r.mean) if len(diff) > 1 else 0.0)
    return np.array(ratio), np.array(err)


def plot(result: SweepResult, path: str) -> str:
    """Average slowdown against the swept value, one line per method (standard errors as bars), each shifted a little
    sideways so that close ones stay visible; skipped cells leave gaps. Below it, where the sweep has SJF (with kills
    where it kills), each method over SJF on the same sequences: the methods the upper panel piles on one line, a few
    percent apart, read apart there."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reference = next((m for m in REFERENCES if m in result.methods), None)
    if reference is None:
        fig, ax = plt.subplots(figsize=(8, 5))
        axes = [ax]
    else:
        fig, axes = plt.subplots(2, 1, figsize=(8, 8), sharex=True, height_ratios=(3, 2))
    ax = axes[0]
    x = np.array(result.values, dtype=float)
    bases = list(dict.fromkeys(m.removesuffix("+kill") for m in result.methods))
    # methods close together would hide each other: each line is shifted a little sideways, with a marker of its own
    gap = float(np.min(np.diff(np.unique(x)))) if len(np.unique(x)) > 1 else 1.0
    shift = 0.5 * gap / max(len(result.methods), 1)
    for k, m in enumerate(result.methods):
        cells = result.cells[m]
        style = dict(fmt=("--" if m.endswith("+kill") else "-") + MARKERS[k % len(MARKERS)], markersize=4,
                     linewidth=1.2, capsize=2, color=f"C{bases.index(m.removesuffix('+kill')) % 10}")  # +kill: same
        at = x + (k - (len(result.methods) - 1) / 2) * shift
        ax.errorbar(at, [c.mean for c in cells], yerr=[c.stderr for c in cells], label=m, **style)
        if reference is not None:
            ratio, err = relative(cells, result.cells[reference])
            low, high = RATIO_RANGE
            axes[1].errorbar(at, np.clip(ratio, low, high), yerr=np.where((ratio < low) | (ratio > high), 0, err),
                             **style)
            for xi, r in zip(at, ratio):
                if r > high or r < low:
                    axes[1].annotate(f"{r:.2f}x", (xi, high if r > high else low), textcoords="offset points",
                                     xytext=(4, -10 if r > high else 4), fontsize="small", color=style["color"])
    s = result.settings
    ax.set_ylabel("average slowdown")
    ax.set_title(f"average slowdown vs {result.param} ({s.get('sequences')} sequences, seed {s.get('seed')})",
                 fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    if reference is not None:
        finite = [r for m in result.methods for r in relative(result.cells[m], result.cells[reference])[0]
                  if np.isfinite(r)]
        low = max(RATIO_RANGE[0], min(finite, default=1.0) - 0.02)
        high = min(RATIO_RANGE[1], max(finite, default=1.0) + 0.02)
        axes[1].set_ylim(low, high)
        axes[1].axhline(1.0, color="grey", linewidth=0.8)
        axes[1].set_ylabel(f"x {reference} (same sequences)")
        axes[1].grid(alpha=0.3)
    axes[-1].set_xlabel(result.param)
    axes[-1].set_xticks(x)
    fig.tight_layout()
    from schedrl.outputs import save_figure

    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path


def parse_checkpoint_arg(text: str) -> tuple[str | None, str]:
    """`LABEL=PATH` or `PATH` -> (label or None, path)."""
    label, sep, path = text.partition("=")
    if sep and label and "/" not in label and not Path(text).exists():
        return label, path
    return None, text
