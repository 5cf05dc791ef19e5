"""Warm start: behaviour cloning of a heuristic before PPO (our addition; RLScheduler starts from random weights).

With random weights the greedy kernel policy schedules about as badly as FCFS, and PPO spends most of
a short budget getting to where a classic heuristic already is (docs/experiments/rlscheduler.md: ~20 minutes of
FCFS-like validation on Lublin-1 before learning starts). A warm start skips that plateau:

1. **Demonstrations.** The teacher heuristic schedules `episodes` training sequences drawn by the
   env's own episode source (trajectory-filtering phase 1 first, as training would), through the env,
   so every recorded observation is exactly what the policy sees; the label is the slot of the job the
   teacher picks (its choice over the visible queue), the value target the discounted return to go.
   `auto` ranks the heuristics by their mean objective on those very sequences.
2. **Cloning.** The module's policy is fitted to the labels by cross-entropy, its value network to the
   returns by MSE (after shifting the value output's bias to the mean return, so a -300 return does not
   take 10^5 Adam steps to reach), on the learner, before the first sampling; then the env runners get
   the weights. PPO then improves on the teacher instead of rediscovering it.
3. **`auto` keeps the best clone, not the best teacher.** The kernel network scores each job alone from
   its features, so it clones some heuristics better than others: on the 40,000-job default trace SJF
   to 94-98% greedy agreement, F1 to ~72% (F1's key adds 870·log10(submit time), absolute times the
   observation does not hold, and the term's weight against the size term shrinks along the trace).
   A heuristic's rank as a teacher says little about how well its clone schedules other jobs (the
   README main job's runs: WFP3's clone 951-2,138 on the validation sequences, F1's 182-198, SJF's
   229-237; docs/experiments/rlscheduler.md). So `auto` clones the `AUTO_CLONES` best heuristics in turn from the
   same initial weights, scores each
   clone's greedy schedules on the run's validation sequences (the ones checkpoint selection uses,
   disjoint from training and evaluation; the demonstration sequences when the run has none), and
   keeps the best clone.

Numpy-only except `clone` (`schedrl.agents.cloning`), which needs torch (called on the learner).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedrl.agents.returns import returns_to_go
from schedrl.agents.rlscheduler.keys import OBS_ACTION_MASK, OBS_JOBS

AUTO = "auto"
TEACHERS = ("fcfs", "sjf", "wfp3", "unicep", "f1", "saf", "smallest")
"""Heuristics that rank jobs by a priority key, so their pick among the visible jobs is well defined."""
AUTO_CANDIDATES = ("sjf", "f1", "wfp3", "unicep", "fcfs")
"""What `auto` chooses among (RLScheduler Table V's heuristics)."""
AUTO_CLONES = 3
"""How many of the best heuristics `auto` clones before keeping the clone that schedules best (~10 s each)."""


def check_teacher(name: str | None) -> str | None:
    """The normalised teacher name (None: no warm start); ValueError naming the choices otherwise."""
    if name is None or str(name).lower() in ("none", ""):
        return None
    name = str(name).lower()
    if name != AUTO and name not in TEACHERS:
        raise ValueError(f"unknown warm-start teacher {name!r}; choose auto, none or one of {', '.join(TEACHERS)}")
    return name


@dataclass
class Demonstrations:
    """A teacher's decisions on training sequences, as the env observed them."""

    teacher: str
    jobs: np.ndarray
    """(N, slots, F) float32 observations."""
    mask: np.ndarray
    """(N, slots) float32 action masks."""
    slots: np.ndarray
    """(N,) int64 the teacher's slot."""
    returns: np.ndarray
    """(N,) float32 discounted return from each decision to the episode's end."""
    episode_values: np.ndarray
    """(episodes,) the objective's value of each demonstrated episode."""
    candidates: dict[str, float]
    """Mean objective of each heuristic considered by `auto` on the same sequences ({} otherwise)."""
    seconds: float = 0.0
    sequences: list = field(default_factory=list)
    """The demonstrated sequences (`Workload`s), for scoring a clone on them."""
    metric: str = "bsld"
    """The objective the values are of."""

    def ranked(self, lower: bool) -> list[str]:
        """The candidates, best first."""
        return sorted(self.candidates, key=self.candidates.get, reverse=not lower)

    def __len__(self) -> int:
        return len(self.slots)


def teacher_slot(heuristic, env) -> int:
    """The slot of the visible job `heuristic` runs next in `env` (its best-ranked visible job)."""
    from schedrl.heuristics import keys

    sim = env.sim
    visible = env._visible
    job = heuristic.pick(sim)
    hit = np.flatnonzero(visible == job)
    if hit.size:
        return int(hit[0])
    # the teacher's job is past the visible window (queues > 128): its best among the visible ones
    procs = np.asarray(sim.workload.procs_req, dtype=np.float64)
    ranked = [keys.priority_key(heuristic.kind, sim.state_ref, int(j), sim.now, procs) for j in visible]
    return int(np.argmin(ranked))


def demonstrations(env_config: Mapping[str, Any], teacher: str, episodes: int, seed: int = 0,
                   gamma: float = 1.0) -> Demonstrations:
    """`teacher` (a name in TEACHERS, or `auto`) scheduling `episodes` training sequences of the env."""
    from schedrl.agents.rlscheduler.env import RLSchedulerEnv
    from schedrl.heuristics import get_heuristic
    from schedrl.metrics import METRICS, summarize
    from schedrl.sim import Simulator

    t0 = time.perf_counter()
    if episodes < 1:
        raise ValueError(f"warm-start episodes must be >= 1, got {episodes}")
    env = RLSchedulerEnv(config=dict(env_config))
    # the sequences first (the env's episode source, seeded), then the teacher on each
    sequences, starts = [], []
    for e in range(episodes):
        env.reset(seed=seed + e)
        sequences.append(env.sim.workload)
        starts.append(env.start)
    metric = env.config.metric
    lower = METRICS[metric][1]
    candidates: dict[str, float] = {}
    if teacher == AUTO:
        for name in AUTO_CANDIDATES:
            candidates[name] = float(np.mean([summarize(get_heuristic(name).run(Simulator(s, env.sim_config)))
                                              .value(metric) for s in sequences]))
        teacher = (min if lower else max)(candidates, key=candidates.get)
    heuristic = get_heuristic(teacher)
    jobs, masks, slots, returns, values = [], [], [], [], []
    for start in starts:
        obs, _ = env.reset(options={"start": start})
        rewards = []
        while True:
            slot = teacher_slot(heuristic, env)
            jobs.append(obs[OBS_JOBS])
            masks.append(obs[OBS_ACTION_MASK])
            slots.append(slot)
            obs, reward, terminated, truncated, info = env.step(slot)
            rewards.append(float(reward))
            if terminated or truncated:
                break
        returns.extend(returns_to_go(rewards, gamma))  # only the last reward with the final reward
        values.append(float(info["metric_value"]))
    return Demonstrations(teacher, np.stack(jobs), np.stack(masks), np.asarray(slots, np.int64),
                          np.asarray(returns, np.float32), np.asarray(values), candidates,
                          time.perf_counter() - t0, sequences, metric)


def validation_sequences(algorithm, env_config: Mapping[str, Any]) -> list:
    """The run's validation sequences (`Workload`s; the training callback's), [] when it has none."""
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
    from schedrl.agents.rlscheduler.env import load_env_workload
    from schedrl.agents.trial_keys import VALIDATION_KEY
    from schedrl.workload.sampling import sequence

    spec = algorithm.config.learner_config_dict.get(VALIDATION_KEY) or {}
    if not spec.get("starts"):
        return []
    workload = load_env_workload(RLSchedulerEnvConfig.from_dict(dict(env_config)))
    length = int(spec.get("length") or env_config["sequence_length"])
    return [sequence(workload, int(start), length) for start in spec["starts"]]


def score_clone(module, env_config: Mapping[str, Any], sequences) -> float:
    """Mean objective of `module`'s greedy schedules of `sequences` (the env's simulator settings)."""
    from schedrl.agents.rlscheduler.env import RLSchedulerEnv
    from schedrl.agents.rlscheduler.policy import CheckpointPolicy
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator

    env = RLSchedulerEnv(config=dict(env_config))
    policy = CheckpointPolicy(module, dict(env_config))  # no compiled fast path: the simulator asks it each pick
    return float(np.mean([summarize(Simulator(s, env.sim_config).run(policy)).value(env.config.metric)
                          for s in sequences]))


def clone(module, demos: Demonstrations, epochs: int = 8, minibatch: int = 512, lr: float = 1e-3,
          seed: int = 0, smoothing: float = 0.0) -> dict[str, float]:
    """Fit `module`'s policy to the teacher's slots (cross-entropy) and its value net to the returns (MSE)
    (`schedrl.agents.cloning.clone`). Returns the statistics: the greedy agreement with the teacher and the
    losses, before and after."""
    from schedrl.agents.cloning import clone as fit

    return fit(module, {OBS_JOBS: demos.jobs, OBS_ACTION_MASK: demos.mask}, demos.slots, demos.returns,
               value_net=getattr(module, "vf", None), epochs=epochs, minibatch=minibatch, lr=lr, seed=seed,
               smoothing=smoothing, mask_key=OBS_ACTION_MASK)


def warm_start(algorithm, spec: Mapping[str, Any]) -> dict[str, Any]:
    """Clone `spec["teacher"]` into `algorithm`'s module on its learner(s) and sync the env runners.

    `spec`: {"teacher", "episodes", "epochs", "seed", "gamma"} and optionally "clones" (`auto` only; default
    `AUTO_CLONES`, 1: the best heuristic's clone, as before); returns what `schedrl train` reports.
    """
    from schedrl.agents.cloning import clone_on_learners
    from schedrl.metrics import METRICS

    env_config = dict(algorithm.config.env_config)
    episodes, gamma = int(spec["episodes"]), float(spec.get("gamma", 1.0))
    epochs, seed = int(spec["epochs"]), int(spec.get("seed") or 0)
    smoothing = float(spec.get("smoothing", 0.0))
    demos = demonstrations(env_config, spec["teacher"], episodes, seed, gamma)
    if not demos.candidates or int(spec.get("clones", AUTO_CLONES)) < 2:
        stats = clone_on_learners(algorithm, lambda module: clone(module, demos, epochs=epochs, seed=seed,
                                                                          smoothing=smoothing))
        return {"teacher": demos.teacher, "decisions": len(demos), "episodes": episodes,
                "teacher_value": float(demos.episode_values.mean()), "candidates": demos.candidates,
                "demonstration_seconds": demos.seconds, **stats}
    # auto: clone the best few heuristics, keep the clone that schedules the demonstrated sequences best
    lower = METRICS[demos.metric][1]
    names = demos.ranked(lower)[:int(spec.get("clones", AUTO_CLONES))]
    sets = {name: demos if name == demos.teacher else demonstrations(env_config, name, episodes, seed, gamma)
            for name in names}
    scored_on = validation_sequences(algorithm, env_config)
    where = "validation" if scored_on else "demonstration"

    def fit_best(module) -> dict[str, Any]:
        import copy

        t0 = time.perf_counter()
        initial = copy.deepcopy(module.state_dict())
        agreements, values, kept = {}, {}, None
        for name, d in sets.items():
            module.load_state_dict(initial)
            stats = clone(module, d, epochs=epochs, seed=seed, smoothing=smoothing)
            agreements[name] = stats["agreement"]
            values[name] = score_clone(module, env_config, scored_on or d.sequences)
            if kept is None or (values[name] < values[kept[0]] if lower else values[name] > values[kept[0]]):
                kept = (name, stats, copy.deepcopy(module.state_dict()))
        module.load_state_dict(kept[2])
        return {**kept[1], "kept": kept[0], "clone_values": values, "clone_agreements": agreements, "clones_scored_on": where,
                "clone_seconds": time.perf_counter() - t0}

    stats = clone_on_learners(algorithm, fit_best)
    kept = stats.pop("kept")
    return {"teacher": kept, "decisions": len(sets[kept]), "episodes": episodes,
            "teacher_value": float(demos.candidates[kept]), "candidates": demos.candidates,
            "demonstration_seconds": sum(d.seconds for d in sets.values()), **stats}
