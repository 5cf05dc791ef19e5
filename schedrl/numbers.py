"""Numbers as schedrl reads them from a command line, a rule file or a weight file: finite, and within stated bounds.

`float("nan")` and `float("inf")` are floats to Python, so an option declared `type=float` would let them through
into a run (a NaN penalty trains and is written into the run record). Every parser of schedrl passes through
`finite_options`, which gives each `type=float` option the shared `finite_float` instead, so no command, and no agent
package adding its own options, needs to remember it; `finite` does the same for a number read from a file, and
`Integer(low, high)` is an integer option whose allowed range is part of its declaration (the error states it).
"""

from __future__ import annotations

import argparse
import math


def finite(value, where: str) -> float:
    """`value` as a float, refused (ValueError, one line naming `where`) when it is not a number or not finite."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{where} must be a finite number, got {value!r}")
    return number


def finite_float(text: str) -> float:
    """argparse's `type` for a float option: nan, inf and values that overflow a float are refused."""
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return number


class Integer:
    """argparse's `type` for an integer option with its own bounds (`low <= value <= high`): `schedrl.cli.main`'s
    `check_integers` refuses a value outside them before any work, stating them (and `why`)."""

    def __init__(self, low: int, high: int, why: str = ""):
        self.low, self.high, self.why = low, high, why
        self.__name__ = "int"  # argparse names the type in "invalid int value"

    def __call__(self, text: str) -> int:
        return int(text)

    def problem(self, value: int) -> str | None:
        """Why `value` is out of bounds (None when it is within them)."""
        if self.low <= value <= self.high:
            return None
        return f"must be between {self.low} and {self.high}" + (f" ({self.why})" if self.why else "") + f", got {value}"


def finite_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give every `type=float` option of `parser` and of its subcommands `finite_float`; returns `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                finite_options(child)
        elif action.type is float:
            action.type = finite_float
    return parser
