"""The distilled tree (`agents/inspector/tree.py`, `distill.py`, `schedrl distill`): CART against brute force, the
readable form and its checks, the tree as the inspector's network, DAgger on a small trace, the CLI's errors."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from itertools import product

import numpy as np
import pytest

from schedrl.agents.inspector import tree as trees
from schedrl.agents.inspector.observation import FEATURES, HISTORY_FEATURES
from schedrl.agents.inspector.tree import DecisionTree, TreeError, Units, duration, fit


def _gini_split_cost(x, y, f, t):
    left, right = y[x[:, f] <= t], y[x[:, f] > t]
    cost = 0.0
    for side in (left, right):
        if side.size:
            p = side.mean()
            cost += side.size * 2 * p * (1 - p)
    return cost / len(y)


@pytest.mark.parametrize("seed", range(6))
def test_the_split_is_the_best_single_split_by_brute_force(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=(40, 3)).astype(np.float32) / 5
    y = (rng.random(40) < 0.3 + 0.4 * (x[:, seed % 3] > 0.5)).astype(float)
    f, t = trees._best_split(x, y, np.ones(len(y)), min_leaf=1)  # the split `fit` makes (before merging alike)
    candidates = [(g, u) for g in range(3) for u in np.unique(x[:, g])[:-1]]
    best = min(_gini_split_cost(x, y, g, u) for g, u in candidates)
    assert _gini_split_cost(x, y, f, t) == pytest.approx(best)
    lower, upper = x[:, f][x[:, f] <= t].max(), x[:, f][x[:, f] > t].min()
    assert lower < t < upper  # halfway between neighbouring values


def test_a_tree_fits_a_rule_it_can_express_and_never_grows_past_its_depth():
    grid = np.array(list(product(np.linspace(0, 1, 9), repeat=2)), np.float32)
    y = ((grid[:, 0] > 0.4) & (grid[:, 1] <= 0.6)).astype(float)
    tree = fit(grid, y, ("a", "b"), depth=2, min_leaf=1)
    assert [tree.decide(row) for row in grid] == [bool(v) for v in y]
    assert tree.depth == 2 and tree.leaves == 3
    deep = fit(np.random.default_rng(0).random((300, 4)), np.random.default_rng(1).random(300) < 0.5,
               ("a", "b", "c", "d"), depth=3, min_leaf=1)
    assert deep.depth <= 3


def test_children_that_decide_alike_are_merged_so_every_printed_test_matters():
    x = np.array([[0.1], [0.2], [0.3], [0.7], [0.8], [0.9]], np.float32)
    y = np.array([0, 0, 0, 0, 1, 0], float)  # one level: the best split's sides both accept, so no test is kept
    tree = fit(x, y, ("a",), depth=1, min_leaf=1)
    assert tree.leaves == 1 and not tree.decide(x[4])
    assert fit(x, y, ("a",), depth=3, min_leaf=1).decide(x[4])  # deeper, the reject is isolated


def _small_tree() -> DecisionTree:
    grid = np.array(list(product(np.linspace(0, 1, 9), repeat=2)), np.float32)
    y = ((grid[:, 0] > 0.4) & (grid[:, 1] <= 0.6)).astype(float)
    return fit(grid, y, ("queue_length", "requested_time"), depth=3, min_leaf=1)


def test_the_readable_form_round_trips_to_the_same_decisions_and_arrays():
    tree = _small_tree()
    again = DecisionTree.from_dict(json.loads(json.dumps(tree.to_dict())), tree.features)
    assert again.differs_from(tree.arrays()) is None
    rng = np.random.default_rng(3)
    assert all(again.decide(x) == tree.decide(x) for x in rng.random((200, 2)).astype(np.float32))


@pytest.mark.parametrize("edit, message", [
    (lambda t: t["if"].update(feature="nosuch"), r"root\.if\.feature 'nosuch' is not one of"),
    (lambda t: t["if"].update(above=float("nan")), r"root\.if\.above must be a finite number"),
    (lambda t: t["if"].update(above="high"), r"root\.if\.above must be a finite number"),
    (lambda t: t.pop("else"), r"root must be a leaf"),
    (lambda t: t.update({"then": [1, 2]}), r"root\.then is list, not a node"),
    (lambda t: t["else"].update(decide="maybe") if "decide" in t["else"] else t["else"].update(decide="maybe"),
     r"root\.else"),
    (lambda t: t.update(samples=float("inf")), r"root\.samples must be a finite number"),
])
def test_a_tree_edited_by_hand_into_nonsense_is_refused_naming_the_node(edit, message):
    tree = _small_tree()
    data = copy.deepcopy(tree.to_dict())
    edit(data)
    with pytest.raises(TreeError, match=message):
        DecisionTree.from_dict(data, tree.features, "policy.json")


def test_the_weights_file_and_the_readable_tree_must_agree():
    torch = pytest.importorskip("torch")
    tree = _small_tree()
    net = trees.tree_network({"network": trees.NETWORK, "features": list(tree.features), "tree": tree.to_dict()})
    state = {k: v.clone() for k, v in net.state_dict().items()}
    net.load_state_dict(state)  # its own numbers: fine
    state["threshold"][0] += 0.25
    with pytest.raises(TreeError, match="the weights file and the readable tree disagree"):
        net.load_state_dict(state)
    logits = net.pi(torch.tensor([[0.9, 0.1], [0.1, 0.1]]))
    assert [float(r[1] - r[0]) > 0 for r in logits] == [tree.decide(np.array([0.9, 0.1], np.float32)),
                                                        tree.decide(np.array([0.1, 0.1], np.float32))]


def test_every_feature_has_a_unit_and_thresholds_print_in_it():
    assert set(FEATURES) | set(HISTORY_FEATURES) <= set(trees.MEANINGS)
    units = Units(time_scale=86400.0)
    half = units.value("requested_time", 0.5)  # log1p scale: sqrt(86401) - 1 seconds, about 4.9 minutes
    assert half == "4 min"
    assert units.condition("fits_now", 0.5, True) == "the proposal fits now"
    assert units.condition("fits_now", 0.5, False) == "the proposal does not fit now"
    assert units.condition("free_share", 0.25, False) == "free share of the machine <= 25.0%"
    assert [duration(s) for s in (5, 75, 7800, 3 * 86400 + 4 * 3600)] == ["5 s", "1 min", "2 h 10 min", "3 d 4 h"]


def test_depth_outside_its_range_is_refused():
    x, y = np.zeros((4, 1), np.float32), np.zeros(4)
    for depth in (0, -1, trees.MAX_DEPTH + 1):
        with pytest.raises(TreeError, match=r"depth must be in 1\.\.12"):
            fit(x, y, ("a",), depth)


# ------------------------------------------------------------------------------------------- DAgger and the CLI
def _zoo_inspector_on_the_embedded_trace():
    """The shipped inspector, its env config moved to the repository's embedded trace (no ../shared needed)."""
    from schedrl.agents.checkpoint import load_policy
    from schedrl.agents.inspector.policy import InspectorPolicy

    shipped = load_policy("zoo:inspector-lublin1-s0")
    env = {**shipped.env_config, "trace": "default", "cleaning": "none", "sequence_length": 128}
    policy = InspectorPolicy(shipped.module, env, "inspector-lublin1-s0")
    policy.record = replace(shipped.record, env_config=env)
    return policy


