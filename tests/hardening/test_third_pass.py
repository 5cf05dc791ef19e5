"""Issue 58, hostile inputs, third pass: each class fixed at its mechanism, tried on generated cases.

Every run ends in exit 0 with a correct result or exit 2 with one `error:` line naming what and where (`harness`);
no input, and no file schedrl did not create, is changed; a failed command leaves no output. The classes: 1 an input
is never an output, 2 options that cannot apply together, 3 NaN and infinity, 4 unbounded work, 5 the path
variables, 6 tracebacks, 7 bad data accepted, 8 a manifest against its policy.json, 9 a wrong refusal, 10 small ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from harness import assert_clean_outcome, run_cli
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedrl import paths
from schedrl.zoo import manifest

FEW = settings(max_examples=25, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SOME = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def refused(argv, *expected: str) -> str:
    """`schedrl ARGV` refused in one `error:` line holding each of `expected`; that line."""
    status, out, err = run_cli(*argv)
    assert_clean_outcome(status, out, err, argv)
    assert status == 2, (argv, out, err)
    line = next(line for line in err.splitlines() if "error:" in line)
    for part in expected:
        assert part in line, (argv, line)
    return line


def tree(root: Path) -> dict[str, str]:
    """Every file under `root` with its sha256 (what must not change)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@contextmanager
def environment(**values: str | None):
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ---------------------------------------------------------------- class 3: NaN and infinity

NON_FINITE = st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e400"])
FLOAT_OPTIONS = [
    ("train", "inspector", "--teacher", "hindsight", "--teacher-wait-penalty"),
    ("train", "inspector", "--teacher", "hindsight", "--teacher-floor"),
    ("train", "inspector", "--initial-reject"),
    ("dtsim", "fidelity", "--job-rate"),
    ("predict", "train", "--trace", "default", "--out", "unused.pt", "--train-fraction"),
]


def float_options() -> list[tuple[str, ...]]:
    """Every `type=float` option the parsers declare, as (command..., option): found, not listed, so an option added
    later is tried too."""
    import argparse

    from schedrl.cli.main import build_parser

    found = []

    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*prefix, name))
            elif action.option_strings and getattr(action.type, "__name__", "") == "finite_float":
                found.append((*prefix, action.option_strings[-1]))
    walk(build_parser(), ())
    return found


def test_every_float_option_of_every_command_is_finite():
    options = float_options()
    assert len(options) > 30, options  # train's agents, compare, tuned, simulate ... all reached
    assert ("train", "inspector", "--teacher-wait-penalty") in options


@SOME
@given(option=st.sampled_from(FLOAT_OPTIONS + [(*o[:-1], o[-1]) for o in float_options()[:40]]), value=NON_FINITE)
def test_a_non_finite_number_is_refused_by_every_float_option(option, value):
    argv = [*option[:-1], f"{option[-1]}={value}"]
    line = refused(argv, option[-1])
    assert "finite" in line, line
    event(f"{option[0]} {option[-1]}")


@FEW
@given(value=st.sampled_from(["inf", "-inf", "nan", "1e999"]))
def test_the_teacher_threshold_refuses_non_finite_values(value, tmp_path_factory):
    out = tmp_path_factory.mktemp("t") / "run"
    refused(["train", "inspector", "--teacher", "hindsight", f"--teacher-threshold={value}", "--out", str(out)],
            "--teacher-threshold", "finite")
    assert not out.exists()


POLICIES = ("linear-default-s0", "rlscheduler-default-s0")
SHIPPED = json.loads((manifest.ZOO_DIR / manifest.MANIFEST_FILE).read_text())


def small_zoo(root: Path) -> Path:
    """Two shipped policies with their manifest entries in `root`; the manifest's path."""
    for name in POLICIES:
        shutil.copytree(manifest.ZOO_DIR / "policies" / name, root / "policies" / name)
    data = {"format": SHIPPED["format"], "policies": {n: SHIPPED["policies"][n] for n in POLICIES}}
    (root / manifest.MANIFEST_FILE).write_text(json.dumps(data, indent=2))
    return root / manifest.MANIFEST_FILE


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@FEW
@given(name=st.sampled_from(POLICIES), which=st.integers(0, 100), at=st.integers(0, 10 ** 6),
       value=st.sampled_from([float("nan"), float("inf"), float("-inf")]))
def test_a_zoo_copy_whose_weights_hold_nan_is_refused_with_consistent_checksums(name, which, at, value):
    from safetensors.torch import load_file, save_file

    from schedrl.agents.checkpoint import CheckpointError
    from schedrl.eval.policies import resolve_policy

    with tempfile.TemporaryDirectory() as tmp:
        path = small_zoo(Path(tmp))
        directory = Path(tmp) / "policies" / name
        weights = directory / "weights.safetensors"
        tensors = load_file(weights)
        key = sorted(k for k, v in tensors.items() if v.is_floating_point())[which % len(tensors)]
        tensors[key].view(-1)[at % tensors[key].numel()] = value
        save_file(tensors, weights)
        policy = json.loads((directory / "policy.json").read_text())  # every checksum made consistent again
        policy["weights"].update(sha256=sha(weights), bytes=weights.stat().st_size)
        (directory / "policy.json").write_text(json.dumps(policy, indent=2))
        data = json.loads(path.read_text())
        data["policies"][name]["weights"].update(sha256=sha(weights), bytes=weights.stat().st_size)
        data["policies"][name]["policy_sha256"] = sha(directory / "policy.json")
        path.write_text(json.dumps(data, indent=2))
        with environment(**{manifest.ZOO_DIR_ENV: tmp}):
            with pytest.raises(CheckpointError, match=f"tensor {key} holds 1 NaN or infinite value"):
                resolve_policy(f"zoo:{name}")
            refused(["compare", "--trace", "default", "--jobs", "50", "--sequences", "1", "--no-progress",
                     "--policies", f"f1,zoo:{name}"], key, "NaN or infinite")


