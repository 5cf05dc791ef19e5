"""`Heuristic`: a named classic scheduling policy, usable wherever a learned policy is."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedrl.heuristics import keys
from schedrl.sim.engine import STUCK
from schedrl.sim.simulator import Schedule, Simulator

# name -> (compiled kind, description); ties broken by submit time then trace position
HEURISTICS: dict[str, tuple[int, str]] = {
    "fcfs": (keys.FCFS, "first come first served (submit time)"),
    "sjf": (keys.SJF, "shortest job first (requested time / estimate)"),
    "wfp3": (keys.WFP3, "-(w/r)^3 * n, w = now - submit (Tang et al. 2009)"),
    "unicep": (keys.UNICEP, "-w / (log2(n) * r) (Tang et al. 2009)"),
    "f1": (keys.F1, "log10(r) * n + 870 * log10(s) (Carastan-Santos & de Camargo 2017)"),
    "saf": (keys.SAF, "smallest area first (requested time * processors)"),
    "smallest": (keys.SMALLEST, "fewest processors first"),
    "ljf": (keys.LJF, "longest job first (requested time)"),
    "largest": (keys.LARGEST, "most processors first"),
    "binpacking": (keys.BINPACKING, "largest job that fits now (DRAS baseline)"),
    "random": (keys.RANDOM, "uniformly random among jobs that fit now (seeded)"),
    "tetris": (keys.TETRIS, "best alignment of request and free resources (DeepRM)"),
    "tetris*": (keys.TETRIS_STAR, "Tetris alignment combined with SJF (DeepRM's Tetris*)"),
    "optimization": (keys.OPTIMIZATION, "0-1 knapsack over the window maximising busy processors (DRAS)"),
    "mrfcfs": (keys.FCFS, "multi-resource FCFS (MRSch baseline: FCFS; every resource must fit)"),
    "wfp3-rlscheduler": (keys.WFP3_RLSCHED, "WFP3 as in RLScheduler's code: w = -1 - submit (to reproduce its table)"),
    "unicep-rlscheduler": (keys.UNICEP_RLSCHED, "UNICEP as in RLScheduler's code: w = -1 - submit"),
}


@dataclass
class Heuristic:
    """A heuristic policy: `pick(sim)` for step-by-step use, `run(sim)` for the compiled fast path."""

    name: str
    seed: int = 0

    def __post_init__(self) -> None:
        if self.name not in HEURISTICS:
            raise ValueError(f"unknown heuristic {self.name!r}; choose one of {', '.join(HEURISTICS)}")
        self.kind = HEURISTICS[self.name][0]
        self._rand = np.random.default_rng(self.seed).random(1 << 16)
        self._procs: np.ndarray | None = None
        self._for: Simulator | None = None

    def _procs_of(self, sim: Simulator) -> np.ndarray:
        if self._for is not sim:
            self._procs = np.asarray(sim.workload.procs_req, dtype=np.float64)
            self._for = sim
        return self._procs

    def pick(self, sim: Simulator) -> int:
        """The job this heuristic runs next."""
        return int(keys.choose(self.kind, sim.state_ref, self._procs_of(sim), self._rand))

    def backfill(self, sim: Simulator) -> int:
        """Backfill candidates are taken first-fit (queue order)."""
        return int(sim.candidates[0])

    def run(self, sim: Simulator) -> Schedule:
        """Schedule the whole workload in compiled code; same result as `sim.run(self)` (where the simulator asks for a
        backfill choice, the compiled loop starts the first candidate, as `backfill` does)."""
        if keys.run_heuristic(sim.state_ref, self.kind, self._procs_of(sim), self._rand) == STUCK:
            raise RuntimeError("simulation stuck: a waiting job can never fit the machine")
        return sim.schedule()


def get_heuristic(name: str, seed: int = 0) -> Heuristic:
    """A heuristic by name (see HEURISTICS)."""
    return Heuristic(name.lower(), seed)
