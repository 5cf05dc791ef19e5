"""CART in numpy, shared by the agents' readable trees (`schedrl distill`): the split search and a regression tree.

`best_split` is the one split search: for each allowed feature, the threshold (halfway between neighbouring values,
in float32 as observations are) that lowers a weighted impurity most. The inspector's accept/reject tree
(`inspector/tree.py`) calls it with the Gini impurity; `fit_regression` with the variance, to grow a `RegressionTree`
whose leaves hold a value (the RLScheduler kernel's score of a job: `rlscheduler/distill.py`).

A `RegressionTree` has the node format of the inspector's tree (arrays, node 0 the root; an inner node sends an input
left where `feature <= threshold`), the same nested readable form (`{"if": {"feature", "above"}, "then", "else"}`)
with a leaf `{"value", "samples"}` in place of `{"decide"}`, the same validation of a hand-edited file (`TreeError`,
one line naming the node's path) and the same printing: a `condition(name, threshold, above)` in the features' units
(the inspector's `Units.condition` has that signature).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

LEAF = -1
"""`feature` of a leaf."""
MAX_DEPTH = 12
"""Deepest tree a fit grows (past 12 a tree is no longer read)."""


class TreeError(ValueError):
    """A tree that cannot be used (one line, naming where)."""


def best_split(x: np.ndarray, y: np.ndarray, w: np.ndarray, min_leaf: int, columns: np.ndarray | None,
               impurity: Callable[[Any, Any, Any], Any]) -> tuple[int, float] | None:
    """(feature, threshold) of the split of `x` that lowers `impurity(sum w*y, sum w, sum w*y*y)` (weighted by each
    side's weight) most, each side at least `min_leaf` rows; None where none lowers it."""
    wy = w * y
    total_w, total_r, total_q = w.sum(), wy.sum(), (wy * y).sum()
    parent = impurity(total_r, total_w, total_q)
    best, gain_best = None, 1e-12
    n = len(y)
    for f in (range(x.shape[1]) if columns is None else columns):
        f = int(f)
        order = np.argsort(x[:, f], kind="stable")
        v = x[order, f]
        cw, cr, cq = np.cumsum(w[order]), np.cumsum(wy[order]), np.cumsum((wy * y)[order])
        # split after position i (left: 0..i) where the value changes, each side at least min_leaf rows
        cut = np.flatnonzero(v[:-1] < v[1:])
        cut = cut[(cut + 1 >= min_leaf) & (n - cut - 1 >= min_leaf)]
        if not cut.size:
            continue
        lw, lr, lq = cw[cut], cr[cut], cq[cut]
        rw, rr, rq = total_w - lw, total_r - lr, total_q - lq
        child = (lw * impurity(lr, lw, lq) + rw * impurity(rr, rw, rq)) / total_w
        k = int(np.argmin(child))
        gain = parent - child[k]
        if gain > gain_best:
            i = cut[k]
            threshold = np.float32((np.float64(v[i]) + np.float64(v[i + 1])) / 2.0)
            if not threshold < v[i + 1]:  # halfway rounds up to the right value in float32: keep it left
                threshold = v[i]
            gain_best, best = gain, (f, float(threshold))
    return best


def variance(sum_wy, sum_w, sum_wyy):
    """Weighted variance of the labels from their sums (0 where the weight is 0)."""
    sum_w = np.asarray(sum_w, np.float64)
    mean = np.divide(sum_wy, sum_w, out=np.zeros_like(sum_w), where=sum_w > 0)
    second = np.divide(sum_wyy, sum_w, out=np.zeros_like(sum_w), where=sum_w > 0)
    return np.maximum(second - mean * mean, 0.0)


def reachable(rows: list[list[Any]]) -> list[int]:
    """The nodes reachable from the root of a tree being built (rows: feature, threshold, left, right, ...)."""
    out, stack = [], [0]
    while stack:
        node = stack.pop()
        out.append(node)
        if rows[node][0] != LEAF:
            stack += [rows[node][3], rows[node][2]]
    return sorted(out)


def grow(x: np.ndarray, depth: int, min_leaf: int, leaf: Callable[[np.ndarray], list[Any]],
         pure: Callable[[np.ndarray], bool], split: Callable[[np.ndarray], tuple[int, float] | None]) -> list[list[Any]]:
    """The rows of a tree grown top-down over `x`'s rows: each node `[feature, threshold, left, right, *leaf(idx)]`
    (LEAF until split), split by `split(idx)` (a feature and threshold, or None) unless it is at `depth`, holds fewer
    than 2 x `min_leaf` rows or is `pure(idx)`. Both trees of schedrl grow this way."""
    rows: list[list[Any]] = []

    def node_of(idx: np.ndarray, level: int) -> int:
        node = len(rows)
        rows.append([LEAF, 0.0, -1, -1, *leaf(idx)])
        if level >= depth or len(idx) < 2 * min_leaf or pure(idx):
            return node
        best = split(idx)
        if best is None:
            return node
        f, threshold = best
        go_right = x[idx, f] > threshold
        rows[node][0], rows[node][1] = f, threshold
        rows[node][2] = node_of(idx[~go_right], level + 1)
        rows[node][3] = node_of(idx[go_right], level + 1)
        return node

    node_of(np.arange(len(x)), 0)
    return rows


def columns_of(rows: list[list[Any]]) -> list[list[Any]]:
    """The reachable rows' fields as columns, children renumbered to the kept rows (-1: none)."""
    keep = reachable(rows)
    renumber = {old: new for new, old in enumerate(keep)}
    cols = [[rows[i][k] for i in keep] for k in range(len(rows[0]))]
    cols[2] = [renumber.get(c, -1) for c in cols[2]]
    cols[3] = [renumber.get(c, -1) for c in cols[3]]
    return cols


MAX_ROUNDS, MAX_WINDOWS = 50, 1000
"""Bounds on a distillation's DAgger rounds and windows a round (each window is a whole simulation per round)."""


def check_distillation(depth: int, rounds: int, windows: int) -> None:
    """TreeError (one line naming the option) for a depth, round count or window count out of its range."""
    for name, value, top in (("depth", depth, MAX_DEPTH), ("rounds", rounds, MAX_ROUNDS),
                             ("windows", windows, MAX_WINDOWS)):
        if not 1 <= value <= top:
            raise TreeError(f"--{name} must be in 1..{top}; got {value}")


def check_distillable(policy, kind: type, network: str, refusal: str) -> None:
    """TreeError (one line) where `policy` cannot be distilled: not a trained `kind` policy (`refusal` says what can
    be), or a tree already (its architecture's network is `network`)."""
    if not isinstance(policy, kind) or getattr(policy, "record", None) is None:
        raise TreeError(f"{getattr(policy, 'name', policy)!r} is not a trained {refusal}")
    if getattr(policy.module, "architecture", {}).get("network") == network:
        raise TreeError(f"{policy.name} is a distilled tree already: distil the policy it came from")


def card_validation(record, scored, judge) -> dict[str, Any]:
    """A tree's card validation: `scored` (the tree as its agent's policy) on its policy's run's validation sequences
    (where the run had them and a `judge` of its env config is given), beside the heuristics' values the run
    recorded there."""
    from schedrl.metrics import lower_is_better

    metric = record.env_config.get("metric", "bsld")
    val = dict(record.validation)
    out = {"metric": metric, "score": None, "per_sequence": [], "sequences": 0, "length": val.get("length"),
           "lower_is_better": lower_is_better(metric), "heuristics": val.get("heuristics") or {}}
    if not val.get("starts") or judge is None:
        return out
    values = judge.score_policy(scored, judge.load(), list(val["starts"]), int(val["length"]))
    return {**out, "score": float(np.mean(values)), "per_sequence": [float(v) for v in values],
            "sequences": len(values)}


def tree_module(tree: "Nodes", architecture: Mapping[str, Any], where: str):
    """The torch module class a tree runs as in place of a network (both agents' `tree_network` subclass it with
    their network's interface): the readable architecture and the tree kept, the tree's arrays as its state (the
    thresholds the one parameter, which `parameters()` and the device are read from; the rest buffers), and a
    `load_state_dict` that refuses weights disagreeing with the readable tree (`TreeError` naming `where`)."""
    import torch
    from torch import nn

    class TreeModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.architecture = dict(architecture)
            self.tree = tree
            arrays = tree.arrays()
            self.threshold = nn.Parameter(torch.from_numpy(arrays.pop("threshold").copy()), requires_grad=False)
            for key, value in arrays.items():
                self.register_buffer(key, torch.from_numpy(value.copy()))

        def load_state_dict(self, state, strict: bool = True, assign: bool = False):
            result = super().load_state_dict(state, strict=strict, assign=assign)
            differs = tree.differs_from({k: v.detach().cpu().numpy() for k, v in self.state_dict().items()})
            if differs:
                raise TreeError(f"{where}: the weights file and the readable tree disagree ({differs}); export the "
                                "tree again (`schedrl distill`)")
            return result

    return TreeModule


def _finite(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


class Nodes:
    """The walk over a tree's node arrays (`feature`, `threshold`, `left`, `right`; node 0 the root, `LEAF` for a
    leaf's feature), shared by every tree of schedrl (the inspector's `DecisionTree`, `RegressionTree`)."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray

    def leaf_of(self, x: np.ndarray) -> int:
        node = 0
        while self.feature[node] != LEAF:
            node = int(self.left[node] if x[self.feature[node]] <= self.threshold[node] else self.right[node])
        return node

    def path(self, x: np.ndarray) -> list[tuple[int, bool]]:
        """The inner nodes one input passes, each with whether it went right (its feature above the threshold)."""
        node, out = 0, []
        while self.feature[node] != LEAF:
            above = bool(x[self.feature[node]] > self.threshold[node])
            out.append((node, above))
            node = int(self.right[node] if above else self.left[node])
        return out

    @property
    def depth(self) -> int:
        def down(node: int) -> int:
            return 0 if self.feature[node] == LEAF else 1 + max(down(self.left[node]), down(self.right[node]))
        return down(0)

    @property
    def leaves(self) -> int:
        return int(np.sum(self.feature == LEAF))


@dataclass(frozen=True)
class RegressionTree(Nodes):
    """Nodes in arrays, node 0 the root: `feature` (index into `features`, `LEAF` for a leaf), `threshold`, `left`
    and `right` children, `value` (a leaf's prediction: the weighted mean of the labels that reached it; an inner
    node's too, for reading) and `samples` (rows that reached the node)."""

    features: tuple[str, ...]
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    samples: np.ndarray

    # ------------------------------------------------------------------ predicting
    def predict(self, x: np.ndarray) -> np.ndarray:
        """The leaf value of each row of `x` (rows x features), all rows at once."""
        x = np.asarray(x, np.float32)
        node = np.zeros(len(x), np.int64)
        for _ in range(MAX_DEPTH + 1):
            inner = self.feature[node] != LEAF
            if not inner.any():
                break
            at = node[inner]
            above = x[np.flatnonzero(inner), self.feature[at]] > self.threshold[at]
            node[inner] = np.where(above, self.right[at], self.left[at])
        return self.value[node].astype(np.float64)

    # ------------------------------------------------------------------ readable form
    def to_dict(self, node: int = 0) -> dict[str, Any]:
        """Nested: `{"if": {"feature", "above"}, "then": ..., "else": ...}` (then: the feature above the threshold)
        or a leaf `{"value", "samples"}`."""
        value, samples = float(self.value[node]), round(float(self.samples[node]), 6)
        if self.feature[node] == LEAF:
            return {"value": value, "samples": samples}
        return {"if": {"feature": self.features[self.feature[node]], "above": float(self.threshold[node])},
                "then": self.to_dict(int(self.right[node])), "else": self.to_dict(int(self.left[node])),
                "samples": samples}

    @classmethod
    def from_dict(cls, tree: Any, features: Sequence[str], where: str = "the tree") -> "RegressionTree":
        """The tree `to_dict` wrote; TreeError naming the node's path for anything else (a hand edit gone wrong)."""
        names = tuple(features)
        rows: list[list[Any]] = []

        def add(node: Any, at: str) -> int:
            if not isinstance(node, Mapping):
                raise TreeError(f"{where}: {at} is {type(node).__name__}, not a node (an object with if/then/else or "
                                "value)")
            if len(rows) > 2 ** (MAX_DEPTH + 1):
                raise TreeError(f"{where}: more than {2 ** (MAX_DEPTH + 1)} nodes (deeper than {MAX_DEPTH})")
            samples = node.get("samples", 0.0)
            if not _finite(samples) or samples < 0:
                raise TreeError(f"{where}: {at}.samples must be a finite number >= 0, got {samples!r}")
            index = len(rows)
            rows.append([LEAF, 0.0, -1, -1, 0.0, float(samples)])
            if "value" in node:
                extra = set(node) - {"value", "samples"}
                if extra or not _finite(node["value"]):
                    raise TreeError(f"{where}: {at} is a leaf: value must be a finite number and nothing else may be "
                                    f"set (got value={node['value']!r}"
                                    f"{', ' + ', '.join(sorted(extra)) if extra else ''})")
                rows[index][4] = float(node["value"])
                return index
            test = node.get("if")
            if not isinstance(test, Mapping) or set(test) != {"feature", "above"} or "then" not in node \
                    or "else" not in node or set(node) - {"if", "then", "else", "samples"}:
                raise TreeError(f"{where}: {at} must be a leaf {{value: ...}} or a test {{if: {{feature, above}}, "
                                "then, else}}")
            if test["feature"] not in names:
                raise TreeError(f"{where}: {at}.if.feature {test['feature']!r} is not one of the policy's features "
                                f"({', '.join(names)})")
            if not _finite(test["above"]):
                raise TreeError(f"{where}: {at}.if.above must be a finite number, got {test['above']!r}")
            rows[index][0], rows[index][1] = names.index(test["feature"]), float(test["above"])
            rows[index][2] = add(node["else"], f"{at}.else")  # below or at the threshold: numbered first, as a fit
            rows[index][3] = add(node["then"], f"{at}.then")
            return index

        add(tree, "root")
        out = cls._of(names, *zip(*rows))
        for node in range(len(out.feature)):  # an inner node's value: its leaves' mean by samples, for reading
            if out.feature[node] != LEAF:
                out.value[node] = _mean_below(out, node)
        return out

    @classmethod
    def _of(cls, names, feature, threshold, left, right, value, samples) -> "RegressionTree":
        return cls(tuple(names), np.asarray(feature, np.int64), np.asarray(threshold, np.float32),
                   np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(value, np.float32),
                   np.asarray(samples, np.float64))

    # ------------------------------------------------------------------ as tensors (weights.safetensors)
    def arrays(self) -> dict[str, np.ndarray]:
        """What an exported tree's weights file holds (a prediction needs these; `samples` is for reading)."""
        return {"feature": self.feature, "threshold": self.threshold, "left": self.left, "right": self.right,
                "value": self.value}

    def differs_from(self, arrays: Mapping[str, np.ndarray]) -> str | None:
        """Where `arrays` (a weights file's) predict otherwise than this tree; None where they agree."""
        for key, own in self.arrays().items():
            other = np.asarray(arrays.get(key, np.empty(0)))
            if other.shape != own.shape:
                return f"{key} has {other.size} entries, the readable tree {own.size}"
            if key == "value":  # inner nodes' values are for reading: only the leaves predict
                other, own = other[self.feature == LEAF], own[self.feature == LEAF]
            bad = np.flatnonzero(other.astype(own.dtype) != own)
            if bad.size:
                return f"{key} of node {int(bad[0])} is {other[bad[0]]!r}, the readable tree's {own[bad[0]]!r}"
        return None

    # ------------------------------------------------------------------ for people
    def text(self, condition: Callable[[str, float, bool], str], leaf: Callable[[int], str]) -> str:
        """Nested if/else lines: each test `condition(feature name, threshold, above)` (in the feature's unit), each
        leaf `leaf(node)`."""
        lines: list[str] = []

        def show(node: int, indent: str) -> None:
            if self.feature[node] == LEAF:
                lines.append(f"{indent}-> {leaf(node)}")
                return
            name, t = self.features[self.feature[node]], float(self.threshold[node])
            lines.append(f"{indent}if {condition(name, t, True)}:")
            show(int(self.right[node]), indent + "    ")
            lines.append(f"{indent}else ({condition(name, t, False)}):")
            show(int(self.left[node]), indent + "    ")

        show(0, "")
        return "\n".join(lines)


def _mean_below(tree: RegressionTree, node: int) -> float:
    if tree.feature[node] == LEAF:
        return float(tree.value[node])
    a, b = int(tree.left[node]), int(tree.right[node])
    wa, wb = float(tree.samples[a]), float(tree.samples[b])
    if wa + wb <= 0:
        return (_mean_below(tree, a) + _mean_below(tree, b)) / 2.0
    return (wa * _mean_below(tree, a) + wb * _mean_below(tree, b)) / (wa + wb)


def fit_regression(x: np.ndarray, y: np.ndarray, features: Sequence[str], depth: int,
                   weights: np.ndarray | None = None, min_leaf: int = 5) -> RegressionTree:
    """A tree of at most `depth` levels splitting `x` (rows x features) to predict `y`, each split the one that lowers
    the weighted variance of `y` most (`best_split`); a leaf predicts the weighted mean of its rows' labels."""
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 1 <= depth <= MAX_DEPTH:
        raise TreeError(f"a tree's depth must be in 1..{MAX_DEPTH}; got {depth}")
    x = np.asarray(x, np.float32)
    y = np.asarray(y, np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, np.float64)
    if x.ndim != 2 or x.shape[1] != len(features) or len(y) != len(x) or len(w) != len(x) or not len(y):
        raise TreeError(f"fit needs rows x {len(features)} features with one label and weight each; got "
                        f"{x.shape}, {len(y)} labels, {len(w)} weights")
    if not (np.isfinite(x).all() and np.isfinite(y).all() and np.isfinite(w).all() and (w >= 0).all()):
        raise TreeError("fit needs finite features and labels and weights >= 0")
    def leaf(idx: np.ndarray) -> list[Any]:
        total = float(w[idx].sum())
        return [float((w[idx] * y[idx]).sum() / total) if total > 0 else float(y[idx].mean()), float(len(idx))]

    rows = grow(x, depth, min_leaf, leaf, lambda idx: np.ptp(y[idx]) == 0,
                lambda idx: best_split(x[idx], y[idx], w[idx], min_leaf, None, variance))
    cols = columns_of(rows)
    return RegressionTree._of(tuple(features), *cols)
