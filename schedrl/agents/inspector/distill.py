"""`schedrl distill`: a trained inspector's accept/reject decisions as a small decision tree (`tree.py`).

DAgger on the policy's own training zone: round 0 schedules `windows` training windows with the policy and records,
at every point where a rejection is allowed, the observation and the policy's greedy decision; a tree is fitted to
them; each later round schedules fresh windows with the current tree (the states the tree visits, which the policy
alone would not reach) and labels them with the policy again; the tree is refitted on everything gathered. Only
training-zone jobs are read, so the scenario's validation and evaluation windows stay unseen.

The tree replaces the policy's network and nothing else: the base rule, the normalisation, the starvation guard and
the points where a rejection is allowed are the policy's (`InspectorPolicy`), so a tree runs wherever its policy
runs. It is exported as a zoo policy of the inspector (`export_tree`): policy.json holds it readable (thresholds on
named features) and weights.safetensors the same numbers as tensors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from schedrl.agents import cart
from schedrl.agents.cart import check_distillation
from schedrl.agents.inspector.policy import InspectorPolicy
from schedrl.agents.inspector.teacher import hindsight_label, label_weights
from schedrl.agents.inspector.tree import (NETWORK, DecisionTree, TreeError, Units, feature_names, fit,
                                           tree_network)
from schedrl.sim.simulator import Simulator



class _Labelling(InspectorPolicy):
    """The policy's network labels every decision where a rejection is allowed; the tree (once there is one) makes
    it. Counts the decisions where the two differ."""

    def __init__(self, policy: InspectorPolicy, tree: DecisionTree | None):
        super().__init__(policy.module, policy.env_config, policy.name)
        self.tree = tree
        self.features: list[np.ndarray] = []
        self.labels: list[bool] = []
        self.disagree = 0

    def label(self, features: np.ndarray) -> bool:
        """Whether the labeller rejects here: the policy's network."""
        return super().reject_logit(features) > 0.0

    def reject_logit(self, features: np.ndarray) -> float:
        labelled = self.label(features)
        self.features.append(np.array(features, np.float32))
        self.labels.append(labelled)
        if self.tree is None:
            return 1.0 if labelled else -1.0
        tree_rejects = self.tree.decide(features)
        self.disagree += int(tree_rejects != labelled)
        return 1.0 if tree_rejects else -1.0


class _Taught(_Labelling):
    """The hindsight teacher labels every decision where a rejection is allowed (`teacher.py`'s labels: reject where
    a rejection's finished sequence beats accepting, in hindsight, each weighed by the value gap); the policy's network
    is not asked. The tree (once there is one) makes the decision, as in `_Labelling`."""

    def __init__(self, policy: InspectorPolicy, tree: DecisionTree | None, depth: int):
        super().__init__(policy, tree)
        from schedrl.heuristics.hindsight import HindsightInspector

        self.teacher = HindsightInspector(policy.base_name, str(policy.env_config.get("metric", "bsld")), depth=depth)
        self.gaps: list[float] = []
        self._at: tuple[Simulator, int] | None = None

    def _propose(self, sim: Simulator) -> int:
        j = super()._propose(sim)
        self._at = (sim, j)
        return j

    def label(self, features: np.ndarray) -> bool:
        """Whether the teacher rejects here (`teacher.hindsight_label`), its gap kept as the label's weight."""
        values = self.teacher.option_values(*self._at)
        rejects, gap = hindsight_label(values)
        self.gaps.append(gap / max(abs(float(values[0])), 1e-9))
        return rejects


class _Acting(InspectorPolicy):
    """The tree alone decides (`refit_thresholds`' rollouts): nothing is labelled."""

    def __init__(self, policy: InspectorPolicy, tree: DecisionTree):
        super().__init__(policy.module, policy.env_config, policy.name)
        self.tree = tree

    def reject_logit(self, features: np.ndarray) -> float:
        return 1.0 if self.tree.decide(features) else -1.0


REFIT_CANDIDATES = 16
"""`refit_thresholds`: the thresholds tried per test, at evenly spaced quantiles of the labelled states reaching it."""


