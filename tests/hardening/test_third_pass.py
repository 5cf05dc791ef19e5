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


@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
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


# ---------------------------------------------------------------- class 1: an input is never an output

RULE = manifest.ZOO_DIR / SHIPPED["rules"]["tuned-lublin1-s0"]["file"]
SACCT = Path(__file__).parents[1] / "workload" / "data" / "sacct_local.txt"


def _commands(rule: str, log: str, out: str) -> dict[str, list[str]]:
    """Commands that read `rule` (or `log`) inside an argument and write `out` (a file)."""
    return {
        "inspector score": ["inspector", "score", "--scenario", "lublin1", "--policies", f"f1,tuned:{rule}",
                            "--json", out],
        "compare --plot": ["compare", "--trace", "default", "--jobs", "20", "--sequences", "1", "--no-progress",
                           "--policies", f"sjf,tuned:{rule}", "--plot", out],
        "simulate --plot": ["simulate", "--trace", "default", "--jobs", "20", "--policy", f"tuned:{rule}",
                            "--plot", out],
        "traces import": ["traces", "import", "--slurm", log, "--procs", "64", "--salt", "s", "--out", out],
        "tuned fit": ["tuned", "fit", "--trace", log, "--budget", "1s", "--out", out],
    }


@SOME
@given(command=st.sampled_from(["inspector score", "compare --plot", "simulate --plot", "traces import",
                                "tuned fit"]),
       how=st.sampled_from(["same", "dot-slash", "symlink", "hardlink", "absolute"]),
       schedrl_wrote_it=st.booleans(), force=st.booleans())
def test_an_output_is_never_an_input_of_the_same_command(command, how, schedrl_wrote_it, force):
    from schedrl.outputs import Out, claim

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rule, log = root / "fit.json", root / "log.txt"
        shutil.copy(RULE, rule)
        shutil.copy(SACCT, log)
        target = log if command in ("traces import", "tuned fit") else rule
        if schedrl_wrote_it:  # the output claim's "did schedrl write it?" says yes: still an input
            claim("tuned fit", [Out("--out", target)], force=True).record(target)
        name = {"same": target.name, "dot-slash": f"./{target.name}", "absolute": str(target),
                "symlink": "link" + (".png" if "plot" in command else target.suffix),
                "hardlink": "hard" + (".png" if "plot" in command else target.suffix)}[how]
        if how == "symlink":
            (root / name).symlink_to(target)
        elif how == "hardlink":
            os.link(target, root / name)
        before = tree(root)
        cwd = os.getcwd()
        os.chdir(root)
        try:
            argv = _commands(rule.name, log.name, name)[command] + (["--force"] if force else [])
            line = refused(argv, "own input")
        finally:
            os.chdir(cwd)
        assert tree(root) == before, (argv, line)
    event(f"{command} {how}")


# ---------------------------------------------------------------- class 2: options that cannot apply together

TOGETHER = [
    ("leaderboard", "--render", ".", ["--out", "o"], ["--scenarios", "default"], ["--publish", "."],
     ["--plot", "p.png"], ["--policies", "m:f"], ["--sequences", "2"], ["--seed", "1"], ["--json"], ["--summary"],
     ["--no-entry-points"]),
    ("leaderboard", "--publish", ".", ["--scenarios", "default"], ["--sequences", "2"], ["--seed", "1"],
     ["--policies", "m:f"]),
    ("tuned fit", "--scenario", "lublin1", ["--train-fraction", "0.5"], ["--validation-share", "0.5"],
     ["--validation-sequences", "3"]),
    ("compare", "--starts", "0,1", ["--sequences", "3"]),
    ("tune tune_configs/linear_example.yaml", "--dry-run", None, ["--out", "o"], ["--resume"],
     ["--address", "auto"], ["--force"]),
]


@SOME
@given(case=st.sampled_from(TOGETHER), data=st.data(), order=st.booleans(), abbreviate=st.booleans())
def test_options_that_cannot_apply_together_are_refused_when_read(case, data, order, abbreviate, tmp_path_factory):
    command, option, value, *others = case
    other = data.draw(st.sampled_from(others))
    first = [f"--{option[2:5]}" if abbreviate and option not in ("--publish", "--dry-run") else option,
             *([value] if value is not None else [])]
    argv = [*command.split(), *((first + other) if order else (other + first))]
    if command == "tuned fit":
        argv += ["--out", str(tmp_path_factory.mktemp("o") / "r.json")]
    if command == "compare":
        argv += ["--trace", "default"]
    refused(argv, f"{option} cannot be given with {other[0]}")
    event(f"{command} {option} {other[0]}")


