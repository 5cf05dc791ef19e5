"""A decision tree over the inspector's features: a learned accept/reject rule an admin can read (`schedrl distill`).

`DecisionTree` is a binary tree of thresholds on the observation's named features (`observation.FEATURES`): an inner
node sends a decision left where `feature <= threshold` and right otherwise; a leaf accepts or rejects the base
rule's proposal. `fit` grows one by CART (Gini impurity, weighted), ours in numpy: the tree is a few hundred numbers
and is evaluated by this module's code, so no estimator is pickled and no learning library is needed to load one.

Its readable form (`to_dict`, nested `if`/`then`/`else` on feature names) is what an exported tree's policy.json
holds; `TreeNetwork` is the same tree as tensors (weights.safetensors), loaded in place of the inspector's network,
and refuses a file whose two forms disagree. `text` prints it with each threshold in the feature's unit ("the
proposal's requested time > 2 h 10 min"); `path` says which tests decided one observation, with its values (the
Slurm adapter's explanations).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedrl.agents.cart import LEAF, MAX_DEPTH, Nodes, TreeError, best_split, columns_of, grow, tree_module
from schedrl.duration import format_duration as duration
from schedrl.agents.inspector.observation import BSLD_FLOOR, FEATURES, HISTORY_FEATURES, QUEUE_SCALE

NETWORK = "inspector-tree"
"""The `network` label of an exported tree's architecture."""
REJECT, ACCEPT = "reject", "accept"

# what each feature is, for people: (kind, wording); the kind says how a threshold maps back to a unit
_TIME, _SHARE, _QUEUE_SHARE, _COUNT, _FLAG, _DEMAND, _GROWTH = "time", "share", "queue share", "count", "flag", \
    "demand", "growth"
MEANINGS: dict[str, tuple[str, str]] = {
    "wait": (_TIME, "the proposal's wait so far"),
    "requested_time": (_TIME, "the proposal's requested time"),
    "requested_share": (_SHARE, "the proposal's share of the machine"),
    "fits_now": (_FLAG, "the proposal fits now"),
    "start_if_held": (_TIME, "time until the proposal could start (by requested times)"),
    "queue_length": (_COUNT, "queued jobs"),
    "queued_demand": (_DEMAND, "the queue's demand, in machines"),
    "mean_requested_time": (_TIME, "the queue's mean requested time (log-mean)"),
    "shortest_requested_time": (_TIME, "the queue's shortest requested time"),
    "longest_wait": (_TIME, "the queue's longest wait"),
    "bsld_growth": (_GROWTH, "the queue's bounded slowdown growth, per hour"),
    "others_fitting": (_QUEUE_SHARE, "share of the other queued jobs that fit now"),
    "others_shorter": (_QUEUE_SHARE, "share of the other queued jobs shorter than the proposal"),
    "free_share": (_SHARE, "free share of the machine"),
    "running": (_COUNT, "running jobs"),
    **{name: (_SHARE, f"share of the machine the running jobs release within {name[9:-1]} min (by requested times)")
       for name in FEATURES if name.startswith("released_")},
    "mean_remaining": (_TIME, "the running jobs' remaining requested time (log-mean, by size)"),
    "since_last_arrival": (_TIME, "time since the last arrival"),
    "arrivals_10m": (_COUNT, "arrivals in the last 10 minutes"),
    "arrivals_1h": (_COUNT, "arrivals in the last hour"),
    "recent_requested_time": (_TIME, "recent arrivals' requested time (log-mean)"),
    "recent_requested_share": (_SHARE, "recent arrivals' mean share of the machine"),
    "recent_smaller_share": (_QUEUE_SHARE, "share of recent arrivals smaller than the proposal"),
}
"""Every observation feature's unit kind and wording (`tests/agents/inspector/test_tree.py` checks all are here)."""


