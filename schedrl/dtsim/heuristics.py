"""Policies on the discrete-time cluster: RLSchert's baselines (§4.1.4), its rule-based kill (§3.3), and `run`.

The policy protocol: an object with `act(sim) -> int` returning one action of `sim.valid_actions()`
(`sim.config.void_action` to move time on). `run(sim, policy)` calls it until the episode ends, so a
policy allocates as many jobs per step as it likes and then returns the void action. A policy
never mutates the sim; stateful ones (Random) take their seed when built, so build one per episode
for reproducible runs.

The selection heuristics look only at what can start now (a visible job whose earliest fit is
offset 0): they ignore the future canvas, which is why RLSchert's Figure 7 shows them unaffected by
the runtime predictor. All of them use the pre-run prediction `len_param` as the job's length
(RLSchert §4.1.4), and break ties by the older job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from schedrl.dtsim.cluster import DTSim
from schedrl.dtsim.metrics import Summary, summarize


class Policy(Protocol):
    """Anything that picks the next action of a `DTSim`."""

    def act(self, sim: DTSim) -> int:
        """One action valid in `sim` now; the void action when it wants time to move on."""
        ...


def startable(sim: DTSim) -> list[tuple[int, int]]:
    """(visible slot, job) of every visible job that can start now."""
    return [(i, j) for i, (j, offset) in enumerate(zip(sim.visible, sim.start_offsets())) if offset == 0]


class _Scored:
    """Allocate the candidate (by default: startable) job with the highest score, else void."""

    def score(self, sim: DTSim, jobs: list[int]) -> np.ndarray:
        raise NotImplementedError

    def candidates(self, sim: DTSim) -> list[tuple[int, int]]:
        """(visible slot, job) of the jobs this rule may start now."""
        return startable(sim)

    def act(self, sim: DTSim) -> int:
        ready = self.candidates(sim)
        if not ready:
            return sim.config.void_action
        scores = self.score(sim, [j for _, j in ready])
        return ready[int(np.argmax(scores))][0]


class SJF(_Scored):
    """Shortest job first: max 1 / len_param (RLSchert §4.1.4)."""

    def score(self, sim: DTSim, jobs: list[int]) -> np.ndarray:
        return 1.0 / np.array([sim.len_param[j] for j in jobs], dtype=float)


class SAF(_Scored):
    """Smallest area first: min len_param x units (RLSchert §4.1.4)."""

    def score(self, sim: DTSim, jobs: list[int]) -> np.ndarray:
        return -np.array([sim.len_param[j] * sim.units[j] for j in jobs], dtype=float)


class SAFHold(SAF):
    """Ours, not RLSchert's: SAF that holds long jobs back. A startable job predicted longer than `hold` steps
    starts only if it leaves at least `reserve` units free; when every startable job is held the policy voids
    (waits with work that fits: DeepRM's non-work-conserving idea). `hold` 60 and `reserve` 3 were the best of
    a 3 x 3 grid on every set `examples/research/rlschert_headroom.py` scores (2-7% below SAF; docs/experiments/rlschert.md)."""

    def __init__(self, hold: int = 60, reserve: int = 3):
        self.hold, self.reserve = int(hold), int(reserve)

    def candidates(self, sim: DTSim) -> list[tuple[int, int]]:
        free = int(sim.free[0])
        return [(i, j) for i, j in startable(sim) if sim.len_param[j] <= self.hold or free - sim.units[j] >= self.reserve]


class Tetris(_Scored):
    """Max alignment: requested units x units free now (Grandl et al. 2014, as DeepRM uses it with one resource)."""

    def score(self, sim: DTSim, jobs: list[int]) -> np.ndarray:
        return float(sim.free[0]) * np.array([sim.units[j] for j in jobs], dtype=float)


@dataclass
class TetrisStar(_Scored):
    """DeepRM's Tetris*: k x alignment + (1 - k) x 1/len, each term divided by its largest value among the candidates."""

    k: float = 0.5
    """Weight of packing against shortness (DeepRM tunes it; 0.5 weighs them equally)."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.k <= 1.0:
            raise ValueError(f"TetrisStar.k must be in [0, 1], got {self.k}")

    def score(self, sim: DTSim, jobs: list[int]) -> np.ndarray:
        align = float(sim.free[0]) * np.array([sim.units[j] for j in jobs], dtype=float)
        short = 1.0 / np.array([sim.len_param[j] for j in jobs], dtype=float)
        return self.k * align / align.max() + (1.0 - self.k) * short / short.max()


@dataclass
class Random:
    """A uniformly random startable job, else void (RLSchert §4.1.4)."""

    seed: int = 0
    """Seed of this policy's own generator."""
    rng: np.random.Generator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def act(self, sim: DTSim) -> int:
        ready = startable(sim)
        if not ready:
            return sim.config.void_action
        return ready[int(self.rng.integers(len(ready)))][0]


@dataclass(frozen=True)
class KillRule:
    """RLSchert §3.3's rule: kill a running job predicted short before it ran that now looks long.

    Kill job j when elapsed < len_param < threshold < run_i and run_i - len_param > min_error, where
    run_i is its current re-estimate. The paper writes the last test as "the related error
    run_i - len_param > 1"; by default we read it literally (an absolute gap in steps), `relative`
    reads it as (run_i - len_param) / len_param. The rule kills a job at most once (a restarted job
    replays the same re-estimates and would otherwise be killed at the same point forever).
    """

    threshold: int = 10
    """Steps separating short from long (RLSchert §3.3: 10)."""
    min_error: int = 1
    """Smallest re-estimate minus pre-run estimate that counts as a misprediction (RLSchert §3.3: 1)."""
    relative: bool = False
    """Compare (run_i - len_param) / len_param with min_error instead of the absolute gap."""

    def kill_action(self, sim: DTSim) -> int | None:
        """The kill action of the first running slot holding such a job, or None."""
        base = sim.config.num_nw + 1
        for k, j in enumerate(sim.slots):
            if j < 0 or not sim.running(j) or sim.kills[j]:
                continue
            lp, run_i = sim.len_param[j], sim.estimate(j)
            error = (run_i - lp) / lp if self.relative else run_i - lp
            if sim.elapsed[j] < lp < self.threshold < run_i and error > self.min_error:
                return base + k
        return None


@dataclass
class WithKill:
    """A selection policy plus the kill rule: kill first (RLSchert Table 7's "with kill policy" rows)."""

    select: Policy
    """The policy that allocates jobs."""
    rule: KillRule = KillRule()
    """When to kill."""

    def act(self, sim: DTSim) -> int:
        kill = self.rule.kill_action(sim)
        return kill if kill is not None else self.select.act(sim)


HEURISTICS = {"tetris": Tetris, "random": Random, "sjf": SJF, "tetris*": TetrisStar, "saf": SAF}
"""name -> policy class, in RLSchert Table 7's column order."""


def make_policy(name: str, seed: int = 0, kill: bool | KillRule = False) -> Policy:
    """A heuristic by name (Random seeded with `seed`), optionally wrapped with the kill rule (True: the default rule)."""
    if name not in HEURISTICS:
        raise ValueError(f"unknown heuristic {name!r}; choose one of {', '.join(HEURISTICS)}")
    policy = Random(seed) if name == "random" else HEURISTICS[name]()
    if kill is False:
        return policy
    return WithKill(policy, KillRule() if kill is True else kill)


def run(sim: DTSim, policy: Policy) -> Summary:
    """Step `sim` with `policy` until the episode ends; its summary.

    A policy that keeps acting without ever moving time (e.g. killing and reallocating forever)
    is stopped with a RuntimeError after more actions in one step than the sim could need.
    """
    per_step = 4 * (sim.n + sim.config.num_kill) + 16
    actions_this_step, step = 0, sim.now
    while not sim.done:
        sim.step(policy.act(sim))
        if sim.now != step:
            actions_this_step, step = 0, sim.now
        else:
            actions_this_step += 1
            if actions_this_step > per_step:
                raise RuntimeError(f"{policy!r} took {per_step} actions at step {step} without moving time on")
    return summarize(sim.records())
