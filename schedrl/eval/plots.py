"""Plots: Gantt charts of a schedule, bar charts of a comparison (matplotlib, headless)."""

from __future__ import annotations

import numpy as np


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


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
    ax.set_title(title or "schedule (blue ready, orange reserved, green backfilled)")
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