@FEW
@given(weights=st.lists(st.sampled_from([1.0, -0.5, float("nan"), float("inf")]), min_size=1, max_size=12))
def test_a_rule_file_with_a_non_finite_weight_is_refused(weights, tmp_path_factory):
    from schedrl.heuristics.tuned import RuleError, load_rule

    source = manifest.ZOO_DIR / SHIPPED["rules"]["tuned-lublin1-s0"]["file"]
    data = json.loads(source.read_text())
    n = len(data["weights"])
    data["weights"] = (weights * n)[:n]
    path = tmp_path_factory.mktemp("rule") / "rule.json"
    path.write_text(json.dumps(data))  # Python writes NaN and Infinity as JSON accepts them from it
    if all(abs(w) < float("inf") for w in data["weights"]):
        load_rule(path)
    else:
        with pytest.raises(RuleError, match="finite"):
            load_rule(path)
        refused(["tuned", "evaluate", str(path)], "finite")


# ---------------------------------------------------------------- class 5: the path variables

@SOME
@given(name=st.sampled_from(sorted(paths.VARIABLES)), kind=st.sampled_from(["file", "no-user", "missing", "dir"]))
def test_each_path_variable_is_checked_at_its_read_in_one_line_naming_it(name, kind, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("env")
    (tmp / "afile").write_text("x")
    (tmp / "adir").mkdir()
    value = {"file": str(tmp / "afile"), "no-user": "~nosuchuser-schedrl/cache", "missing": str(tmp / "nothere"),
             "dir": str(tmp / "adir")}[kind]
    read = (lambda: paths.env_paths(name)) if paths.VARIABLES[name] else (lambda: paths.env_path(name))
    with environment(**{name: value}):
        paths.absolutize_environment()  # what importing schedrl does: never fails
        if kind in ("file", "no-user"):
            with pytest.raises(paths.PathVariableError, match=f"^{name}=") as e:
                read()
            assert "\n" not in str(e.value)
        else:
            read()
    event(f"{name} {kind}")


@pytest.mark.parametrize("value, expected", [("missing", "no such directory"), ("file", "is a file")])
def test_a_zoo_dir_that_is_missing_or_a_file_is_an_error_not_an_empty_zoo(value, expected, tmp_path):
    (tmp_path / "file").write_text("x")
    with environment(**{manifest.ZOO_DIR_ENV: str(tmp_path / value)}):
        for argv in (["zoo", "list"], ["compare", "--trace", "default", "--policies", "f1,zoo:x", "--jobs", "5",
                                       "--no-progress"]):
            refused(argv, manifest.ZOO_DIR_ENV, expected)


@pytest.mark.parametrize("name, value, expected", [
    (paths.TRACES_DIR, "file", "is a file"),
    (paths.CACHE_DIR, "~nosuchuser-schedrl/cache", "names no user"),
    (paths.TRACE_PATH, "file", "is a file"),
])
def test_traces_list_says_which_variable_is_wrong(name, value, expected, tmp_path):
    (tmp_path / "file").write_text("x")
    with environment(**{name: str(tmp_path / value) if value == "file" else value}):
        refused(["traces", "list"], name, expected)


# ---------------------------------------------------------------- class 8: a manifest against its policy.json

FIELDS = ("agent", "scenario", "validation_score", "metric", "seed", "model", "trace", "machine", "command")
OTHER_VALUES = st.sampled_from(["rlscheduler", "inspector", {"name": "sdsc-sp2", "sha256": "0" * 64}, 1.5, 0,
                                "wait", "bsld", {"name": "SDSC-SP2", "sha256": "ab" * 32}, {"procs": 1.0}])


@SOME
@given(name=st.sampled_from(POLICIES), key=st.sampled_from(FIELDS), value=OTHER_VALUES)
def test_a_manifest_that_contradicts_its_policy_json_is_refused_naming_both_values(name, key, value):
    from schedrl.zoo import fields as shapes
    from schedrl.zoo.store import ZooError

    with tempfile.TemporaryDirectory() as tmp:
        path = small_zoo(Path(tmp))
        data = json.loads(path.read_text())
        own = data["policies"][name][key]
        data["policies"][name][key] = value  # every checksum still holds: the manifest's own fields are not summed
        path.write_text(json.dumps(data, indent=2))
        before = tree(Path(tmp))
        with environment(**{manifest.ZOO_DIR_ENV: tmp}):
            results = [run_cli(*argv) for argv in (("zoo", "list"), ("zoo", "show", name))]
            if own == value:
                assert all(status == 0 for status, _, _ in results)
                return
            for argv, (status, out, err) in zip((("zoo", "list"), ("zoo", "show", name)), results):
                assert_clean_outcome(status, out, err, argv)
                assert status == 2 and name in err and key in err, err
                if shapes.problem(data["policies"][name], shapes.POLICY_ENTRY, "x") is None:  # else its shape first
                    assert f"manifest's {key} is {json.dumps(value, sort_keys=True)}" in err, err
                    assert json.dumps(own, sort_keys=True) in err, err
            with pytest.raises(ZooError, match=name):
                manifest.add(Path(tmp) / "policies" / POLICIES[0], "another-copy")
        assert tree(Path(tmp)) == before  # nothing written back over the contradiction
    event(key)