def test_an_option_of_another_is_refused_without_it():
    refused(["export", "ckpt", "--out", "x", "--replace"], "--replace is an option of --add")
    for command in (["simulate"], ["compare", "--no-progress"]):
        refused([*command, "--trace", "default", "--jobs", "5", "--force"], "--force is an option of --plot")


# ---------------------------------------------------------------- class 4: unbounded work

@FEW
@given(argv=st.sampled_from([
    ["traces", "import", "--slurm", "/dev/zero", "--procs", "4", "--salt", "s", "--out", "OUT"],
    ["traces", "import", "--slurm", str(SACCT), "--sinfo", "/dev/zero", "--salt", "s", "--out", "OUT"],
    ["traces", "import", "--slurm", str(SACCT), "--procs", "4", "--id-map", "/dev/zero", "--out", "OUT"],
    ["tune", "/dev/zero", "--dry-run"],
    ["zoo", "add-rule", "/dev/zero", "--name", "x"],
    ["compare", "--trace", "/dev/zero", "--jobs", "5", "--no-progress"],
    ["scenarios", "show", "/dev/zero"],
    ["tuned", "evaluate", "/dev/zero"],
]))
def test_a_device_given_as_a_file_is_refused_without_reading_it_whole(argv, tmp_path_factory):
    out = tmp_path_factory.mktemp("z") / "out.swf"
    argv = [str(out) if a == "OUT" else a for a in argv]
    refused(argv, "/dev/zero")
    assert not out.exists()


@FEW
@given(line=st.integers(1, 3), size=st.sampled_from([(2 << 20) + 1, 3 << 20]), gz=st.booleans())
def test_a_line_past_the_bound_is_refused_with_the_bound_stated(line, size, gz, tmp_path_factory):
    import gzip

    from schedrl.workload import TraceError
    from schedrl.workload.swf import read_bytes

    text = b"".join(b"1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n" for _ in range(line)) + b"x" * size + b"\n"
    path = tmp_path_factory.mktemp("l") / ("t.swf.gz" if gz else "t.swf")
    path.write_bytes(gzip.compress(text) if gz else text)
    with pytest.raises(TraceError, match="a line longer than 1 MiB"):
        read_bytes(path)


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.integers(10_001, 200_000), samples=st.integers(1, 3))
def test_a_sweep_past_the_trial_maximum_is_refused_before_its_values_are_read(values, samples, tmp_path_factory):
    import time

    path = tmp_path_factory.mktemp("s") / "big.yaml"
    grid = ", ".join("1.0e-3" for _ in range(min(values, 10_001)))  # the count, not the values, decides
    path.write_text(f"name: big\nagent: linear\nenv: {{trace: default}}\nstop: {{iterations: 1}}\n"
                    f"num_samples: {samples}\n"
                    f"param_space:\n  ppo.lr: {{grid: [{grid}]}}\n")
    started = time.monotonic()
    line = refused(["tune", str(path), "--dry-run"], "a sweep holds at most 10,000")
    assert time.monotonic() - started < 20, line


def test_a_dry_run_lists_at_most_its_rows_and_counts_the_rest(tmp_path):
    path = tmp_path / "wide.yaml"
    path.write_text("name: wide\nagent: linear\nenv: {trace: default}\nstop: {iterations: 1}\nparam_space:\n"
                    f"  ppo.lr: {{grid: [{', '.join(str(1e-4 * (1 + i / 1e4)) for i in range(5000))}]}}\n")
    status, out, err = run_cli("tune", str(path), "--dry-run")
    assert status == 0, err
    assert "... and 4,800 more trials (the first 200 listed)" in out and "5,000 values" in out
    assert len(out.splitlines()) < 230


def test_the_teacher_depth_states_its_range(tmp_path):
    for value in ("-1", "0", "17", "1000000000"):
        refused(["train", "inspector", "--teacher", "hindsight", f"--teacher-depth={value}", "--out",
                 str(tmp_path / "run")],
                "--teacher-depth must be between 1 and 16", f"got {value}")


# ---------------------------------------------------------------- class 6: tracebacks