def refit_thresholds(tree: DecisionTree, policy: InspectorPolicy, x: np.ndarray, y: np.ndarray, w: np.ndarray,
                     windows: list, sim_config, metric: str, log: Callable[[str], None] = print) -> list[dict]:
    """Move each test's threshold (the root first) to where the tree's mean `metric` on `windows` is best, the
    leaves' decisions kept: the labels say which way a decision goes, the rollouts where the rule should switch (the
    teacher's labels put it 2-8 times too late on Lublin-1, docs/experiments/inspector-trusted.md). Candidates:
    `REFIT_CANDIDATES` quantiles of the labelled states `x` that reach the test, and its fitted threshold, which is
    kept on a tie. Every candidate is judged on the same windows. The leaves' statistics are recomputed from `x`, `y`,
    `w`. Returns one dict per test: its feature, the threshold before and after, and the means."""
    from schedrl.metrics import lower_is_better, summarize

    sign = 1.0 if lower_is_better(metric) else -1.0

    def score() -> float:
        acting = _Acting(policy, tree)
        return float(np.mean([summarize(Simulator(w_, sim_config).run(acting)).value(metric) for w_ in windows]))

    moved = []
    for node in range(len(tree.feature)):
        if tree.feature[node] == cart.LEAF:
            continue
        reach = np.array([any(n == node for n, _ in tree.path(row)) for row in x], bool)
        column = x[reach, tree.feature[node]] if reach.any() else x[:, tree.feature[node]]
        fitted = float(tree.threshold[node])
        candidates = np.unique(np.concatenate([[fitted], np.quantile(column, np.linspace(0.0, 1.0, REFIT_CANDIDATES))
                                               .astype(np.float32)]))
        means = {}
        for c in candidates:
            tree.threshold[node] = c
            means[float(c)] = score()
        best = min(means, key=lambda c: (sign * means[c], c != fitted))
        tree.threshold[node] = best
        moved.append({"node": node, "feature": tree.features[tree.feature[node]], "fitted": fitted, "chosen": best,
                      f"mean_{metric}_fitted": means[fitted], f"mean_{metric}_chosen": means[best],
                      "candidates": len(candidates)})
        log(f"distill refit: test {node} on {tree.features[tree.feature[node]]}: {len(candidates)} thresholds on "
            f"{len(windows)} windows; {metric} {means[fitted]:.2f} at the fitted one, {means[best]:.2f} at the chosen")
    _restat(tree, x, y, w)
    return moved