def test_dagger_labels_the_trees_own_states_and_the_tree_decides_as_fitted():
    from schedrl.agents.inspector.distill import distill

    policy = _zoo_inspector_on_the_embedded_trace()
    lines: list[str] = []
    out = distill(policy, depth=3, rounds=2, windows=2, seed=1, log=lines.append)
    assert len(out.rounds) == 2 and len(lines) == 2 and "distill round 2/2" in lines[1]
    first, second = out.rounds
    assert first["acting"] == "policy" and second["acting"] == "tree"
    assert second["labelled"] == first["decisions"] + second["decisions"] > first["decisions"] > 0
    assert out.tree.depth <= 3 and 0.5 < second["fit_agreement"] <= 1.0


def test_distill_exports_a_tree_that_loads_as_a_policy_and_zoo_show_prints_it(tmp_path, monkeypatch, capsys):
    from schedrl.agents.checkpoint import load_exported
    from schedrl.agents.inspector.distill import distill, export_tree
    from schedrl.cli.main import main
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    monkeypatch.setattr("schedrl.zoo.card.git_commit", lambda: "0" * 40)  # a card's commit asks git (a subprocess)
    policy = _zoo_inspector_on_the_embedded_trace()
    out = distill(policy, depth=4, rounds=2, windows=2, seed=2, log=lambda _: None)
    exported = export_tree(out, policy, tmp_path / "tree", "tree-test", ["schedrl", "distill", "x"])
    assert exported.architecture["network"] == trees.NETWORK
    loaded = load_exported(tmp_path / "tree")
    jobs = sequence(_workload(), 0, 256)
    summarize(Simulator(jobs, policy.record.sim_config).run(loaded))  # a whole window, decided by the tree
    assert loaded.totals["inspections"] > 0
    # the zoo shows the tree as if/else lines in the features' units
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    (zoo / "manifest.json").write_text(json.dumps({"format": 2, "policies": {}}))
    monkeypatch.setenv("SCHEDRL_ZOO_DIR", str(zoo))
    from schedrl.zoo import manifest

    manifest.add(tmp_path / "tree", "tree-test")
    assert main(["zoo", "show", "tree-test"]) == 0
    shown = capsys.readouterr().out
    assert "## The tree" in shown and ("-> reject" in shown or "-> accept" in shown)


