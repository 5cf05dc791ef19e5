"""MRSch's optimisation baseline (§IV-D): BBSched-style multi-objective selection over the window.

At each pick, the window jobs that fit now are candidates; a selection is a subset of them that fits
every resource together. Its two objectives are the node utilisation and the utilisation of the
other resources (the burst buffer; their mean when power is a third) once it starts. The Pareto front
of selections is found exhaustively when at most `exhaustive_limit` jobs fit (2^10 subsets), else by
a genetic algorithm (crossover 1.0, mutation 0.05, at most 50 generations: MRSch §IV-D after Fan et
al., "Scheduling beyond CPUs for HPC", HPDC'19). From the front it takes the selection with the
highest node utilisation, unless another gives more than 30% more of the other resource for less
than 0.1 node-utilisation loss (then the one of those with the most of the other resource).

The selected jobs are picked one per decision; when none fits, the oldest window job is picked and
becomes the reservation, and EASY backfilling (the simulator's) fills around it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EPS = 1e-9


def objectives(selections: np.ndarray, req: np.ndarray, free: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(node utilisation, other utilisation) after starting each selection (S, k) of jobs req (k, R),
    and whether it fits: returns ((S, 2) objectives, (S,) feasible)."""
    totals = selections @ req
    feasible = np.all(totals <= free + EPS * np.maximum(cap, 1.0), axis=1)
    util = (cap - free + totals) / cap
    other = util[:, 1:].mean(axis=1) if req.shape[1] > 1 else np.zeros(len(selections))
    return np.stack([util[:, 0], other], axis=1), feasible