def _restat(tree: DecisionTree, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
    """Each node's `samples` (labelled states reaching it) and `reject_share` (their weighted share of rejections),
    recomputed after its thresholds moved."""
    samples = np.zeros(len(tree.feature))
    rejected = np.zeros(len(tree.feature))
    total = np.zeros(len(tree.feature))
    for row, label, weight in zip(x, y, w):
        for node in [n for n, _ in tree.path(row)] + [tree.leaf_of(row)]:
            samples[node] += 1.0
            total[node] += weight
            rejected[node] += weight * float(label)
    tree.samples[:] = samples
    tree.reject_share[:] = np.divide(rejected, total, out=np.zeros_like(total), where=total > 0)


@dataclass
class Distilled:
    """A fitted tree with how it was made: `rounds` (one dict per DAgger round), the training zone it read, the
    policy's time scale (`units`, to print thresholds in seconds)."""

    tree: DecisionTree
    depth: int
    units: Units
    rounds: list[dict[str, Any]] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        return self.tree.text(self.units, labeller(self.source))


def check_distillable(policy) -> None:
    """TreeError (one line) for an inspector policy this cannot distil (a tree already). Which agents can be distilled
    at all is the `Distillable` capability's question, asked by `schedrl distill` (cli/distill.py)."""
    cart.check_distillable(policy, InspectorPolicy, NETWORK, "inspector: only an inspector's accept/reject "
                           "(`schedrl train inspector`) can be distilled into a tree")


def distill(policy: InspectorPolicy, depth: int = 6, rounds: int = 4, windows: int = 8, jobs: int | None = None,
            seed: int = 0, min_leaf: int = 5, log: Callable[[str], None] = print, teacher_depth: int = 0,
            guard: Mapping[str, Any] | None = None, allowed: Sequence[str] | None = None,
            base: str | None = None, refit_windows: int = 0) -> Distilled:
    """DAgger of `policy`'s decisions into a tree of at most `depth` levels (see the module).

    `teacher_depth` > 0: the hindsight teacher of that depth labels the decisions instead of the policy's network
    (balanced by their value gaps, as `teacher.py` weighs them), so the tree learns the teacher; the policy gives only
    the frame (base rule, normalisation, semantics, training zone). `guard`: env config values that replace the
    policy's where a rejection is allowed (`starvation_wait`, `reject_where`), for the labelling, the tree and its
    export. `allowed`: the only features the tree may test (None: all). `base`: the rule whose proposals the tree
    judges instead of the policy's (a heuristic's name or `tuned:FILE`), for the labelling, the tree and its export.
    `refit_windows` > 0: after the last round, each test's threshold is chosen by the tree's mean on that many fresh
    training windows (`refit_thresholds`)."""
    from schedrl.agents.inspector.config import InspectorEnvConfig
    from schedrl.agents.inspector.teacher import sources
    from schedrl.metrics import summarize
    from schedrl.zoo.card import machine_of

    check_distillable(policy)
    guard = dict(guard or {})
    unknown = sorted(set(guard) - set(GUARD_KEYS))
    if unknown:
        raise TreeError(f"distill can change only {', '.join(GUARD_KEYS)} of the policy's env config; got "
                        f"{', '.join(unknown)}")
    if guard:
        policy = _guarded(policy, guard)
    if base is not None:
        base = _checked_base(base)
        policy = policy.with_base(base)
    if not 0 <= teacher_depth <= MAX_TEACHER_DEPTH:
        raise TreeError(f"--teacher-depth must be in 1..{MAX_TEACHER_DEPTH}; got {teacher_depth}")
    check_distillation(depth, rounds, windows)
    if not 0 <= refit_windows <= MAX_REFIT_WINDOWS:
        raise TreeError(f"--refit-windows must be in 0..{MAX_REFIT_WINDOWS} (0: the fitted thresholds); got {refit_windows}")
    cfg = InspectorEnvConfig.from_dict(dict(policy.env_config))
    own = sources(cfg)[0]
    length = min(int(jobs or cfg.sequence_length), own.hi - own.lo)
    if length < 2:
        raise TreeError(f"{policy.name}'s training zone of {cfg.trace} holds {own.hi - own.lo} jobs: nothing to label")
    names = feature_names(cfg.history_features)
    rng = np.random.default_rng(seed)
    features: list[np.ndarray] = []
    labels: list[bool] = []
    tree: DecisionTree | None = None
    out = Distilled(tree=None, depth=depth, units=Units(float(policy.norm.time_scale)),  # type: ignore[arg-type]
                    source={"trace": cfg.trace, "training_zone": [int(own.lo), int(own.hi)], "jobs": length,
                            "windows": windows, "rounds": rounds, "seed": seed, "min_leaf": min_leaf,
                            **({"teacher": f"hindsight depth {teacher_depth}"} if teacher_depth else {}),
                            **({"guard": guard} if guard else {}),
                            **({"base": base} if base is not None else {}),
                            **({"refit_windows": refit_windows} if refit_windows else {}),
                            **({"features": list(allowed)} if allowed is not None else {})})
    gaps: list[float] = []
    labeller = "the teacher" if teacher_depth else "the policy"
    t0 = time.perf_counter()
    metric = cfg.metric
    for r in range(rounds):
        labelling = _Taught(policy, tree, teacher_depth) if teacher_depth else _Labelling(policy, tree)
        values = []
        for _ in range(windows):
            _, window = own.window(rng, length)
            sim = Simulator(window, own.sim_config)
            out.source.setdefault("machine", machine_of(sim))
            values.append(summarize(sim.run(labelling)).value(metric))
        features += labelling.features
        labels += labelling.labels
        gaps += getattr(labelling, "gaps", [])
        if not features:
            raise TreeError(f"{policy.name} met no decision where a rejection is allowed on {windows} training "
                            f"windows of {length} jobs: nothing to distil")
        x, y = np.stack(features), np.asarray(labels)
        weights = label_weights(y.astype(np.int64), np.asarray(gaps)) if teacher_depth else None
        tree = fit(x, y.astype(np.float64), names, depth, weights=weights, min_leaf=min_leaf, allowed=allowed)
        agree = float(np.mean([tree.decide(row) == label for row, label in zip(x, y)]))
        row = {"round": r, "acting": "policy" if r == 0 else "tree", "decisions": len(labelling.labels),
               "labelled": len(labels), "policy_rejects": float(np.mean(labelling.labels)) if labelling.labels else 0.0,
               "disagreed": labelling.disagree if r else 0, "fit_agreement": agree, "depth": tree.depth,
               "leaves": tree.leaves, f"mean_{metric}": float(np.mean(values)),
               "seconds": time.perf_counter() - t0}
        out.rounds.append(row)
        acted = labeller if r == 0 else f"the tree ({labelling.disagree} of {len(labelling.labels)} decisions " \
                                        f"unlike {labeller}'s)"
        log(f"distill round {r + 1}/{rounds}: {len(labelling.labels):,} decisions labelled by {labeller} with {acted} "
            f"acting ({len(labels):,} in all, {100 * row['policy_rejects']:.1f}% rejected by {labeller}); tree depth "
            f"{tree.depth}, {tree.leaves} leaves, agrees on {100 * agree:.1f}% of them; {metric} "
            f"{row[f'mean_{metric}']:.2f} on the round's {windows} windows; {row['seconds']:.0f} s")
    if refit_windows:
        drawn = [own.window(rng, length)[1] for _ in range(refit_windows)]
        out.source["refit"] = refit_thresholds(tree, policy, x, y.astype(np.float64),
                                               np.ones(len(y)) if weights is None else weights, drawn,
                                               own.sim_config, metric, log)
    out.tree = tree
    return out


def labeller(source: Mapping[str, Any]) -> str:
    """Who labelled a tree's decisions, as its leaves say it (`distilled_from` / `Distilled.source`): the policy, or
    the hindsight teacher, whose labels are weighed by their value gaps."""
    return f"the {source['teacher']} teacher (weighed by value gaps)" if source.get("teacher") else "the policy"


GUARD_KEYS = ("starvation_wait", "queue_starvation_wait", "reject_where")
"""The env config values `distill(guard=...)` may replace: where a rejection is allowed."""
MAX_REFIT_WINDOWS = 1000
"""`--refit-windows`' largest value (as `--windows`')."""
MAX_TEACHER_DEPTH = 8
"""The hindsight teacher's largest depth (`heuristics.hindsight.MAX_DEPTH`)."""


def _checked_base(base: str) -> str:
    """`base` as the policy's env config keeps it: a heuristic's name, or `tuned:FILE` with FILE made absolute (the
    export names the file it runs). ValueError (one line) for a rule that cannot be made, as `make_base` says it."""
    from pathlib import Path

    from schedrl.heuristics.hindsight import TUNED_PREFIX, make_base

    make_base(base)
    if base.startswith(TUNED_PREFIX):
        return TUNED_PREFIX + str(Path(base[len(TUNED_PREFIX):]).expanduser().resolve())
    return base.lower()


def _guarded(policy: InspectorPolicy, guard: Mapping[str, Any]) -> InspectorPolicy:
    """`policy` with `guard`'s values in its env config (its record's too, so the export keeps them)."""
    from dataclasses import replace

    from schedrl.agents.inspector.mask import RejectMask

    env = {**policy.env_config, **guard}
    RejectMask.of(env)  # ValueError (one line) on a reject_where it does not know
    out = InspectorPolicy(policy.module, env, policy.name)
    out.record = replace(policy.record, env_config=env)
    return out


def export_tree(distilled: Distilled, policy, out_dir: str | Path, name: str, command: list[str],
                source: str | None = None, judge=None):
    """Write the tree as an exported inspector policy (`schedrl.zoo.store`): the policy's run record with the tree's
    model and command, the readable tree as its architecture, its arrays as the weights. The export runs the tree
    loaded back from those files and checks it decides as the fitted one on the labelled states. Returns the
    `Exported`."""
    import torch

    from schedrl.agents.checkpoint import load_exported
    from schedrl.zoo import card, store

    tree = distilled.tree
    if distilled.source.get("guard"):
        policy = _guarded(policy, distilled.source["guard"])
    if distilled.source.get("base"):
        policy = policy.with_base(distilled.source["base"])
    record = policy.record.to_dict()
    record = {**record, "model": f"tree-d{distilled.depth}", "command": list(command)}
    record.pop("train_args", None)
    architecture = {**tree.architecture(),
                    "distilled_from": {"policy": source or policy.name, **distilled.source, "dagger": distilled.rounds}}
    tensors = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in tree.arrays().items()}
    validation = cart.card_validation(policy.record, InspectorPolicy(tree_network(tree.architecture()),
                                                                     policy.record.env_config), judge)
    fields = card.make(record, machine=dict(distilled.source.get("machine") or {}), validation=validation,
                       budget={"iterations": len(distilled.rounds), "env_steps": None,
                               "seconds": distilled.rounds[-1]["seconds"] if distilled.rounds else None},
                       precision={"stored": "fp32", "why": "a tree's thresholds are kept as fitted (float32)"})
    exported = store.write(out_dir, name, record, architecture, tensors, fields)
    loaded = load_exported(exported.directory)
    units = Units(float(loaded.norm.time_scale))
    if tree.text(units) != loaded.module.tree.text(units):
        raise TreeError(f"{exported.policy_file}: the tree read back differs from the one fitted")
    return exported