@dataclass(frozen=True)
class DecisionTree(Nodes):
    """Nodes in arrays, node 0 the root: `feature` (index into `features`, `LEAF` for a leaf), `threshold`, `left`
    and `right` children, `reject` (the leaf's decision; an inner node's majority), `samples` and `reject_share` (of
    the labelled decisions that reached the node, weighted)."""

    features: tuple[str, ...]
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    reject: np.ndarray
    samples: np.ndarray
    reject_share: np.ndarray

    # ------------------------------------------------------------------ deciding (the walk: `cart.Nodes`)
    def decide(self, x: np.ndarray) -> bool:
        """True: reject."""
        return bool(self.reject[self.leaf_of(x)])

    # ------------------------------------------------------------------ readable form
    def to_dict(self, node: int = 0) -> dict[str, Any]:
        """Nested: `{"if": {"feature", "above"}, "then": ..., "else": ...}` (then: the feature above the threshold)
        or a leaf `{"decide": accept|reject, "samples", "reject_share"}`."""
        stats = {"samples": round(float(self.samples[node]), 6), "reject_share": round(float(self.reject_share[node]), 6)}
        if self.feature[node] == LEAF:
            return {"decide": REJECT if self.reject[node] else ACCEPT, **stats}
        return {"if": {"feature": self.features[self.feature[node]], "above": float(self.threshold[node])},
                "then": self.to_dict(int(self.right[node])), "else": self.to_dict(int(self.left[node])), **stats}

    def architecture(self) -> dict[str, Any]:
        """The exported architecture of this tree (what `tree_network` builds the inspector's `pi` from)."""
        return {"network": NETWORK, "features": list(self.features), "tree": self.to_dict()}

    @classmethod
    def from_dict(cls, tree: Mapping[str, Any], features: Sequence[str], where: str = "the tree") -> "DecisionTree":
        """The tree `to_dict` wrote; TreeError naming the node's path for anything else (a hand edit gone wrong)."""
        names = tuple(features)
        rows: list[list[Any]] = []

        def add(node: Any, at: str) -> int:
            if not isinstance(node, Mapping):
                raise TreeError(f"{where}: {at} is {type(node).__name__}, not a node (an object with if/then/else or "
                                "decide)")
            if len(rows) > 2 ** (MAX_DEPTH + 1):
                raise TreeError(f"{where}: more than {2 ** (MAX_DEPTH + 1)} nodes (deeper than {MAX_DEPTH})")
            samples, share = node.get("samples", 0.0), node.get("reject_share", 0.0)
            for key, value in (("samples", samples), ("reject_share", share)):
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise TreeError(f"{where}: {at}.{key} must be a finite number, got {value!r}")
            index = len(rows)
            rows.append([LEAF, 0.0, -1, -1, False, float(samples), float(share)])
            if "decide" in node:
                extra = set(node) - {"decide", "samples", "reject_share"}
                if extra or node["decide"] not in (ACCEPT, REJECT):
                    raise TreeError(f"{where}: {at} is a leaf: decide must be accept or reject and nothing else may "
                                    f"be set (got decide={node['decide']!r}{', ' + ', '.join(sorted(extra)) if extra else ''})")
                rows[index][4] = node["decide"] == REJECT
                return index
            test = node.get("if")
            if not isinstance(test, Mapping) or set(test) != {"feature", "above"} or "then" not in node \
                    or "else" not in node:
                raise TreeError(f"{where}: {at} must be a leaf {{decide: ...}} or a test {{if: {{feature, above}}, "
                                "then, else}}")
            if test["feature"] not in names:
                raise TreeError(f"{where}: {at}.if.feature {test['feature']!r} is not one of the policy's features "
                                f"({', '.join(names)})")
            above = test["above"]
            if isinstance(above, bool) or not isinstance(above, (int, float)) or not math.isfinite(above):
                raise TreeError(f"{where}: {at}.if.above must be a finite number, got {above!r}")
            rows[index][0], rows[index][1] = names.index(test["feature"]), float(above)
            rows[index][2] = add(node["else"], f"{at}.else")  # below or at the threshold: numbered first, as `fit`
            rows[index][3] = add(node["then"], f"{at}.then")
            return index

        add(tree, "root")
        cols = list(zip(*rows))
        return cls._of(names, *cols)

    @classmethod
    def _of(cls, names, feature, threshold, left, right, reject, samples, share) -> "DecisionTree":
        tree = cls(tuple(names), np.asarray(feature, np.int64), np.asarray(threshold, np.float32),
                   np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(reject, bool),
                   np.asarray(samples, np.float64), np.asarray(share, np.float64))
        for node in range(len(tree.feature)):  # inner nodes: their majority, for reading
            if tree.feature[node] != LEAF:
                tree.reject[node] = tree.reject_share[node] > 0.5
        return tree

    # ------------------------------------------------------------------ as tensors (weights.safetensors)
    def arrays(self) -> dict[str, np.ndarray]:
        """What an exported tree's weights file holds (decisions need these; the statistics are for reading)."""
        return {"feature": self.feature, "threshold": self.threshold, "left": self.left, "right": self.right,
                "reject": self.reject.astype(np.int8)}

    def differs_from(self, arrays: Mapping[str, np.ndarray]) -> str | None:
        """Where `arrays` (a weights file's) decide otherwise than this tree; None where they agree."""
        own = self.arrays()
        for key, value in own.items():
            other = np.asarray(arrays.get(key, np.empty(0)))
            if other.shape != value.shape:
                return f"{key} has {other.size} entries, the readable tree {value.size}"
            bad = np.flatnonzero(other.astype(value.dtype) != value)
            if bad.size:
                return f"{key} of node {int(bad[0])} is {other[bad[0]]!r}, the readable tree's {value[bad[0]]!r}"
        return None

    # ------------------------------------------------------------------ for people
    def test_text(self, node: int, above: bool, units: "Units") -> str:
        name = self.features[self.feature[node]]
        return units.condition(name, float(self.threshold[node]), above)

    def text(self, units: "Units", labeller: str = "the policy") -> str:
        """Nested if/else lines, thresholds in the features' units; each leaf says how many of the labelled decisions
        reached it and what share `labeller` rejected."""
        lines: list[str] = []

        def show(node: int, indent: str) -> None:
            if self.feature[node] == LEAF:
                lines.append(f"{indent}-> {REJECT if self.reject[node] else ACCEPT} "
                             f"({self.samples[node]:,.0f} decisions, {100 * self.reject_share[node]:.0f}% rejected "
                             f"by {labeller})")
                return
            lines.append(f"{indent}if {self.test_text(node, True, units)}:")
            show(int(self.right[node]), indent + "    ")
            lines.append(f"{indent}else ({self.test_text(node, False, units)}):")
            show(int(self.left[node]), indent + "    ")

        show(0, "")
        return "\n".join(lines)

    def path_text(self, x: np.ndarray, units: "Units") -> list[str]:
        """One decision as the lines of `text` it went through, each test with the observation's value ("time until
        the proposal could start (by requested times) > 2 h 47 min (here 6 h)"), the leaf last ("-> reject")."""
        lines = []
        for node, above in self.path(x):
            f = int(self.feature[node])
            name = self.features[f]
            here = "" if MEANINGS.get(name, ("",))[0] == _FLAG else f" (here {units.value(name, float(x[f]))})"
            lines.append(self.test_text(node, above, units) + here)
        return lines + [f"-> {REJECT if self.decide(x) else ACCEPT}"]


