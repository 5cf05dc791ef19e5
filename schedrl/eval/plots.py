"""Plots: Gantt charts of a schedule, bar charts of a comparison (matplotlib, headless)."""

from __future__ import annotations

import numpy as np


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


GANTT_KEY = {0: "not started by a decision", 1: "started when it fit", 2: "started at its reservation",
             3: "backfilled"}
"""The Gantt chart's colours: how the simulator started each job (`schedrl.sim.MODE_NAMES`)."""


def gantt(schedule, path: str, title: str = "", max_jobs: int = 2000) -> None:
    """Each job as a bar over [start, end) at the processor offset it could occupy (first fit on a line)."""
    plt = pyplot()
    n = min(len(schedule.start), max_jobs)
    order = np.argsort(schedule.start[:n], kind="stable")
    t0 = schedule.submit[:n].min()
    fig, ax = plt.subplots(figsize=(12, 5))
    cap = schedule.capacity[0]
    # place bars with a simple skyline so the chart shows occupancy, not a real processor mapping
    busy_until = np.full(int(cap), -np.inf)
    colors = {0: "grey", 1: "tab:blue", 2: "tab:orange", 3: "tab:green"}
    for j in order:
        width = int(schedule.req[j, 0])
        s, e = schedule.start[j], schedule.end[j]
        free = np.flatnonzero(busy_until <= s)
        lo = int(free[0]) if free.size >= width else 0
        busy_until[lo:lo + width] = e
        ax.broken_barh([((s - t0) / 3600, (e - s) / 3600)], (lo, width), facecolors=colors[int(schedule.mode[j])], edgecolor="none")
    ax.set_xlabel("hours since first submit")
    ax.set_ylabel(schedule.resources[0])
    ax.set_ylim(0, cap)
    ax.set_title(title or "schedule")
    from matplotlib.patches import Patch

    used = sorted({int(m) for m in schedule.mode[:n]})
    ax.legend(handles=[Patch(color=colors[m], label=GANTT_KEY[m]) for m in used], fontsize="small",
              loc="upper left", bbox_to_anchor=(1.0, 1.0), title="how each job started")
    fig.tight_layout()
    from schedrl.outputs import save_figure

    save_figure(fig, path, dpi=100)
    plt.close(fig)


def comparison_bars(result, path: str) -> None:
    """Grouped bars: one group per backfill strategy, one bar per policy, mean over sequences."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(result.policies) * len(result.backfills)), 4))
    width = 0.8 / len(result.policies)
    x = np.arange(len(result.backfills))
    for i, p in enumerate(result.policies):
        means = [result.mean(b, p) for b in result.backfills]
        ax.bar(x + i * width, means, width, label=p)
    ax.set_xticks(x + width * (len(result.policies) - 1) / 2, result.backfills)
    ax.set_ylabel(f"avg {result.metric}")
    ax.set_yscale("log")
    ax.set_title(f"{result.trace}: {len(result.starts)} sequences x {result.length} jobs")
    ax.legend(fontsize="small")
    fig.tight_layout()
    from schedrl.outputs import save_figure

    save_figure(fig, path, dpi=100)
    plt.close(fig)


CLIP = (0.3, 2.0)
"""The widest ratio range a leaderboard panel shows: beyond it a bar stops at the edge with its value written."""


def _interval(row) -> tuple[float, float] | None:
    """A board row's 95% interval as ratios to the reference (None for the reference itself)."""
    c = row.get("vs_reference")
    if not c or not c.get("ci95_pct"):
        return None
    return 1 + c["ci95_pct"][0] / 100, 1 + c["ci95_pct"][1] / 100


def significant(row) -> bool:
    """Whether the board calls the row better or worse than the reference: the corrected verdict where the board
    corrects one (policies), else the paired verdict (a baseline heuristic)."""
    c = row.get("vs_reference") or {}
    verdict = c.get("verdict_corrected") or c.get("verdict")
    return verdict in ("better", "worse")


