"""The RLScheduler kernel as a regression tree (`schedrl distill`): the CART against brute force, the readable form,
DAgger's labels, the export and the bad input."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest

from schedrl.agents.cart import LEAF, RegressionTree, TreeError, fit_regression
from schedrl.agents.rlscheduler import tree as kernel_tree
from schedrl.agents.rlscheduler.distill import labels_of
from schedrl.agents.rlscheduler.observation import FEATURES, JobFeatures


# ------------------------------------------------------------------------------------------- the regression CART
def _sse(y: np.ndarray, w: np.ndarray) -> float:
    mean = float(np.sum(w * y) / np.sum(w))
    return float(np.sum(w * (y - mean) ** 2))


def test_the_root_split_is_the_brute_force_best_and_leaves_hold_the_weighted_means():
    rng = np.random.default_rng(4)
    for trial in range(6):
        x = rng.integers(0, 6, size=(14, 3)).astype(np.float32)
        y = rng.normal(size=14) + 3.0 * (x[:, trial % 3] > 2)
        w = rng.uniform(0.5, 2.0, size=14)
        tree = fit_regression(x, y, ("a", "b", "c"), depth=1, weights=w, min_leaf=2)
        best = min(((_sse(y[x[:, f] <= t], w[x[:, f] <= t]) + _sse(y[x[:, f] > t], w[x[:, f] > t]), f, t)
                    for f in range(3) for lo, hi in itertools.pairwise(np.unique(x[:, f]))
                    for t in [(lo + hi) / 2] if min(np.sum(x[:, f] <= t), np.sum(x[:, f] > t)) >= 2),
                   key=lambda c: c[0])
        assert tree.feature[0] == best[1] and tree.threshold[0] == pytest.approx(best[2])
        found = _sse(y[x[:, best[1]] <= best[2]], w[x[:, best[1]] <= best[2]]) \
            + _sse(y[x[:, best[1]] > best[2]], w[x[:, best[1]] > best[2]])
        assert found == pytest.approx(best[0])
        left = x[:, tree.feature[0]] <= tree.threshold[0]
        assert tree.predict(x[left])[0] == pytest.approx(np.sum(w[left] * y[left]) / np.sum(w[left]), rel=1e-6)
        assert tree.predict(x[~left])[0] == pytest.approx(np.sum(w[~left] * y[~left]) / np.sum(w[~left]), rel=1e-6)


def test_a_deep_enough_tree_reproduces_a_step_function_and_stops_where_labels_are_equal():
    x = np.array([[i, j] for i in range(8) for j in range(4)], np.float32)
    y = 2.0 * (x[:, 0] > 3) + (x[:, 1] > 1)
    tree = fit_regression(x, y, ("p", "q"), depth=4, min_leaf=1)
    assert np.allclose(tree.predict(x), y)
    assert tree.depth == 2 and tree.leaves == 4  # one split per step, no more: equal labels stop the growth
    assert np.array_equal(tree.predict(x), [tree.value[tree.leaf_of(row)] for row in x])


def test_the_inspector_tree_shares_the_split_search():
    """One CART: the inspector's accept/reject fit calls `cart.best_split` with the Gini impurity; on 0/1 labels the
    variance picks the same split (the Gini impurity is twice the variance)."""
    from schedrl.agents.inspector import tree as inspector_tree

    rng = np.random.default_rng(1)
    x = rng.uniform(size=(40, 3)).astype(np.float32)
    y = (x[:, 1] > 0.4).astype(np.float64)
    classified = inspector_tree.fit(x, y, ("a", "b", "c"), depth=1, min_leaf=2)
    regressed = fit_regression(x, y, ("a", "b", "c"), depth=1, min_leaf=2)
    assert (classified.feature[0], classified.threshold[0]) == (regressed.feature[0], regressed.threshold[0]) == \
        (1, pytest.approx(regressed.threshold[0]))


# ------------------------------------------------------------------------------------------- the readable form
def _small_tree() -> RegressionTree:
    x = np.array([[i / 10, j / 3] for i in range(10) for j in range(4)], np.float32)
    y = x[:, 0] * 2 - (x[:, 1] > 0.5)
    return fit_regression(x, y, ("wait", "can_start_now"), depth=3, min_leaf=2)


def test_the_readable_form_round_trips_through_json():
    tree = _small_tree()
    back = RegressionTree.from_dict(json.loads(json.dumps(tree.to_dict())), tree.features)
    for key, value in tree.arrays().items():
        assert np.array_equal(back.arrays()[key][tree.feature == LEAF] if key == "value" else back.arrays()[key],
                              value[tree.feature == LEAF] if key == "value" else value), key
    units = kernel_tree.Units(JobFeatures(86400.0, 1.0, 1.0, 1.0))
    assert kernel_tree.text(back, units) == kernel_tree.text(tree, units)
    assert tree.differs_from(back.arrays()) is None


@pytest.mark.parametrize("edit, message", [
    (lambda t: {**t, "if": {"feature": "colour", "above": 0.5}}, r"root\.if\.feature 'colour' is not one"),
    (lambda t: {**t, "if": {"feature": "wait", "above": "high"}}, r"root\.if\.above must be a finite number"),
    (lambda t: {**t, "else": {"decide": "reject"}}, r"root\.else must be a leaf \{value"),
    (lambda t: {**t, "then": {"value": float("nan")}}, r"root\.then is a leaf: value must be a finite number"),
    (lambda t: {**t, "then": [1, 2]}, r"root\.then is list, not a node"),
    (lambda t: {**t, "samples": -3}, r"root\.samples must be a finite number >= 0"),
])
def test_a_hand_edited_tree_is_refused_naming_the_node(edit, message):
    tree = _small_tree().to_dict()
    with pytest.raises(TreeError, match=message):
        RegressionTree.from_dict(edit(tree), ("wait", "can_start_now"), "policy.json")


def test_depth_outside_its_range_is_refused():
    for depth in (0, -1, 13, True):
        with pytest.raises(TreeError, match=r"depth must be in 1\.\.12"):
            fit_regression(np.zeros((4, 1), np.float32), np.zeros(4), ("a",), depth)


def test_every_feature_has_a_unit_and_thresholds_print_in_it():
    assert set(FEATURES) <= set(kernel_tree.MEANINGS)
    names = kernel_tree.feature_names(("procs", "bb"), ("f1",))
    assert names[len(FEATURES):] == ("bb_request", "bb_free", "key_f1")
    units = kernel_tree.Units(JobFeatures(86400.0, 50.0, 1.0, 1.0, id_fields=("user",)))
    assert units.condition("requested_time", 0.5, True) == "the job's requested time > 4 min"  # log1p scale
    assert units.condition("can_start_now", 0.5, False) == "the job does not fit now"
    assert units.condition("requested_procs", 0.25, True) == "the job's share of the machine > 25.0%"
    assert units.condition("user", 0.5, False) == "the job's user id <= 25"
    assert units.condition("key_f1", 0.4, True) == "F1's rank of the job among the visible ones (0: its first " \
                                                   "choice) < 1.5"
    assert units.condition("bb_free", 0.1, False) == "free share of the machine's bb <= 10.0%"
    linear = kernel_tree.Units(JobFeatures(7200.0, 1.0, 1.0, 1.0, log_times=False))
    assert linear.value("wait", 0.5) == "1 h"


# ------------------------------------------------------------------------------------------- DAgger's labels
def test_labels_are_the_kernels_rank_share_or_its_score():
    assert labels_of(np.array([0.1, 3.0, 2.0]), "rank").tolist() == [0.0, 1.0, 0.5]
    assert labels_of(np.array([1.0, 1.0, 0.0]), "rank").tolist() == [1.0, 1.0, 0.0]  # ties share the first's rank
    assert labels_of(np.array([0.1, 3.0]), "score").tolist() == [0.1, 3.0]
    assert labels_of(np.array([1.0, 3.0, 5.0]), "centred").tolist() == [-2.0, 0.0, 2.0]
    assert labels_of(np.array([0.7]), "rank").tolist() == [1.0]


class _RowSum:
    """A kernel whose score of a job is its first feature minus its second (row-wise, as the kernel)."""

    ROW_WISE = True

    def job_scores(self, rows):
        return rows[:, 0] - rows[:, 1]


def _policy(module=None):
    from schedrl.agents.rlscheduler.policy import CheckpointPolicy

    norm = JobFeatures(86400.0, 1.0, 1.0, 1.0).to_dict()
    return CheckpointPolicy(module or _RowSum(), {"norm": norm}, "row-sum")


def test_dagger_records_every_visible_job_with_the_kernels_label_and_the_tree_picks_in_later_rounds():
    from schedrl.agents.rlscheduler.distill import _Labelling

    jobs = np.zeros((128, len(FEATURES)), np.float32)
    jobs[:3, 0], jobs[:3, 1] = [0.2, 0.9, 0.5], [0.0, 0.1, 0.0]
    mask = np.zeros(128, np.float32)
    mask[:3] = 1.0
    first = _Labelling(_policy(), None, "rank")
    assert first.choose(jobs, mask) == 1  # the kernel's pick
    assert first.decisions == 1 and first.rows[0].shape == (3, len(FEATURES))
    assert first.labels[0].tolist() == [0.0, 1.0, 0.5]
    one = mask.copy()
    one[1:] = 0.0
    assert first.choose(jobs, one) == 0 and first.decisions == 1  # a single visible job: no choice, not labelled
    # a tree that prefers low wait: it picks job 0, unlike the kernel, and the disagreement is counted
    tree = fit_regression(np.array([[0.1] + [0] * 7, [0.9] + [0] * 7] * 5, np.float32), np.array([1.0, 0.0] * 5),
                          FEATURES, depth=1, min_leaf=1)
    later = _Labelling(_policy(), tree, "rank")
    assert later.choose(jobs, mask) == 0 and later.disagree == 1 and later.labels[0].tolist() == [0.0, 1.0, 0.5]
    # ties in the tree go to the first in the queue (the kernel's own argmax rule)
    flat = fit_regression(np.zeros((4, 8), np.float32), np.ones(4), FEATURES, depth=1, min_leaf=1)
    assert _Labelling(_policy(), flat, "rank").choose(jobs, mask) == 0


# ------------------------------------------------------------------------------------------- export and load
def _zoo_kernel_on_the_embedded_trace():
    """The shipped kernel of the default scenario, on the repository's embedded trace, short windows."""
    from schedrl.agents.checkpoint import load_policy
    from schedrl.agents.rlscheduler.policy import CheckpointPolicy

    shipped = load_policy("zoo:rlscheduler-default-s0")
    env = {**shipped.env_config, "sequence_length": 48}
    policy = CheckpointPolicy(shipped.module, env, "rlscheduler-default-s0")
    policy.record = replace(shipped.record, env_config=env)
    return policy