def pareto_front(points: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated rows of `points` (maximising both columns); one per distinct point."""
    order = np.lexsort((-points[:, 1], -points[:, 0]))  # by node desc, then other desc
    front, best_other = [], -np.inf
    last = None
    for i in order:
        p = (points[i, 0], points[i, 1])
        if p[1] > best_other + EPS and p != last:
            front.append(i)
            best_other = p[1]
            last = p
    return np.asarray(front, dtype=np.int64)


def select(points: np.ndarray, front: np.ndarray, node_loss: float = 0.1, other_gain: float = 0.3) -> int:
    """The chosen front index: the highest node utilisation, unless another point gives > `other_gain`
    (relative) more of the other resource for < `node_loss` node utilisation (MRSch §IV-D)."""
    first = front[np.argmax(points[front, 0])]
    node, other = points[first]
    better = [i for i in front
              if points[i, 1] > (1.0 + other_gain) * other + EPS and node - points[i, 0] < node_loss]
    if not better:
        return int(first)
    return int(max(better, key=lambda i: (points[i, 1], points[i, 0])))


def exhaustive(req: np.ndarray, free: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every feasible subset of the k jobs: ((S, k) selections, (S, 2) objectives)."""
    k = len(req)
    bits = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(np.float64)
    points, feasible = objectives(bits, req, free, cap)
    return bits[feasible], points[feasible]


@dataclass
class GeneticSearch:
    """The genetic algorithm over subsets (bit vectors) of the candidate jobs."""

    crossover: float = 1.0
    """Probability that two parents are recombined (MRSch §IV-D: 1.0)."""
    mutation: float = 0.05
    """Probability that each bit flips (MRSch §IV-D: 0.05)."""
    generations: int = 50
    """Generations (MRSch §IV-D: at most 50)."""
    population: int = 20
    """Individuals per generation (our choice)."""
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    """Random source."""

    def _repair(self, x: np.ndarray, req: np.ndarray, free: np.ndarray, cap: np.ndarray) -> np.ndarray:
        # drop random jobs until the selection fits, then add random jobs that still fit (a Pareto-optimal
        # selection is maximal: every job raises the node utilisation)
        x = x.copy()
        chosen = list(self.rng.permutation(np.flatnonzero(x)))
        while chosen and not objectives(x[None], req, free, cap)[1][0]:
            x[chosen.pop()] = 0.0
        left = free - x @ req
        for j in self.rng.permutation(np.flatnonzero(x == 0)):
            if np.all(req[j] <= left + EPS * np.maximum(cap, 1.0)):
                x[j] = 1.0
                left = left - req[j]
        return x

    def run(self, req: np.ndarray, free: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every distinct feasible selection met: ((S, k) selections, (S, 2) objectives)."""
        k = len(req)
        pop = np.stack([self._repair((self.rng.random(k) < 0.5).astype(np.float64), req, free, cap)
                        for _ in range(self.population)])
        seen = {x.tobytes(): x for x in pop}
        for _ in range(self.generations):
            points, _ = objectives(pop, req, free, cap)
            dominated_by = np.array([np.sum(np.all(points >= p, axis=1) & np.any(points > p, axis=1)) for p in points])
            children = []
            while len(children) < self.population:
                a, b = (min(self.rng.integers(len(pop), size=2), key=lambda i: dominated_by[i]) for _ in range(2))
                x, y = pop[a].copy(), pop[b].copy()
                if k > 1 and self.rng.random() < self.crossover:
                    cut = int(self.rng.integers(1, k))
                    x[cut:], y[cut:] = pop[b][cut:], pop[a][cut:]
                for child in (x, y):
                    flips = self.rng.random(k) < self.mutation
                    child[flips] = 1.0 - child[flips]
                    children.append(self._repair(child, req, free, cap))
            both = np.concatenate([pop, np.stack(children)])
            for x in both:
                seen.setdefault(x.tobytes(), x)
            points, _ = objectives(both, req, free, cap)
            dominated_by = np.array([np.sum(np.all(points >= p, axis=1) & np.any(points > p, axis=1)) for p in points])
            # elitist: the least dominated, then the largest total utilisation
            keep = np.lexsort((-points.sum(axis=1), dominated_by))[: self.population]
            pop = both[keep]
        selections = np.stack(list(seen.values()))
        return selections, objectives(selections, req, free, cap)[0]


@dataclass
class GAPolicy:
    """The GA baseline as a simulator policy (`pick(sim)`, list discipline)."""

    exhaustive_limit: int = 10
    """Search every subset when at most this many window jobs fit (MRSch §IV-D: 10)."""
    node_loss: float = 0.1
    """Node utilisation one may give up ... (MRSch §IV-D: 0.1)"""
    other_gain: float = 0.3
    """... for this relative gain of the other resource (MRSch §IV-D: 30%)."""
    seed: int = 0
    """Seed of the genetic algorithm."""
    name: str = "GA"
    """Column label."""

    def __post_init__(self) -> None:
        self.search = GeneticSearch(rng=np.random.default_rng(self.seed))
        self._plan: list[int] = []
        self._plan_for: tuple = ()

    def choose(self, req: np.ndarray, free: np.ndarray, cap: np.ndarray) -> np.ndarray:
        """The selection (bit vector over the k candidate jobs) this baseline starts."""
        if len(req) <= self.exhaustive_limit:
            selections, points = exhaustive(req, free, cap)
        else:
            selections, points = self.search.run(req, free, cap)
        front = pareto_front(points)
        return selections[select(points, front, self.node_loss, self.other_gain)]

    def pick(self, sim) -> int:
        window = sim.window
        if self._plan and self._plan_for == (id(sim), sim.now):
            job = self._plan.pop(0)
            if job in window and sim.fits(np.array([job]))[0]:
                return int(job)
        self._plan = []
        fits = sim.fits(window)
        candidates = window[fits]
        if len(candidates) == 0:
            return int(window[0])  # nothing fits: the oldest waiting job is reserved
        chosen = self.choose(sim.state.req[candidates], sim.free.copy(), sim.capacity)
        plan = [int(j) for j in candidates[chosen > 0]]
        self._plan, self._plan_for = plan[1:], (id(sim), sim.now)
        return plan[0]