@FEW
@given(kind=st.sampled_from(["parent-is-file", "missing-parent", "map-is-dir"]), force=st.booleans())
def test_an_id_map_that_cannot_be_written_leaves_no_trace_behind(kind, force, tmp_path_factory):
    root = tmp_path_factory.mktemp("idmap")
    (root / "afile").write_text("x")
    (root / "adir").mkdir()
    id_map = {"parent-is-file": root / "afile" / "map.json", "missing-parent": root / "nowhere" / "map.json",
              "map-is-dir": root / "adir"}[kind]
    out = root / "out.swf"
    before = tree(root)
    line = refused(["traces", "import", "--slurm", str(SACCT), "--procs", "64", "--id-map", str(id_map),
                    "--out", str(out), *(["--force"] if force else [])], "--id-map")
    assert ".tmp" not in line and not out.exists() and tree(root) == before


def test_an_id_map_that_fails_at_the_write_removes_the_trace(tmp_path, monkeypatch):
    from schedrl import outputs

    real = outputs.atomic_write

    def failing(path, data):
        if Path(path).name == "map.json":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, data)
    monkeypatch.setattr(outputs, "atomic_write", failing)
    out = tmp_path / "out.swf"
    line = refused(["traces", "import", "--slurm", str(SACCT), "--procs", "64", "--id-map", str(tmp_path / "map.json"),
                    "--out", str(out)], "map.json", "cannot write the id map")
    assert ".tmp" not in line and not out.exists()


@pytest.mark.parametrize("board", ["[]", "{}", '{"scenarios": []}', '{"scenarios": [1]}', '{"scenarios": [{}]}',
                                   "null", "not json"])
def test_render_of_a_board_that_is_not_one_is_one_line(board, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "leaderboard.json").write_text(board)
    (tmp_path / "README.md").write_text("x")
    before = tree(tmp_path)
    refused(["leaderboard", "--render", str(tmp_path)], "--render", "leaderboard.json")
    assert tree(tmp_path) == before


def test_an_unwritable_out_directory_is_refused_by_the_claim(tmp_path, monkeypatch):
    from schedrl import outputs

    (tmp_path / "board").mkdir()
    monkeypatch.setattr(outputs.os, "access", lambda path, mode: Path(path) != tmp_path / "board")
    refused(["leaderboard", "--scenarios", "default", "--out", str(tmp_path / "board")], "--out", "not writable")


# ---------------------------------------------------------------- class 1 (pages): a page edited since schedrl wrote it

REPO = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    """A checkout whose pages `leaderboard --render` wrote (with their digests)."""
    root = tmp_path_factory.mktemp("checkout")
    (root / "docs").mkdir()
    (root / "README.md").write_text((REPO / "README.md").read_text())
    shutil.copy(REPO / "docs" / "leaderboard.json", root / "docs" / "leaderboard.json")
    status, _, err = run_cli("leaderboard", "--render", str(root))
    assert status == 0, err
    return root