def test_distill_exports_a_tree_that_loads_as_a_policy_and_zoo_show_prints_it(tmp_path, monkeypatch, capsys):
    from schedrl.agents.checkpoint import load_exported
    from schedrl.agents.rlscheduler.distill import distill, export_tree
    from schedrl.cli.main import main
    from schedrl.zoo import manifest

    monkeypatch.setattr("schedrl.zoo.card.git_commit", lambda: "0" * 40)  # a card's commit asks git (a subprocess)
    policy = _zoo_kernel_on_the_embedded_trace()
    lines: list[str] = []
    out = distill(policy, depth=3, rounds=2, windows=1, seed=2, log=lines.append)
    first, second = out.rounds
    assert (first["acting"], second["acting"]) == ("policy", "tree") and "distill round 2/2" in lines[1]
    assert second["labelled_decisions"] == first["decisions"] + second["decisions"] > first["decisions"] > 0
    assert out.tree.depth <= 3 and out.source["features"] == list(FEATURES)
    exported = export_tree(out, policy, tmp_path / "tree", "tree-test", ["schedrl", "distill", "x"])
    assert exported.architecture["network"] == kernel_tree.NETWORK
    assert exported.architecture["target"] == "score"
    loaded = load_exported(tmp_path / "tree")
    rows = np.random.default_rng(0).uniform(size=(20, len(FEATURES))).astype(np.float32)
    assert np.allclose(loaded.module.job_scores(__import__("torch").from_numpy(rows)).numpy(), out.tree.predict(rows))
    # the weights file and the readable tree must agree
    data = json.loads((tmp_path / "tree" / "policy.json").read_text())
    leaf = data["architecture"]["tree"]
    while "value" not in leaf:
        leaf = leaf["then"]
    leaf["value"] += 1.0
    (tmp_path / "tree" / "policy.json").write_text(json.dumps(data))
    with pytest.raises(Exception, match="the weights file and the readable tree disagree"):
        load_exported(tmp_path / "tree")
    leaf["value"] -= 1.0
    (tmp_path / "tree" / "policy.json").write_text(json.dumps(data))
    # the zoo shows the tree as if/else lines in the features' units
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    (zoo / "manifest.json").write_text(json.dumps({"format": 2, "policies": {}}))
    monkeypatch.setenv("SCHEDRL_ZOO_DIR", str(zoo))
    manifest.add(tmp_path / "tree", "tree-test")
    assert main(["zoo", "show", "tree-test"]) == 0
    shown = capsys.readouterr().out
    assert "## The tree" in shown and "-> priority " in shown and "the job's" in shown