@dataclass(frozen=True)
class Units:
    """How the observation scaled its features (the policy's normalisation), to print thresholds in seconds,
    shares and counts."""

    time_scale: float

    def value(self, name: str, v: float) -> str:
        kind = MEANINGS.get(name, ("", ""))[0]
        v = min(max(v, 0.0), 1.0)
        if kind == _TIME:
            return duration(math.expm1(v * math.log1p(self.time_scale)))
        if kind == _SHARE:
            return f"{100 * v:.1f}%"
        if kind == _QUEUE_SHARE:
            return f"{100 * v:.0f}%"
        if kind == _COUNT:
            return f"{math.expm1(v * math.log1p(QUEUE_SCALE)):.1f}"
        if kind == _DEMAND:
            return "unbounded" if v >= 1.0 else f"{v / (1.0 - v):.2f}"
        if kind == _GROWTH:
            return f"{math.expm1(v * math.log1p(3600.0 * QUEUE_SCALE / BSLD_FLOOR)):,.1f}"
        return f"{v:.4g}"

    def condition(self, name: str, threshold: float, above: bool) -> str:
        kind, words = MEANINGS.get(name, ("", name))
        if kind == _FLAG:
            return words if above else words.replace(" fits ", " does not fit ")
        return f"{words} {'>' if above else '<='} {self.value(name, threshold)}"


def feature_names(history: bool) -> tuple[str, ...]:
    return FEATURES + (HISTORY_FEATURES if history else ())


