"""Where an env's episodes come from: fixed starts, seeded random windows, and phased curricula.

Every agent's env draws its episodes through an `EpisodeSource`, so the ways of choosing training
data are written once:

* **fixed** starts, cycled in order (evaluation on named sequences);
* **real**: a contiguous window of the trace at a seeded random start (RLScheduler §V-A; DRAS's
  "real jobsets");
* **filtered**: a contiguous window whose start is drawn from a given set (RLScheduler's trajectory
  filtering phase 1, §IV-C);
* **sampled**: jobs of the trace re-timed as a Poisson process at its mean arrival rate (DRAS §III-D,
  the first phase of its curriculum);
* **synthetic**: jobs drawn from the trace's size/run-time distribution arriving with its hourly and
  weekly pattern (DRAS §IV-A, MRSch §V-A, the third phase).

A curriculum is a list of `Phase`s, each lasting a number of episodes per env instance (the last
one lasts for ever), in any order. Resumed runs and restarted env runners continue a source where it
was (`continue_training`): the episodes drawn so far are counted, and later seeds are salted so a
rebuilt env does not replay the sequences already trained on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedrl.scenarios.split import training_end  # noqa: F401  (re-exported: agents' envs import it from here)
from schedrl.workload.sampling import poisson_retimed, sequence, synthetic_jobset
from schedrl.workload.workload import Workload

PHASE_KINDS = ("real", "filtered", "sampled", "synthetic")
"""The kinds of episode a phase draws."""


@dataclass(frozen=True)
class Phase:
    """One phase of a curriculum."""

    kind: str
    """One of `PHASE_KINDS`."""
    episodes: int = 0
    """Episodes (per env instance) this phase lasts; 0: until the end (only the last phase)."""
    starts: tuple[int, ...] = ()
    """`filtered`: the starts drawn from (positions in the trace)."""

    def __post_init__(self) -> None:
        if self.kind not in PHASE_KINDS:
            raise ValueError(f"unknown curriculum phase {self.kind!r}; choose from {', '.join(PHASE_KINDS)}")
        if self.episodes < 0:
            raise ValueError(f"a phase lasts episodes >= 0, got {self.episodes}")
        if self.kind == "filtered" and not self.starts:
            raise ValueError("a filtered phase needs the starts it draws from")


def curriculum(kinds, episodes) -> tuple[Phase, ...]:
    """Phases from parallel lists of kinds and episode counts (the last count may be 0: for ever)."""
    kinds, episodes = list(kinds), list(episodes)
    if len(kinds) != len(episodes):
        raise ValueError(f"{len(kinds)} curriculum phases but {len(episodes)} episode counts")
    return tuple(Phase(k, int(n)) for k, n in zip(kinds, episodes))


def parse_curriculum(text: str) -> tuple[Phase, ...]:
    """`"sampled:200,real:200,synthetic"` -> phases: each `kind[:episodes]`, episodes per env instance;
    the last phase may leave out its count (it lasts for ever). One string, so a sweep can grid over
    whole curricula (`env.curriculum: {grid: [real, "sampled:100,real:100,synthetic"]}`)."""
    phases = []
    items = [item.strip() for item in str(text).split(",")]
    if not text or any(not item for item in items):
        raise ValueError(f"curriculum {text!r}: give phases as kind[:episodes],... e.g. sampled:200,real:200,synthetic")
    for i, item in enumerate(items):
        kind, sep, count = item.partition(":")
        if kind.strip() == "filtered":
            raise ValueError("a filtered phase is set by trajectory filtering, not by a curriculum string")
        try:
            episodes = int(count) if sep else 0
        except ValueError:
            raise ValueError(f"curriculum {text!r}: {count!r} is not a number of episodes") from None
        if not sep and i < len(items) - 1:
            raise ValueError(f"curriculum {text!r}: phase {kind!r} needs a number of episodes (only the last "
                             "phase may go on for ever)")
        phases.append(Phase(kind.strip(), episodes))
    return tuple(phases)


@dataclass
class Episode:
    """One drawn episode."""

    jobs: Workload
    """The jobset to simulate."""
    start: int
    """Its start in the trace (-1 for re-timed `sampled`/`synthetic` jobsets)."""
    phase: str
    """The kind of the phase it came from (or `fixed`)."""


class EpisodeSource:
    """Draws an env's episodes: fixed starts if given, else the phases of a curriculum in order.

    `lo`/`hi` bound the part of the trace training may see (e.g. DRAS's first 70%); sampled and
    synthetic jobsets are built from that part only.
    """

    def __init__(self, workload: Workload, length: int, *, fixed: tuple[int, ...] = (),
                 phases: tuple[Phase, ...] = (Phase("real"),), lo: int = 0, hi: int | None = None):
        hi = len(workload) if hi is None else hi
        if not fixed and not 0 <= lo < hi <= len(workload):
            raise ValueError(f"training range [{lo}, {hi}) is not within the {len(workload)} jobs of {workload.name!r}")
        if not fixed and hi - lo < length:
            raise ValueError(f"trace {workload.name!r}: the {hi - lo} jobs training draws from are fewer than the "
                             f"sequence length {length}")
        if not phases:
            raise ValueError("a curriculum needs at least one phase")
        if any(p.episodes == 0 for p in phases[:-1]):
            raise ValueError("only the last curriculum phase may last for ever (episodes 0)")
        for p in phases:
            bad = [s for s in p.starts if not lo <= s <= hi - length]
            if bad:
                raise ValueError(f"{p.kind} starts {bad[:3]} leave the training range [{lo}, {hi - length}]")
        for s in fixed:
            sequence(workload, int(s), length)  # bounds checked with a clear message
        self.workload, self.length, self.fixed, self.phases, self.lo, self.hi = workload, length, fixed, phases, lo, hi
        self._part = workload[max(0, lo):max(lo + 1, hi)]
        self.episodes = 0
        """Episodes drawn so far (counting those of a predecessor, see `continue_training`)."""
        self.salt: tuple[int, ...] = ()
        self._next_fixed = 0

    def phase(self) -> Phase:
        """The phase the next episode comes from."""
        end = 0
        for p in self.phases:
            end += p.episodes
            if p.episodes == 0 or self.episodes < end:
                return p
        return self.phases[-1]  # every phase lasted its episodes: the last one goes on

    def next(self, rng: np.random.Generator) -> Episode:
        """The next episode, drawn with the env's `np_random`."""
        if self.fixed:
            start = int(self.fixed[self._next_fixed % len(self.fixed)])
            self._next_fixed += 1
            return Episode(sequence(self.workload, start, self.length), start, "fixed")
        phase = self.phase()
        self.episodes += 1
        if phase.kind == "real":
            start = int(rng.integers(self.lo, self.hi - self.length + 1))
        elif phase.kind == "filtered":
            start = int(phase.starts[rng.integers(len(phase.starts))])
        elif phase.kind == "sampled":
            return Episode(poisson_retimed(self._part, self.length, rng), -1, phase.kind)
        else:
            return Episode(synthetic_jobset(self._part, self.length, rng), -1, phase.kind)
        return Episode(sequence(self.workload, start, self.length), start, phase.kind)

    def for_reset(self, rng: np.random.Generator, options: dict | None = None) -> Episode:
        """The episode an env's `reset` plays: `options["start"]` if given (not counted), else `next`."""
        if options and "start" in options:
            start = int(options["start"])
            return Episode(sequence(self.workload, start, self.length), start, "given")
        return self.next(rng)

    # ---------------------------------------------------------------- resumed runs, restarted runners
    def reset_seed(self, seed: int | None) -> int | None:
        """The seed to reset the env's RNG with: `seed` mixed with the salt once training was continued."""
        if seed is None or not self.salt:
            return seed
        return int(np.random.SeedSequence([seed, *self.salt]).generate_state(1)[0])

    def continue_training(self, episodes_done: int, salt: tuple[int, ...], rng: np.random.Generator | None):
        """Count `episodes_done` as drawn (a curriculum phase ends where it would have) and salt every later
        seed; returns the env's RNG re-derived with the salt (or None if it was not seeded yet)."""
        self.episodes = max(self.episodes, int(episodes_done))
        self.salt = tuple(int(s) for s in salt)
        if rng is None:
            return None
        return np.random.default_rng(np.random.SeedSequence([int(rng.integers(2**63)), *self.salt]))


class ContinuedEpisodes:
    """Mixin for a `gymnasium.Env` whose episodes come from `self.episodes` (an `EpisodeSource`): the
    `continue_training` hook the training driver calls on resumed runs and restarted env runners."""

    episodes: EpisodeSource

    def continue_training(self, episodes_done: int, salt: tuple[int, ...]) -> None:
        """Pick up a training run part-way without replaying it: `episodes_done` episodes count as drawn
        (a filtering or curriculum phase ends where it would have) and every later seed is mixed with `salt`
        (e.g. the training iteration), so an env rebuilt with its predecessor's seed draws new sequences."""
        rng = self.episodes.continue_training(episodes_done, salt, self._np_random)
        if rng is not None:  # seeded already: its stream re-derived with the salt
            self.np_random = rng