def panel_range(rows) -> tuple[float, float]:
    """The x range of a panel: every ratio and interval within `CLIP`, with a margin, on tenths."""
    import math

    values = [1.0]
    for r in rows:
        values += [v for v in (r["ratio_to_reference"], *(_interval(r) or ())) if CLIP[0] <= v <= CLIP[1]]
    low = max(CLIP[0], math.floor((min(values) - 0.04) * 10) / 10)
    high = min(CLIP[1], math.ceil((max(values) + 0.04) * 10) / 10)
    return low, high


def leaderboard_bars(result: dict, path) -> None:
    """One panel per scenario: each method's mean relative to the reference as a bar from 1, its 95% paired
    interval, `*` where the board's verdict (corrected for multiple comparisons where the board corrects) is better
    or worse; the axis clipped to the range that holds the decisions, a value beyond it written at the edge."""
    import math

    import matplotlib.ticker
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    plt = pyplot()
    boards = result["scenarios"]
    cols = min(3, max(1, len(boards)))
    rows = max(1, math.ceil(len(boards) / cols))
    tallest = max([len(b["rows"]) for b in boards] + [8])
    fig, axes = plt.subplots(rows, cols, figsize=(5.6 * cols, (0.24 * tallest + 1.0) * rows + 1.4), squeeze=False)
    for ax, b in zip(axes.flat, boards):
        low, high = panel_range(b["rows"])
        y = np.arange(len(b["rows"]))
        ratios = np.array([r["ratio_to_reference"] for r in b["rows"]])
        shown = np.clip(ratios, low, high)
        ax.barh(y, shown - 1.0, left=1.0, height=0.7,
                color=["tab:orange" if r["kind"] != "heuristic" else "tab:blue" for r in b["rows"]])
        intervals = [(i, _interval(r)) for i, r in enumerate(b["rows"]) if _interval(r) is not None]
        if intervals:
            ax.hlines([i for i, _ in intervals], [min(max(v[0], low), high) for _, v in intervals],
                      [min(max(v[1], low), high) for _, v in intervals], color="black", linewidth=1.0)
        for i, r in enumerate(b["rows"]):
            ratio = ratios[i]
            if ratio > high or ratio < low:
                ax.text(high if ratio > high else low, i, f" {ratio:.1f}x " + ("\u2192" if ratio > high else ""),
                        ha="right" if ratio > high else "left", va="center", fontsize=7, color="white",
                        fontweight="bold")
            if significant(r):  # beside the interval's upper end: inside the panel, or just past its right edge
                ax.text(min(max(_interval(r)[1], low), high), i, " *", ha="left", va="center", fontsize=10)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xlim(low, high)
        step = 0.05 if high - low <= 0.4 else 0.1 if high - low <= 0.8 else 0.2
        ax.xaxis.set_major_locator(matplotlib.ticker.MultipleLocator(step))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.2f" if step < 0.1 else "%.1f"))
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", linewidth=0.4, alpha=0.5)
        ax.set_yticks(y, [r["method"] for r in b["rows"]], fontsize=8)
        ax.invert_yaxis()
        ax.set_title(f"{b['scenario']} ({b['metric']}; 1 = {b['reference']}, lower is better)"
                     if b.get("lower_is_better", True) else f"{b['scenario']} ({b['metric']}; 1 = {b['reference']})",
                     fontsize=9)
    for ax in list(axes.flat)[len(boards):]:
        ax.set_visible(False)
    fig.suptitle("schedrl leaderboard: mean relative to each scenario's reference heuristic (bar from 1; line: 95% "
                 "paired interval)", fontsize=10, y=0.995)
    fig.legend(handles=[Patch(color="tab:blue", label="heuristic"),
                        Patch(color="tab:orange", label="trained policy, tuned rule or outside policy"),
                        Line2D([], [], color="black", marker="$*$", linestyle="none", markersize=8,
                               label="better or worse than the reference (policies: after the multiple-comparison "
                                     "correction)")],
               loc="upper center", bbox_to_anchor=(0.5, 1 - 0.35 / fig.get_figheight()), ncol=3, fontsize=8,
               frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / fig.get_figheight()))
    from schedrl.outputs import save_figure

    save_figure(fig, path, dpi=110)
    plt.close(fig)