@pytest.mark.parametrize("page", ["docs/leaderboard.md", "docs/zoo.md"])
@pytest.mark.parametrize("edit", ["append", "replace", "truncate", "unrecorded"])
def test_render_keeps_a_page_edited_since_schedrl_wrote_it(page, edit, rendered):
    # every one of the 8 cases once (hypothesis drew 25 examples from these 8)
    from schedrl.outputs import MARKER

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "checkout"
        shutil.copytree(rendered, root)
        text = (root / page).read_text()
        if edit == "unrecorded":  # a page schedrl did not record, different from what it would render
            (root / "docs" / MARKER).unlink()
        (root / page).write_text({"append": text + "\nmy note\n", "replace": "my own page\n",
                                  "truncate": text[: len(text) // 2], "unrecorded": text + "x"}[edit])
        before = tree(root)
        refused(["leaderboard", "--render", str(root)], page, "edited since schedrl wrote it", "--force")
        assert tree(root) == before


def test_render_passes_its_own_unchanged_pages_and_identical_unrecorded_ones(rendered, tmp_path):
    from schedrl.eval import leaderboard as lb
    from schedrl.outputs import MARKER

    root = tmp_path / "checkout"
    shutil.copytree(rendered, root)
    result = lb.restated(json.loads((root / "docs" / "leaderboard.json").read_text()))
    lb.check_pages(result, root)  # recorded and unchanged
    (root / "docs" / MARKER).unlink()
    lb.check_pages(result, root)  # a fresh clone: no digests, but each page is what the render writes
    (root / "docs" / "zoo.md").write_text("mine\n")
    with pytest.raises(ValueError, match="docs/zoo.md was edited"):
        lb.check_pages(result, root)
    lb.check_pages(result, root, force=True)


@pytest.mark.integration  # renders both figures (seconds each)
def test_render_with_force_replaces_an_edited_page(rendered, tmp_path):
    root = tmp_path / "checkout"
    shutil.copytree(rendered, root)
    page = root / "docs" / "leaderboard.md"
    original = page.read_text()
    page.write_text("edited\n")
    status, _, err = run_cli("leaderboard", "--render", str(root), "--force")
    assert status == 0 and page.read_text() == original, err


# ---------------------------------------------------------------- class 7: bad data accepted

@FEW
@given(repeats=st.lists(st.integers(1, 40), min_size=1, max_size=4))
def test_a_repeated_sacct_record_is_one_job_and_said(repeats, tmp_path_factory):
    from schedrl.workload.slurm import NameIds, SlurmImport, read_sacct

    lines = SACCT.read_text().splitlines()
    doubled = lines + [lines[1 + (r % (len(lines) - 1))] for r in repeats]
    path = tmp_path_factory.mktemp("s") / "sacct.txt"
    path.write_text("\n".join(doubled) + "\n")
    options = SlurmImport(procs=64, nodes=2, timezone="UTC")
    once = read_sacct(SACCT, NameIds(salt=b"x"), options)
    again = read_sacct(path, NameIds(salt=b"x"), options)
    assert len(again) == len(once)  # never a second job
    dropped = lambda wl: sum(a.count for a in wl.report.actions if a.action == "dropped")  # noqa: E731
    assert dropped(again) - dropped(once) == len(repeats)  # each repeat said (as a repeat, or a step again)
    steps = sum(1 for r in repeats if "." in lines[1 + (r % (len(lines) - 1))].split("|")[0])
    said = sum(a.count for a in again.report.actions if a.rule == "slurm_repeated")
    assert said == len(repeats) - steps


@FEW
@given(kind=st.sampled_from(["User", "Group", "JobName"]), ids=st.lists(st.integers(1, 4), min_size=2, max_size=5))
def test_an_id_map_giving_two_names_one_id_is_refused(kind, ids, tmp_path_factory):
    from schedrl.workload import TraceError
    from schedrl.workload.slurm import NameIds

    path = tmp_path_factory.mktemp("m") / "map.json"
    path.write_text(json.dumps({kind: {f"name{i}": n for i, n in enumerate(ids)}}))
    if len(set(ids)) == len(ids):
        assert NameIds.load(path).table[kind]
    else:
        with pytest.raises(TraceError, match=f"{kind} id .* is given to both"):
            NameIds.load(path)


# ---------------------------------------------------------------- class 9: a wrong refusal

def test_tuned_evaluate_of_a_rule_fitted_on_lublin1_runs_on_its_evaluation_trace(tmp_path):
    from schedrl.scenarios import standard

    scenario = standard()["lublin1"]
    rule = json.loads(RULE.read_text())
    rule["scenario"] = scenario.record()
    rule["split"] = {**rule["split"], "validation_share": 1.0}  # what `tuned fit --scenario lublin1` writes today
    path = tmp_path / "fit.json"
    path.write_text(json.dumps(rule))
    status, out, err = run_cli("tuned", "evaluate", str(path), "--sequences", "2", "--jobs", "64", "--json")
    assert status == 0, err
    assert "lublin-heldout" in err and "validation_share" not in err
    assert len(json.loads(out)["versus_f1"]) == 1


# ---------------------------------------------------------------- class 10: small

@FEW
@given(policies=st.lists(st.sampled_from(["f1", "F1", "sjf", "SJF", "fcfs"]), min_size=2, max_size=4))
def test_a_policy_named_twice_is_refused_one_column_each(policies):
    argv = ["compare", "--trace", "default", "--jobs", "20", "--sequences", "1", "--no-progress", "--json",
            "--policies", ",".join(policies)]
    if len({p.lower() for p in policies}) < len(policies):
        refused(argv, "--policies names the policy", "twice")
    else:
        status, out, err = run_cli(*argv)
        assert status == 0, err
        assert len({r["policy"] for r in json.loads(out)["results"]}) == len(policies)


@FEW
@given(sizes=st.lists(st.sampled_from([2, 4, -3, 0, 2]), min_size=3, max_size=8),
       command=st.sampled_from(["simulate", "compare"]))
def test_what_a_trace_reader_drops_is_said(sizes, command, tmp_path_factory):
    from schedrl.workload.cleaning import CleaningRules
    from schedrl.workload.swf import read_swf

    path = tmp_path_factory.mktemp("t") / "t.swf"
    path.write_text("; MaxProcs: 8\n" + "".join(f"{i + 1} {10 * i} 0 50 {n} -1 -1 {n} 60 -1 1 1 1 1 1 1 -1 -1\n"
                                                for i, n in enumerate(sizes)))
    kept = len(read_swf(path, CleaningRules.preset("default")))
    argv = ["simulate", "--policy", "fcfs"] if command == "simulate" else \
        ["compare", "--jobs", "1", "--sequences", "1", "--no-progress"]
    status, out, err = run_cli(*argv, "--trace", str(path))
    assert_clean_outcome(status, out, err, argv)
    if kept < len(sizes) and kept > 0:
        assert f"kept {kept} of {len(sizes)} jobs ({len(sizes) - kept} dropped)" in err, err
    elif kept == len(sizes):
        assert "dropped" not in err, err


@SOME
@given(key=st.sampled_from(["depth", "samples", "horizon", "history", "max_queue", "seed"]),
       value=st.one_of(st.integers(-5, 5), st.integers(10 ** 5, 10 ** 12)))
def test_a_planning_search_is_bounded_and_the_bound_stated(key, value):
    from schedrl.eval.planning import BOUNDS, parse_spec

    low, high = BOUNDS[key]
    spec = f"plan:f1:{key}={value}"
    if low <= value <= high:
        assert parse_spec(spec)[key] == value
    else:
        with pytest.raises(ValueError, match=f"{key} must be between {low:,} and {high:,}"):
            parse_spec(spec)


@FEW
@given(bad=st.lists(st.integers(0, 7), min_size=1, max_size=3, unique=True))
def test_slurm_replay_says_what_the_cleaning_dropped(bad, tmp_path_factory):
    from schedrl.slurm.client import SlurmError
    from schedrl.slurm.replay import ReplayError, replay_trace

    class NoSlurm:  # the note comes before any Slurm command
        def sinfo(self, partition):
            raise SlurmError("no Slurm here")

    path = tmp_path_factory.mktemp("r") / "t.swf"
    path.write_text("; MaxProcs: 8\n" + "".join(
        f"{i + 1} {10 * i} 0 50 {-3 if i in bad else 2} -1 -1 {-3 if i in bad else 2} 60 -1 1 1 1 1 1 1 -1 -1\n"
        for i in range(8)))
    said: list[str] = []
    with pytest.raises(ReplayError, match="no Slurm here"):
        replay_trace(str(path), "p", 1e-3, jobs=8, say=said.append, client=NoSlurm())
    assert any(f"kept {8 - len(bad)} of 8 jobs ({len(bad)} dropped)" in line for line in said), said


@FEW
@given(key=st.sampled_from(["ppo.entropy_coeff", "ppo.num_gpus_per_learner"]),
       value=st.sampled_from([".nan", ".inf", "-.inf", ".NaN", "1e999"]))
def test_a_sweep_setting_that_is_not_finite_is_refused(key, value):
    from schedrl.training.sweep_file import load_sweep
    from schedrl.training.yaml_reader import SweepError

    sweep = REPO / "tune_configs" / "linear_example.yaml"
    load_sweep(sweep, [f"{key}=0"])  # a float setting of the linear agent
    with pytest.raises(SweepError, match=f"'{key}' must be float; got"):
        load_sweep(sweep, [f"{key}={value}"])


@FEW
@given(errno=st.sampled_from([13, 28, 30, 5]), at=st.sampled_from(["create", "write"]))
def test_a_failed_write_names_the_file_asked_for_never_the_temporary_one(errno, at, tmp_path_factory, monkeypatch):
    import tempfile as tempfile_module

    from schedrl import outputs

    target = tmp_path_factory.mktemp("w") / "out.json"
    error = OSError(errno, os.strerror(errno), str(target.parent / ".out.json.x1y2.part"))
    with monkeypatch.context() as m:
        if at == "create":
            m.setattr(tempfile_module, "mkstemp", lambda **kw: (_ for _ in ()).throw(error))
        else:
            m.setattr(outputs.os, "fsync", lambda fd: (_ for _ in ()).throw(error))
        with pytest.raises(OSError) as e:
            outputs.atomic_write(target, "x")
    assert e.value.filename == str(target) and ".part" not in str(e.value)
    assert not target.exists() and not list(target.parent.glob(".out.json.*"))


@FEW
@given(page=st.sampled_from(["docs/leaderboard.md", "docs/zoo.md"]), text=st.text(min_size=1, max_size=20))
def test_publish_refuses_a_recorded_page_edited_since_before_scoring(page, text, rendered):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "checkout"
        shutil.copytree(rendered, root)
        (root / page).write_text((root / page).read_text() + text)
        before = tree(root)
        refused(["leaderboard", "--publish", str(root)], page, "edited since schedrl wrote it")
        assert tree(root) == before
