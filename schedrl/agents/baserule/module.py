"""What the base-rule agents' RLModules share (torch only): the two-layer tanh MLP of the inspector's policy and of
both agents' value networks."""

from __future__ import annotations

from torch import nn


def mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    """inputs -> hidden -> hidden -> outputs, tanh between (its layers built, and so initialised, in that order)."""
    return nn.Sequential(nn.Linear(inputs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, outputs))