def test_the_hindsight_teacher_labels_and_the_guard_goes_into_the_export(tmp_path, monkeypatch):
    """`--teacher hindsight`: every label is the teacher's own comparison of accepting and rejecting (checked against
    `option_values` on the states it was given), and `--starvation-wait` changes where the tree may reject, in the
    labelling and in the exported policy's env config."""
    from schedrl.agents.checkpoint import load_exported
    from schedrl.agents.inspector import distill as distilling
    from schedrl.heuristics.hindsight import HindsightInspector

    monkeypatch.setattr("schedrl.zoo.card.git_commit", lambda: "0" * 40)
    asked: list[tuple[bool, bool]] = []
    option_values = HindsightInspector.option_values

    def checked(self, sim, j):
        values = option_values(self, sim, j)
        asked.append((float(values[1:].min()) < float(values[0]) - 1e-9 * max(1.0, abs(float(values[0]))),
                      sim.now - sim.state.submit[j] < 3600.0))
        return values
    monkeypatch.setattr(HindsightInspector, "option_values", checked)
    policy = _zoo_inspector_on_the_embedded_trace()
    out = distilling.distill(policy, depth=2, rounds=2, windows=2, seed=3, log=lambda _: None, teacher_depth=1,
                             guard={"starvation_wait": 3600.0})
    assert out.source["teacher"] == "hindsight depth 1" and out.source["guard"] == {"starvation_wait": 3600.0}
    labelled = out.rounds[-1]["labelled"]
    assert len(asked) == labelled > 0
    assert all(young for _, young in asked)  # the guard: a proposal waiting an hour or more is never asked about
    assert out.rounds[0]["policy_rejects"] == pytest.approx(sum(r for r, _ in asked[:out.rounds[0]["decisions"]])
                                                            / out.rounds[0]["decisions"])
    distilling.export_tree(out, policy, tmp_path / "t", "taught", ["schedrl", "distill", "x"])
    loaded = load_exported(tmp_path / "t")
    assert loaded.env_config["starvation_wait"] == 3600.0 and loaded.reject_mask.starvation_wait == 3600.0
    with pytest.raises(trees.TreeError, match="can change only"):
        distilling.distill(policy, depth=2, rounds=1, windows=1, log=lambda _: None, guard={"base": "sjf"})


def test_a_tree_can_be_taught_over_another_base_rule_and_its_export_runs_over_it(tmp_path, monkeypatch):
    """`--base`: the teacher compares accepting and rejecting the other rule's proposals, and the exported tree runs
    over that rule (its env config names it); a rule that cannot be made is one ValueError line."""
    from schedrl.agents.checkpoint import load_exported
    from schedrl.agents.inspector import distill as distilling
    from schedrl.heuristics.hindsight import HindsightInspector

    monkeypatch.setattr("schedrl.zoo.card.git_commit", lambda: "0" * 40)
    bases: list[str] = []
    init = HindsightInspector.__init__

    def seen(self, base, *args, **kwargs):
        bases.append(base)
        init(self, base, *args, **kwargs)
    monkeypatch.setattr(HindsightInspector, "__init__", seen)
    policy = _zoo_inspector_on_the_embedded_trace()
    assert policy.base_name == "f1"
    out = distilling.distill(policy, depth=2, rounds=1, windows=1, seed=3, log=lambda _: None, teacher_depth=1,
                             base="SJF")
    assert out.source["base"] == "sjf" and set(bases) == {"sjf"}
    distilling.export_tree(out, policy, tmp_path / "t", "taught", ["schedrl", "distill", "x"])
    loaded = load_exported(tmp_path / "t")
    assert loaded.env_config["base"] == "sjf" and loaded.base_name == "sjf"
    with pytest.raises(ValueError, match="unknown base heuristic 'nope'"):
        distilling.distill(policy, depth=2, rounds=1, windows=1, log=lambda _: None, base="nope")


