"""Issue 47 class 5: numbers at their edges, on generated inputs.

- every integer option (counts, seeds) at and past its bounds: refused when the command line is read, in one line
  that names the option (`schedrl.cli.options.check_integers`), or run;
- an option given an empty value: refused, never read as "all" (`refuse_empty`);
- a YAML mapping (sweep file, scenario file) that writes a key twice, at any depth: one error naming the key and line
  (`schedrl.yamlfile`);
- tuned-rule weights up to 1e308: a rule whose key could overflow is refused when it loads, and one that loads
  ranks jobs with finite keys;
- a scenario file in `$SCHEDRL_SCENARIO_PATH` whose `name:` is not its file's name: `scenarios list` warns and
  `scenarios show` refuses it by name, in one line.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from harness import assert_clean_outcome, run_cli
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedrl.cli.main import AT_LEAST_ONE, COUNT_LIMIT, SEED_LIMIT

EDGES = [-(2 ** 63), -(2 ** 32), -1, 0, 1, 2, COUNT_LIMIT - 1, COUNT_LIMIT, SEED_LIMIT - 1, SEED_LIMIT, 10 ** 30]
FAST = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def allowed(dest: str, value: int) -> bool:
    if dest == "seed" or dest.endswith("_seed"):
        return 0 <= value < SEED_LIMIT
    return (1 if dest in AT_LEAST_ONE else 0) <= value < COUNT_LIMIT


# (argv prefix, option, dest): commands whose every value runs fast or is refused before any work
CASES = [
    (["simulate", "--trace", "default", "--policy", "fcfs", "--jobs", "16"], "--start", "start"),
    (["simulate", "--trace", "default", "--policy", "random", "--jobs", "16"], "--seed", "seed"),
    (["simulate", "--trace", "default", "--policy", "fcfs"], "--jobs", "jobs"),
    (["simulate", "--trace", "default", "--policy", "fcfs", "--jobs", "16"], "--window", "window"),
    (["compare", "--trace", "default", "--policies", "fcfs", "--jobs", "16", "--no-progress"], "--sequences",
     "sequences"),
    (["traces", "generate", "lublin", "--jobs", "5", "--out", "OUT"], "--seed", "seed"),
    (["traces", "generate", "lublin", "--out", "OUT"], "--jobs", "jobs"),
    (["traces", "generate", "lublin", "--jobs", "5", "--out", "OUT"], "--nodes", "nodes"),
]
REFUSED_ONLY = [  # valid values would train: only the refused ones are drawn
    (["train", "linear", "--out", "OUT", "--iterations", "1"], "--seed", "seed"),
    (["train", "linear", "--out", "OUT"], "--iterations", "iterations"),
    (["train", "linear", "--out", "OUT", "--iterations", "1"], "--eval-jobs", "eval_jobs"),
    (["train", "rlscheduler", "--out", "OUT", "--iterations", "1"], "--batch-size", "batch_size"),
    (["tuned", "fit", "--trace", "default", "--out", "OUT"], "--windows", "windows"),
]


@st.composite
def integer_option(draw):
    case = draw(st.sampled_from(CASES + REFUSED_ONLY))
    values = EDGES if case in CASES else [v for v in EDGES if not allowed(case[2], v)]
    value = draw(st.sampled_from(values + ([draw(st.integers(-10, 10))] if case in CASES else [])))
    if case in REFUSED_ONLY and allowed(case[2], value):
        value = -1 if not allowed(case[2], -1) else SEED_LIMIT
    return case, value


@settings(FAST, max_examples=60)
@given(drawn=integer_option())
def test_integer_options_at_their_edges(drawn):
    (argv, option, dest), value = drawn
    with tempfile.TemporaryDirectory() as tmp:
        argv = [str(Path(tmp) / "out.swf") if a == "OUT" else a for a in argv] + [option, str(value)]
        status, out, err = run_cli(*argv)
    assert_clean_outcome(status, out, err, argv)
    event(f"{argv[0]} {option}: {'allowed' if allowed(dest, value) else 'refused'}, exit {status}")
    if not allowed(dest, value):
        assert status == 2 and f"{option} must be" in err, (argv, err)


STRING_OPTIONS = [
    (["leaderboard"], "--scenarios"), (["leaderboard"], "--policies"), (["simulate", "--jobs", "5"], "--trace"),
    (["compare", "--trace", "default", "--jobs", "5"], "--policies"), (["simulate", "--trace", "default"], "--policy"),
    (["train", "linear", "--out", "x"], "--scenario"), (["evaluate", "zoo:linear-default-s0"], "--metric"),
    (["traces", "import", "--slurm", "log", "--procs", "4", "--out", "x.swf"], "--salt"),
]


@settings(FAST, max_examples=20)
@given(case=st.sampled_from(STRING_OPTIONS), empty=st.sampled_from(["", " ", "\t"]))
def test_an_empty_option_value_is_refused_in_one_line(case, empty):
    argv, option = case
    status, out, err = run_cli(*argv, option, empty)
    assert_clean_outcome(status, out, err, argv)
    assert status == 2 and f"{option} is empty" in err, (argv, err)


KEYS = st.sampled_from(["agent", "env", "stop", "trace", "iterations", "seed", "name", "a", "b"])
TREES = st.recursive(st.integers(0, 3) | st.sampled_from(["x", "default"]),
                     lambda inner: st.dictionaries(KEYS, inner, min_size=1, max_size=3), max_leaves=6)


def with_duplicate(tree: dict, target: list[str]) -> tuple[str, str]:
    """Block-style YAML of `tree` in which the mapping at path `target` writes its first key twice; that key."""
    def render(node: dict, path: list[str], depth: int) -> list[str]:
        indent, lines = "  " * depth, []
        for i, (key, value) in enumerate(node.items()):
            if path == target and i == 0:
                lines.append(f"{indent}{key}: 0")
            if isinstance(value, dict):
                lines += [f"{indent}{key}:"] + render(value, path + [key], depth + 1)
            else:
                lines.append(f"{indent}{key}: {json.dumps(value)}")
        return lines

    node = tree
    for key in target:
        node = node[key]
    return "\n".join(render(tree, [], 0)) + "\n", next(iter(node))


@st.composite
def duplicated(draw):
    tree = draw(st.dictionaries(KEYS, TREES, min_size=1, max_size=4))
    path, node = [], tree
    while isinstance(node, dict) and draw(st.booleans()):
        children = [k for k, v in node.items() if isinstance(v, dict)]
        if not children:
            break
        key = draw(st.sampled_from(children))
        path.append(key)
        node = node[key]
    return tree, path


@settings(FAST, max_examples=50)
@given(drawn=duplicated())
def test_a_key_written_twice_is_one_error_in_sweep_and_scenario_files(drawn):
    from schedrl.scenarios.registry import load_file
    from schedrl.training.sweep_file import load_sweep
    from schedrl.training.yaml_reader import SweepError

    tree, path = drawn
    text, key = with_duplicate(tree, path)
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "case.yaml"
        file.write_text(text)
        with pytest.raises(SweepError) as sweep:
            load_sweep(file)
        with pytest.raises(ValueError) as scenario:
            load_file(file)
    for e in (sweep.value, scenario.value):
        message = str(e)
        assert "\n" not in message and f"{key!r} is written twice" in message and str(file) in message, (text, message)


@settings(FAST, max_examples=60)
@given(weights=st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64) |
                        st.sampled_from([1e308, -1e308, 1e300, 1e-308, 5e-324, 0.0]), min_size=8, max_size=8))
def test_tuned_weights_that_could_overflow_are_refused_and_the_rest_rank_finitely(weights):
    from schedrl.heuristics.tuned import RuleError, load_rule
    from schedrl.zoo import manifest

    data = json.loads((manifest.ZOO_DIR / "rules" / "tuned-lublin1-s0.json").read_text())
    data["weights"] = weights
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rule.json"
        path.write_text(json.dumps(data))
        try:
            rule = load_rule(path)
        except RuleError as e:
            assert "overflow" in str(e) and "\n" not in str(e)
            event("refused")
            return
    event("loaded")
    assert np.isfinite(rule._coef).all()
    terms = np.full(len(weights), 30.0)  # the largest term a trace gives is about 30 (a log)
    assert np.isfinite(np.abs(rule._coef) @ terms)


@settings(FAST, max_examples=20)
@given(stem=st.sampled_from(["mine", "other", "lublin-x"]), name=st.sampled_from(["mine", "other", "lublin-x", None]))
def test_a_scenario_file_is_known_by_the_name_it_is_listed_under(stem, name):
    from schedrl.scenarios import standard

    data = standard()["default"].to_dict()
    data.pop("name")
    if name is not None:
        data["name"] = name
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / f"{stem}.yaml").write_text(yaml.safe_dump(data))
        before = os.environ.get("SCHEDRL_SCENARIO_PATH")
        os.environ["SCHEDRL_SCENARIO_PATH"] = tmp
        try:
            listed = run_cli("scenarios", "list")
            shown = run_cli("scenarios", "show", stem)
        finally:
            if before is None:
                os.environ.pop("SCHEDRL_SCENARIO_PATH")
            else:
                os.environ["SCHEDRL_SCENARIO_PATH"] = before
    assert_clean_outcome(*shown, ["scenarios", "show", stem])
    assert listed[0] == 0
    if name in (None, stem):
        assert stem in listed[1] and shown[0] == 0
    else:
        assert stem not in listed[1].split() and "differs from the file's name" in listed[2]
        assert shown[0] == 2 and "differs from the file's name" in shown[2]