# ---------------------------------------------------------------------- fitting (CART)
def fit(x: np.ndarray, y: np.ndarray, features: Sequence[str], depth: int, weights: np.ndarray | None = None,
        min_leaf: int = 5, allowed: Sequence[str] | None = None) -> DecisionTree:
    """A tree of at most `depth` levels splitting `x` (decisions x features) to predict `y` (1: reject), each split
    the one that lowers the weighted Gini impurity most (thresholds halfway between neighbouring values, in float32
    as the observation is); children deciding alike are merged, so every test printed changes a decision.
    `allowed`: the only features a split may test (None: every one)."""
    if not 1 <= depth <= MAX_DEPTH:
        raise TreeError(f"a tree's depth must be in 1..{MAX_DEPTH}; got {depth}")
    unknown = sorted(set(allowed or ()) - set(features))
    if unknown or (allowed is not None and not allowed):
        raise TreeError(f"--features must name features among {', '.join(features)}; got "
                        f"{', '.join(unknown) or 'none'}")
    columns = np.array([i for i, name in enumerate(features) if allowed is None or name in allowed], np.int64)
    x = np.asarray(x, np.float32)
    y = np.asarray(y, np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, np.float64)
    if x.ndim != 2 or x.shape[1] != len(features) or len(y) != len(x) or len(w) != len(x):
        raise TreeError(f"fit needs decisions x {len(features)} features with one label and weight each; got "
                        f"{x.shape}, {len(y)} labels, {len(w)} weights")
    def share(idx: np.ndarray) -> float:
        total = float(w[idx].sum())
        return float((w[idx] * y[idx]).sum()) / total if total > 0 else 0.0

    def leaf(idx: np.ndarray) -> list[Any]:
        rejected = share(idx)
        return [rejected > 0.5, float(len(idx)), rejected]

    rows = grow(x, depth, min_leaf, leaf, lambda idx: share(idx) in (0.0, 1.0),
                lambda idx: _best_split(x[idx], y[idx], w[idx], min_leaf, columns))
    _merge_alike(rows)
    cols = columns_of(rows)
    return DecisionTree._of(tuple(features), *cols)


def _best_split(x: np.ndarray, y: np.ndarray, w: np.ndarray, min_leaf: int,
               columns: np.ndarray | None = None) -> tuple[int, float] | None:
    # the one split search of schedrl's trees (`schedrl.agents.cart`), here with the Gini impurity
    return best_split(x, y, w, min_leaf, columns, lambda rejected, total, _: _gini(rejected, total))


def _gini(rejected, total):
    p = np.divide(rejected, total, out=np.zeros_like(np.asarray(total, np.float64)), where=np.asarray(total) > 0)
    return 2.0 * p * (1.0 - p)


def _merge_alike(rows: list[list[Any]]) -> None:
    """Turn every inner node whose subtree decides one way into a leaf (bottom up)."""
    def decided(node: int) -> bool | None:
        if rows[node][0] == LEAF:
            return bool(rows[node][4])
        a, b = decided(rows[node][2]), decided(rows[node][3])
        if a is not None and a == b:
            rows[node][0], rows[node][1], rows[node][4] = LEAF, 0.0, a
            rows[node][2] = rows[node][3] = -1
            return a
        return None

    decided(0)



# ---------------------------------------------------------------------- as the inspector's network
def tree_network(architecture: Mapping[str, Any], where: str = "the tree"):
    """The tree of an exported architecture as a torch module with the inspector network's `pi` (logits accept,
    reject: 0 and +1 or -1), so the inspector's policy, export and zoo run it as they run the network."""
    import torch

    features = architecture.get("features")
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise TreeError(f"{where}: architecture.features must be the list of the policy's feature names")
    tree = DecisionTree.from_dict(architecture.get("tree"), features, where)

    class TreeNetwork(tree_module(tree, architecture, where)):

        def _forward(self, batch, **kwargs):
            """The masked (accept, reject) logits of an observation batch, as the inspector network's."""
            from schedrl.agents.inference import ACTION_DIST_INPUTS, OBS
            from schedrl.agents.inspector.env import OBS_ACTION_MASK, OBS_FEATURES
            from schedrl.agents.masking import mask_logits

            obs = batch[OBS]
            return {ACTION_DIST_INPUTS: mask_logits(self.pi(obs[OBS_FEATURES]), obs[OBS_ACTION_MASK])}

        def pi(self, x):
            rows = x.detach().cpu().numpy()
            out = torch.zeros((len(rows), 2), dtype=torch.float32)
            for i, row in enumerate(rows):
                out[i, 1] = 1.0 if tree.decide(row) else -1.0
            return out

    return TreeNetwork()