def test_refit_moves_a_threshold_to_the_best_mean_of_its_candidates_and_keeps_the_fitted_one_on_a_tie():
    """`refit_thresholds`: the chosen threshold's recorded mean is the tree's own mean there on the windows (re-run
    independently), no candidate's is lower, a second refit from the chosen tree moves nothing, and the leaves'
    statistics count the states again."""
    from schedrl.agents.inspector import distill as distilling
    from schedrl.agents.inspector.teacher import sources
    from schedrl.agents.inspector.config import InspectorEnvConfig
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator

    policy = _zoo_inspector_on_the_embedded_trace()
    own = sources(InspectorEnvConfig.from_dict(dict(policy.env_config)))[0]
    rng = np.random.default_rng(5)
    windows = [own.window(rng, 96)[1] for _ in range(2)]
    names = trees.feature_names(False)
    at = names.index("start_if_held")
    tree = DecisionTree.from_dict({"if": {"feature": "start_if_held", "above": 0.9},
                                   "then": {"decide": "reject"}, "else": {"decide": "accept"}}, names)
    x = np.zeros((40, len(names)), np.float32)
    x[:, at] = np.linspace(0.0, 1.0, 40, dtype=np.float32)
    y = (x[:, at] > 0.5).astype(np.float64)
    lines: list[str] = []
    (moved,) = distilling.refit_thresholds(tree, policy, x, y, np.ones(40), windows, own.sim_config, "bsld",
                                           lines.append)

    def mean_at(threshold: float) -> float:
        tree.threshold[0] = threshold
        acting = distilling._Acting(policy, tree)
        return float(np.mean([summarize(Simulator(w, own.sim_config).run(acting)).avg_bsld for w in windows]))

    chosen = moved["chosen"]
    assert moved["feature"] == "start_if_held" and moved["fitted"] == pytest.approx(0.9)
    assert mean_at(chosen) == pytest.approx(moved["mean_bsld_chosen"])
    assert moved["mean_bsld_chosen"] <= moved["mean_bsld_fitted"] == pytest.approx(mean_at(np.float32(0.9)))
    for candidate in np.quantile(x[:, at], np.linspace(0.0, 1.0, distilling.REFIT_CANDIDATES)).astype(np.float32):
        assert mean_at(candidate) >= moved["mean_bsld_chosen"] - 1e-9
    tree.threshold[0] = chosen
    (again,) = distilling.refit_thresholds(tree, policy, x, y, np.ones(40), windows, own.sim_config, "bsld",
                                           lambda _: None)
    assert again["chosen"] == again["fitted"] == chosen
    assert tree.samples[0] == 40 and tree.samples[1] + tree.samples[2] == 40
    assert len(lines) == 1 and "test 0 on start_if_held" in lines[0]
    assert "chosen by the tree's mean on 2 fresh training windows" in \
        distilling.refit_text({"refit": [moved], "refit_windows": 2}) and distilling.refit_text({}) == ""
    with pytest.raises(TreeError, match="--refit-windows must be in 0..1000"):
        distilling.distill(policy, depth=2, rounds=1, windows=1, log=lambda _: None, refit_windows=1001)


def _workload():
    from schedrl.workload.catalog import load_trace

    return load_trace("default")


@pytest.mark.parametrize("argv, message", [
    (["distill", "zoo:inspector-lublin1-s0", "--depth", "0"], r"--depth must be >= 1"),
    (["distill", "zoo:inspector-lublin1-s0", "--depth", "13"], r"--depth must be in 1\.\.12"),
    (["distill", "zoo:inspector-lublin1-s0", "--rounds", "51"], r"--rounds must be in 1\.\.50"),
    (["distill", "zoo:dras-pg-dras-sdsc-sp2-s0"], r"only an inspector's accept/reject or an RLScheduler"),
    (["distill", "zoo:deeprm-rlschert-vasp-s0"], r"discrete-time cluster"),
    (["distill", "zoo:inspector-lublin1-s0", "--add"], r"need --out"),
    (["distill", "zoo:inspector-lublin1-s0", "--refit-windows", "1001"], r"--refit-windows must be in 0\.\.1000"),
    (["distill", "zoo:inspector-lublin1-s0", "--base", "nope"], r"unknown base heuristic 'nope'"),
    (["distill", "zoo:inspector-lublin1-s0", "--base", "tuned:/nonexistent/rule.json"], r"/nonexistent/rule\.json"),
])
def test_what_cannot_be_distilled_is_one_error_line(argv, message, capsys):
    from schedrl.cli.main import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("schedrl distill: error:")
    import re
    assert re.search(message, err[0]), err[0]


def test_the_guide_shows_the_shipped_tree_and_every_feature_it_may_test():
    """docs/guides/distill.md cannot drift from the zoo: the shipped tree's lines as `zoo show` prints them, and a
    row for every feature with the wording thresholds are printed in."""
    from pathlib import Path

    from schedrl.agents.inspector.distill import tree_card
    from schedrl.zoo import manifest

    page = (Path(__file__).resolve().parents[3] / "docs" / "guides" / "distill.md").read_text()
    shipped = tree_card(manifest.find("inspector-lublin1-s0-tree3")).split("```")[1].strip()
    assert shipped in page
    for name, (_, words) in trees.MEANINGS.items():
        assert f"| `{name}` | {words} |" in page, name
