"""Errors raised for bad workload input."""

from __future__ import annotations


class TraceError(ValueError):
    """A trace file could not be read; the message names the file, the line and the problem."""

    def __init__(self, path: object, problem: str, line: int | None = None, hint: str = ""):
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        message = f"{where}: {problem}"
        if hint:
            message += f" ({hint})"
        super().__init__(message)
