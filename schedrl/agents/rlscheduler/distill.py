"""`schedrl distill` of an RLScheduler policy: the kernel's scores as a regression tree over one job's features.

DAgger on the policy's own training zone (the first `train_fraction` of its trace): round 0 schedules `windows`
training windows with the policy and records, at every decision with two or more visible jobs, each visible job's
feature row and its label from the kernel (`target`: the job's rank share among the visible jobs by the kernel's
scores, 1 for its first choice and 0 for its last, or the kernel's score itself); a regression tree is fitted to them
(`schedrl.agents.cart.fit_regression`, variance reduction); each later round schedules fresh windows with the current
tree picking (the states the tree visits) and labels them with the kernel again; the tree is refitted on everything
gathered. The validation and evaluation windows of the policy's scenario stay unseen.

The tree replaces the kernel network and nothing else (normalisation, visible queue, semantics are the policy's): it
is exported as a zoo policy of the rlscheduler agent (`export_tree`) that picks the visible job with the highest tree
value, ties to the first in the queue (`tree.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from schedrl.agents import cart
from schedrl.agents.cart import RegressionTree, TreeError, check_distillation, fit_regression
from schedrl.agents.rlscheduler.policy import CheckpointPolicy
from schedrl.agents.rlscheduler.tree import NETWORK, TARGETS, Units, feature_names, text, tree_network
from schedrl.sim.simulator import Simulator

DEFAULT_TARGET = "score"
"""What `schedrl distill` fits by default: the kernel's score kept more of the policy's gain than the rank share (on
`lublin1`, depth 6: -0.5% against the policy's mean where the rank's tree lost 47.1%; docs/experiments/distill.md,
2026-11-29: the RLScheduler kernel as a tree)."""


def labels_of(scores: np.ndarray, target: str) -> np.ndarray:
    """The label of each visible job of one decision: its rank share by `scores` (1: the highest, 0: the lowest;
    ties share the first one's rank, as `argmax` picks the first), the score itself, or the score less the decision's
    mean score (`centred`)."""
    scores = np.asarray(scores, np.float64)
    if target == "score":
        return scores
    if target == "centred":  # what only shifts every job of a decision alike (the free share) does not pick a job
        return scores - scores.mean()
    k = len(scores)
    if k < 2:
        return np.ones(k)
    order = np.argsort(-scores, kind="stable")
    rank = np.empty(k)
    rank[order] = np.arange(k)
    # equal scores: the rank of the first of them
    for value in np.unique(scores[order][np.r_[False, np.diff(scores[order]) == 0]]):
        same = scores == value
        rank[same] = rank[same].min()
    return 1.0 - rank / (k - 1)


class _Labelling(CheckpointPolicy):
    """The kernel labels every visible job of every decision with two or more; the tree (once there is one) picks.
    Counts the decisions where the two pick different jobs."""

    def __init__(self, policy: CheckpointPolicy, tree: RegressionTree | None, target: str):
        super().__init__(policy.module, policy.env_config, policy.name)
        self.tree = tree
        self.target = target
        self.rows: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []
        self.decisions = 0
        self.disagree = 0

    def choose(self, jobs: np.ndarray, mask: np.ndarray) -> int:
        """The slot picked among the observation's visible jobs (and the labels recorded)."""
        k = int(mask.sum())
        kernel = self.scores(jobs, mask)
        pick = int(np.argmax(kernel))
        if k < 2:
            return pick
        self.decisions += 1
        self.rows.append(np.array(jobs[:k], np.float32))
        self.labels.append(labels_of(kernel, self.target))
        if self.tree is None:
            return pick
        mine = int(np.argmax(self.tree.predict(jobs[:k])))  # ties: the first in the queue, as the kernel's argmax
        self.disagree += int(mine != pick)
        return mine

    def pick(self, sim: Simulator) -> int:
        jobs, mask, visible = self.observe(sim)
        return int(visible[self.choose(jobs, mask)])


@dataclass
class Distilled:
    """A fitted tree with how it was made: `rounds` (one dict per DAgger round), the training zone it read, the
    policy's normalisation (`units`, to print thresholds in seconds)."""

    tree: RegressionTree
    depth: int
    units: Units
    target: str
    rounds: list[dict[str, Any]] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        return text(self.tree, self.units)


def check_distillable(policy) -> None:
    """TreeError (one line) for an RLScheduler policy this cannot distil (not trained, or a tree already)."""
    cart.check_distillable(policy, CheckpointPolicy, NETWORK, "RLScheduler policy: only a trained kernel "
                           "(`schedrl train rlscheduler`) can be distilled into a tree")


def distill(policy: CheckpointPolicy, depth: int = 6, rounds: int = 4, windows: int = 8, jobs: int | None = None,
            seed: int = 0, min_leaf: int = 5, log: Callable[[str], None] = print,
            target: str = DEFAULT_TARGET) -> Distilled:
    """DAgger of the kernel's scores into a regression tree of at most `depth` levels (see the module)."""
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
    from schedrl.agents.rlscheduler.env import load_env_workload, sim_config_for
    from schedrl.metrics import summarize
    from schedrl.scenarios.split import training_end
    from schedrl.workload.sampling import sequence
    from schedrl.zoo.card import machine_of

    check_distillable(policy)
    check_distillation(depth, rounds, windows)
    if target not in TARGETS:
        raise TreeError(f"the tree's target must be one of {', '.join(TARGETS)}; got {target!r}")
    cfg = RLSchedulerEnvConfig.from_dict(dict(policy.env_config))
    workload = load_env_workload(cfg)
    end = training_end(cfg.train_fraction, len(workload))
    length = min(int(jobs or cfg.sequence_length), end)
    if length < 2:
        raise TreeError(f"{policy.name}'s training zone of {cfg.trace} holds {end} jobs: nothing to label")
    sim_config = sim_config_for(cfg)
    rng = np.random.default_rng(seed)
    names: tuple[str, ...] | None = None
    rows: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    tree: RegressionTree | None = None
    out = Distilled(tree=None, depth=depth, units=Units(policy.norm), target=target,  # type: ignore[arg-type]
                    source={"trace": cfg.trace, "training_zone": [0, int(end)], "jobs": length, "windows": windows,
                            "rounds": rounds, "seed": seed, "min_leaf": min_leaf, "target": target})
    t0 = time.perf_counter()
    for r in range(rounds):
        labelling = _Labelling(policy, tree, target)
        values = []
        for _ in range(windows):
            start = int(rng.integers(0, end - length + 1))
            sim = Simulator(sequence(workload, start, length), sim_config)
            out.source.setdefault("machine", machine_of(sim))
            names = names or feature_names(sim.resources, policy.key_features)
            values.append(summarize(sim.run(labelling)).value(cfg.metric))
        rows += labelling.rows
        labels += labelling.labels
        if not rows:
            raise TreeError(f"{policy.name} met no decision between two or more jobs on {windows} training windows "
                            f"of {length} jobs: nothing to distil")
        x, y = np.concatenate(rows), np.concatenate(labels)
        tree = fit_regression(x, y, names, depth, min_leaf=min_leaf)
        agree = _top_agreement(tree, rows, labels)
        row = {"round": r, "acting": "policy" if r == 0 else "tree", "decisions": labelling.decisions,
               "labelled_decisions": len(rows), "labelled_jobs": int(len(y)), "disagreed": labelling.disagree,
               "fit_agreement": agree, "depth": tree.depth, "leaves": tree.leaves,
               f"mean_{cfg.metric}": float(np.mean(values)), "seconds": time.perf_counter() - t0}
        out.rounds.append(row)
        acted = "the kernel" if r == 0 else f"the tree ({labelling.disagree} of {labelling.decisions} picks unlike " \
                                            "the kernel's)"
        log(f"distill round {r + 1}/{rounds}: {labelling.decisions:,} decisions labelled by the kernel with {acted} "
            f"acting ({len(rows):,} in all, {len(y):,} jobs); tree depth {tree.depth}, {tree.leaves} leaves, picks "
            f"the kernel's job in {100 * agree:.1f}% of them; {cfg.metric} {row[f'mean_{cfg.metric}']:.2f} on the "
            f"round's {windows} windows; {row['seconds']:.0f} s")
    out.tree = tree
    out.source["features"] = list(names or ())
    return out


def _top_agreement(tree: RegressionTree, rows: list[np.ndarray], labels: list[np.ndarray]) -> float:
    """Share of the labelled decisions where the tree's first choice (first in queue among equals) is the kernel's."""
    hits = [int(np.argmax(tree.predict(x))) == int(np.argmax(y)) for x, y in zip(rows, labels)]
    return float(np.mean(hits)) if hits else float("nan")


def architecture(distilled: Distilled, policy: CheckpointPolicy) -> dict[str, Any]:
    """The exported architecture: the kernel's observation shapes, the named features, the target and the tree."""
    from schedrl.agents.rlscheduler.inference import architecture_of

    observation = getattr(policy.module, "architecture", None) or architecture_of(policy.module)
    return {"network": NETWORK, "observation": dict(observation["observation"]),
            "features": list(distilled.tree.features), "target": distilled.target, "tree": distilled.tree.to_dict()}


def export_tree(distilled: Distilled, policy: CheckpointPolicy, out_dir: str | Path, name: str, command: list[str],
                source: str | None = None, judge=None):
    """Write the tree as an exported rlscheduler policy (`schedrl.zoo.store`): the policy's run record with the tree's
    model and command, the readable tree in its architecture, its arrays as the weights. The export loads it back from
    those files and checks it prints as the fitted one. Returns the `Exported`."""
    import torch

    from schedrl.agents.checkpoint import load_exported
    from schedrl.zoo import card, store

    tree = distilled.tree
    record = {**policy.record.to_dict(), "model": f"kernel-tree-d{distilled.depth}", "command": list(command)}
    record.pop("train_args", None)
    arch = {**architecture(distilled, policy),
            "distilled_from": {"policy": source or policy.name, **distilled.source, "dagger": distilled.rounds}}
    net = tree_network(arch)
    tensors = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in tree.arrays().items()}
    fields = card.make(record, machine=dict(distilled.source.get("machine") or {}),
                       validation=cart.card_validation(policy.record, CheckpointPolicy(net, dict(policy.record.env_config)), judge),
                       budget={"iterations": len(distilled.rounds), "env_steps": None,
                               "seconds": distilled.rounds[-1]["seconds"] if distilled.rounds else None},
                       precision={"stored": "fp32", "why": "a tree's thresholds and values are kept as fitted (float32)"})
    exported = store.write(out_dir, name, record, arch, tensors, fields)
    loaded = load_exported(exported.directory)
    if text(tree, distilled.units) != text(loaded.module.tree, Units(loaded.norm)):
        raise TreeError(f"{exported.policy_file}: the tree read back differs from the one fitted")
    return exported


