"""The discrete-event cluster simulator (numpy + numba; no gymnasium, torch or ray)."""

from schedrl.sim.config import SimConfig
from schedrl.sim.simulator import DECIDE_BACKFILL, DECIDE_PICK, FINISHED, Policy, Schedule, Simulator
from schedrl.sim.state import MODE_NAMES

__all__ = ["DECIDE_BACKFILL", "DECIDE_PICK", "FINISHED", "MODE_NAMES", "Policy", "Schedule", "SimConfig", "Simulator"]
