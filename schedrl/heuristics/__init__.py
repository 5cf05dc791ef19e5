"""Classic scheduling heuristics as compiled priority keys and packing rules."""

from schedrl.heuristics.heuristic import HEURISTICS, Heuristic, get_heuristic

__all__ = ["HEURISTICS", "Heuristic", "get_heuristic"]