def tree_card(exported) -> str | None:
    """What `schedrl zoo show` prints of an exported kernel tree (None for a trained network): where it came from and
    the tree as nested if/else lines in its features' units."""
    from schedrl.agents.rlscheduler.observation import JobFeatures
    from schedrl.agents.rlscheduler.tree import check_architecture

    arch = exported.architecture
    if arch.get("network") != NETWORK:
        return None
    tree = check_architecture(arch, str(exported.policy_file))
    norm = JobFeatures.from_dict((exported.record.get("env_config") or {}).get("norm") or {})
    source = arch.get("distilled_from") or {}
    last = (source.get("dagger") or [{}])[-1]
    what = {"rank": "the job's rank share among the visible jobs by the kernel's scores (1: the kernel's first "
                    "choice, 0: its last)",
            "centred": "the kernel's score (its logit) less the mean score of the decision's visible jobs"}.get(
        arch.get("target"), "the kernel's score (its logit)")
    lines = ["## The tree", "",
             f"Distilled from `{source.get('policy', '?')}` by DAgger ({len(source.get('dagger') or [])} rounds of "
             f"{source.get('windows')} windows of {source.get('jobs')} jobs from {source.get('trace')}'s training "
             f"zone): depth {tree.depth}, {tree.leaves} leaves. It scores each visible job from that job's features; a "
             f"leaf's priority is its labelled jobs' mean of {what}. The policy runs the visible job with the highest "
             "priority, the first in the queue (submit order) among equals; its first choice was the kernel's in "
             f"{100 * last.get('fit_agreement', float('nan')):.1f}% of the {last.get('labelled_decisions', 0):,} "
             "labelled decisions.", "", "```", text(tree, Units(norm)), "```"]
    return "\n".join(lines)


__all__ = ["DEFAULT_TARGET", "Distilled", "distill", "export_tree", "labels_of", "tree_card"]