def guard_text(env_config: Mapping[str, Any]) -> str:
    """The card's sentence on where the tree may reject (its starvation guard and mask), empty for none."""
    from schedrl.agents.inspector.tree import duration

    wait, where = float(env_config.get("starvation_wait") or 0.0), env_config.get("reject_where") or "any"
    said = [f"a proposal that has waited {duration(wait)} is always accepted"] if wait > 0 else []
    queue = float(env_config.get("queue_starvation_wait") or 0.0)
    said += [f"nothing is rejected while a waiting job has waited {duration(queue)}"] if queue > 0 else []
    said += [f"rejections only where `{where}` allows them"] if where != "any" else []
    return f" Guard: {'; '.join(said)}." if said else ""


def refit_text(source: Mapping[str, Any]) -> str:
    """The card's sentence on a refit (`--refit-windows`): its thresholds are the rollouts', not the fit's (the
    agreement above is the fit's, before they moved)."""
    if not source.get("refit"):
        return ""
    return (f" Its thresholds were then chosen by the tree's mean on {source.get('refit_windows')} fresh training "
            f"windows ({len(source['refit'])} test(s); the agreement above is the fitted tree's).")


def tree_card(exported) -> str | None:
    """What `schedrl zoo show` prints of an exported tree (None for a trained network): where it came from and the
    tree as nested if/else lines in its features' units."""
    arch = exported.architecture
    if arch.get("network") != NETWORK:
        return None
    tree = DecisionTree.from_dict(arch.get("tree"), arch.get("features") or [], str(exported.policy_file))
    norm = (exported.record.get("env_config") or {}).get("norm") or {}
    source = arch.get("distilled_from") or {}
    last = (source.get("dagger") or [{}])[-1]
    lines = ["## The tree", "",
             (f"Taught by the {source['teacher']} teacher in the frame of `{source.get('policy', '?')}` (its base rule, "
              "normalisation and semantics; its network not asked)" if source.get("teacher") else
              f"Distilled from `{source.get('policy', '?')}`") +
             f" by DAgger ({len(source.get('dagger') or [])} rounds of "
             f"{source.get('windows')} windows of {source.get('jobs')} jobs from {source.get('trace')}'s training "
             f"zone): depth {tree.depth}, {tree.leaves} leaves; it decided like {labeller(source)} on "
             f"{100 * last.get('fit_agreement', float('nan')):.1f}% of the {last.get('labelled', 0):,} labelled "
             "decisions. A proposal is the base rule's; the tree is asked only where a rejection is allowed (an event "
             "to wait for, the starvation guard not reached)." + refit_text(source) +
             guard_text(exported.record.get("env_config") or {}),
             "", "```", tree.text(Units(float(norm.get("time_scale", 1.0))), labeller(source)), "```"]
    return "\n".join(lines)
