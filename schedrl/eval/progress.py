"""A minimal progress line on stderr (only when stderr is a terminal, or when forced)."""

from __future__ import annotations

import sys
import time


class Progress:
    """`with Progress(total, "compare") as p: ... p.update()`."""

    def __init__(self, total: int, label: str, enabled: bool | None = None, stream=None):
        self.total = max(total, 1)
        self.label = label
        self.done = 0
        # sys.stderr when used, not when imported: it may have been redirected (and closed) since
        self.stream = sys.stderr if stream is None else stream
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.t0 = time.perf_counter()

    def __enter__(self) -> "Progress":
        self._draw()
        return self

    def update(self, n: int = 1) -> None:
        self.done += n
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        frac = self.done / self.total
        bar = "#" * int(30 * frac)
        elapsed = time.perf_counter() - self.t0
        eta = elapsed / frac - elapsed if frac > 0 else float("nan")
        self.stream.write(f"\r{self.label} [{bar:<30s}] {self.done}/{self.total} {elapsed:5.1f}s eta {eta:5.1f}s")
        self.stream.flush()

    def __exit__(self, *exc) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
