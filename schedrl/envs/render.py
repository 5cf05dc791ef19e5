"""Gymnasium `render()` for every scheduling env: the simulator's queue and machine as text or a picture.

Both views read only the `Simulator`, so each agent's env renders the same way. `ansi`: the time,
each resource's use, the running jobs and the first waiting jobs (the ones an agent sees first).
`rgb_array`: one bar per resource (busy share) above one row per visible waiting job (its request,
shaded by how long it has waited), for `gymnasium.wrappers.RecordVideo` and notebooks.
"""

from __future__ import annotations

import numpy as np

from schedrl.sim.simulator import Simulator
from schedrl.sim.state import DONE

RENDER_MODES = ("ansi", "rgb_array")
"""The render modes every schedrl env supports (`metadata["render_modes"]`)."""

SHOWN_JOBS = 10
"""Waiting and running jobs listed by the `ansi` view (the rest are counted)."""

# rgb_array geometry: pixels per row and image width
ROW_PX, WIDTH_PX, ROWS = 6, 256, 32
BUSY, FREE, JOB, BACKGROUND = (200, 60, 40), (225, 225, 225), (40, 90, 200), (255, 255, 255)


def check_render_mode(render_mode: str | None) -> str | None:
    """`render_mode` if a schedrl env supports it; a `ValueError` naming the supported ones otherwise."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode {render_mode!r} is not supported; use one of {', '.join(RENDER_MODES)} or None")
    return render_mode


def render(sim: Simulator | None, render_mode: str | None):
    """The env's `render()` result for `render_mode` (None: nothing, as Gymnasium specifies)."""
    if render_mode is None:
        return None
    if sim is None:
        raise RuntimeError("nothing to render: call reset() first")
    return ansi(sim) if render_mode == "ansi" else rgb_array(sim)


def ansi(sim: Simulator) -> str:
    """Time, resource use, running and waiting jobs of `sim` as a few lines of text."""
    s = sim.state
    now = sim.now
    lines = [f"t={now:.0f}s  jobs done {int((s.status == DONE).sum())}/{len(s.status)}"]
    for r, name in enumerate(sim.resources):
        used = s.cap[r] - s.free[r]
        lines.append(f"{name:>8} {_bar(used / s.cap[r])} {used:g}/{s.cap[r]:g} busy")
    running = sim.running()
    lines.append(f"running {len(running)}:" + "".join(
        f" #{j}({s.req[j, 0]:g}, ends~{s.start[j] + s.est[j] - now:.0f}s)" for j in running[:SHOWN_JOBS])
        + (" ..." if len(running) > SHOWN_JOBS else ""))
    queue = sim.queue
    lines.append(f"waiting {len(queue)}:" + "".join(
        f" #{j}({s.req[j, 0]:g}, req {s.est[j]:.0f}s, waited {now - s.submit[j]:.0f}s)" for j in queue[:SHOWN_JOBS])
        + (" ..." if len(queue) > SHOWN_JOBS else ""))
    return "\n".join(lines) + "\n"


def _bar(share: float, width: int = 20) -> str:
    filled = int(round(min(max(share, 0.0), 1.0) * width))
    return "[" + "#" * filled + "." * (width - filled) + "]"


def rgb_array(sim: Simulator) -> np.ndarray:
    """An (H, WIDTH_PX, 3) uint8 picture: resource bars on top, then the first waiting jobs' requests."""
    s = sim.state
    n_res = len(sim.resources)
    image = np.empty(((n_res + 1 + ROWS) * ROW_PX, WIDTH_PX, 3), dtype=np.uint8)
    image[:] = BACKGROUND
    for r in range(n_res):
        busy = int(round((s.cap[r] - s.free[r]) / s.cap[r] * WIDTH_PX))
        rows = slice(r * ROW_PX, (r + 1) * ROW_PX - 1)
        image[rows, :busy] = BUSY
        image[rows, busy:] = FREE
    queue = sim.queue[:ROWS]
    if len(queue):
        waited = sim.now - s.submit[queue]
        # darker rows have waited longer (relative to the longest wait shown)
        shade = 0.35 + 0.65 * (1.0 - waited / max(float(waited.max()), 1.0))
        top = (n_res + 1) * ROW_PX
        for k, j in enumerate(queue):
            width = max(1, int(round(s.req[j, 0] / s.cap[0] * WIDTH_PX)))
            rows = slice(top + k * ROW_PX, top + (k + 1) * ROW_PX - 1)
            image[rows, :width] = (np.asarray(JOB) * shade[k] + 255 * (1 - shade[k])).astype(np.uint8)
    return image