@pytest.mark.parametrize("argv, message", [
    (["distill", "zoo:rlscheduler-default-s0", "--depth", "0"], r"--depth must be >= 1"),
    (["distill", "zoo:rlscheduler-default-s0", "--teacher", "hindsight"], r"--teacher hindsight: an inspector's"),
    (["distill", "zoo:rlscheduler-default-s0", "--features", "wait"], r"--features: an inspector's option"),
    (["distill", "zoo:rlscheduler-lublin1-s0-tree8"], r"is a distilled tree already: distil the policy it came from"),
    (["distill", "zoo:inspector-lublin1-s0", "--target", "score"], r"--target: .*\(inspector\) is not distilled into a score"),
])
def test_what_cannot_be_distilled_is_one_error_line(argv, message, capsys):
    from schedrl.cli.main import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("schedrl distill: error:")
    import re
    assert re.search(message, err[0]), err[0]


def test_the_guide_shows_the_shipped_trees_top_and_every_job_feature():
    """docs/guides/distill.md cannot drift from the zoo: the shipped kernel tree's first test as `zoo show` prints it,
    and a row for every job feature with the wording thresholds are printed in."""
    from pathlib import Path

    from schedrl.agents.rlscheduler.distill import tree_card
    from schedrl.zoo import manifest

    page = (Path(__file__).resolve().parents[3] / "docs" / "guides" / "distill.md").read_text()
    shown = tree_card(manifest.find("rlscheduler-lublin1-s0-tree8")).split("```")[1].strip().splitlines()
    assert shown[0] in page and shown[0].startswith("if the job's share of the machine > ")
    for name, (_, words) in kernel_tree.MEANINGS.items():
        assert f"| `{name}` | {words} |" in page, name
