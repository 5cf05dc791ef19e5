"""Issue 47 class 1: where output goes (`schedrl.outputs`), on generated file-system states.

`claim` is checked against an oracle written from the rules alone: for a generated output (a file, a figure or a
directory; absent, present and schedrl's, present and changed since, foreign, of the wrong kind, under a missing or
a file parent) and inputs that may be the same path, with or without `--force`, the helper accepts exactly when the
rules say so, refuses in one line naming the option, and changes nothing on disk while checking. Then commands that
write run on generated paths: they succeed or are refused in one `error:` line, and never change an input or a file
schedrl did not write (without --force).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from harness import assert_clean_outcome, run_cli
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedrl.outputs import MARKER, In, Out, OutputError, atomic_write, claim, writing

STATES = ("absent", "absent-parent", "parent-is-file", "foreign-file", "owned-file", "owned-file-changed",
          "empty-dir", "foreign-dir", "own-dir", "other-command-dir", "signature-dir")


def snapshot(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        out[str(path.relative_to(root))] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def make_state(root: Path, state: str, name: str) -> Path:
    """The output path `name` in the given state under `root`."""
    target = root / "out" / name
    (root / "out").mkdir()
    if state == "absent-parent":
        return root / "missing" / name
    if state == "parent-is-file":
        (root / "afile").write_text("x")
        return root / "afile" / name
    if state == "foreign-file":
        target.write_text("the user's")
    elif state in ("owned-file", "owned-file-changed"):
        claim("simulate", [Out("--plot", target)]).write(target, "schedrl's")
        if state == "owned-file-changed":
            target.write_text("edited by the user")
    elif state.endswith("dir"):
        target.mkdir()
        if state == "foreign-dir":
            (target / "summary.json").write_text("{}")
        elif state in ("own-dir", "other-command-dir"):
            command = "cmd" if state == "own-dir" else "other"
            (target / MARKER).write_text('{"schedrl": 1, "directory": "%s", "files": {}}' % command)
            (target / "results.json").write_text("{}")
        elif state == "signature-dir":
            (target / "sweep.json").write_text("{}")
            (target / "trial").mkdir()
    return target


def expected(state: str, kind: str, suffix: str, plot: bool, force: bool, same_as_input: bool) -> str:
    """The oracle: 'ok' or the reason a refusal gives."""
    if same_as_input:
        return "input"
    if state == "absent-parent":
        return "ok" if kind == "dir" else "parent"
    if state == "parent-is-file":
        return "parent"
    is_dir = state.endswith("dir")
    exists = state not in ("absent",)
    if kind == "file":
        if is_dir:
            return "kind"
        if plot and suffix and suffix not in (".png", ".pdf", ".svg"):
            return "format"
        if exists and state != "owned-file" and not force:
            return "foreign"
        return "ok"
    if exists and not is_dir:
        return "kind"
    if state in ("foreign-dir", "other-command-dir") and not force:
        return "foreign"
    return "ok"


REASONS = {"input": "is also", "parent": "director", "kind": ("is a directory", "is a file"),
           "format": "cannot write", "foreign": ("did not write", "did not write")}


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(state=st.sampled_from(STATES), kind=st.sampled_from(["file", "dir"]),
       suffix=st.sampled_from([".png", ".pdf", ".svg", ".xyz", ""]), plot=st.booleans(), force=st.booleans(),
       same=st.booleans())
def test_claim_accepts_exactly_what_the_rules_allow_and_touches_nothing(state, kind, suffix, plot, force, same):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        target = make_state(root, state, "target" + (suffix if kind == "file" else ""))
        source = root / "input.txt"
        source.write_text("input")
        inputs = [In("--slurm", target if same else source)]
        before = snapshot(root)
        want = expected(state, kind, suffix if kind == "file" else "", plot and kind == "file", force, same)
        try:
            claim("cmd", [Out("--out", target, kind, plot=plot and kind == "file", signature=("sweep.json",))],
                  inputs, force=force)
            got = "ok"
        except OutputError as e:
            got = str(e)
        assert snapshot(root) == before  # checking writes nothing
    event(f"{state} {kind}: {want}")
    if want == "ok":
        assert got == "ok", (state, kind, suffix, plot, force, same, got)
    else:
        assert got != "ok", (state, kind, suffix, plot, force, same, want)
        assert got.startswith("--out ") and "\n" not in got
        reasons = REASONS[want]
        assert any(r in got for r in ((reasons,) if isinstance(reasons, str) else reasons)), (want, got)


def sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


NAMES = ["a.swf", "b.swf.gz", "log.txt", "map.json", "fig.png", "new.png", "sub/new.pdf", "fig.xyz", "sub", "sub/x.swf",
         "nodir/x.swf", "."]


@st.composite
def writing_commands(draw) -> list[str]:
    out = draw(st.sampled_from(NAMES))
    kind = draw(st.sampled_from(["generate", "import", "simulate"]))
    force = ["--force"] if draw(st.integers(0, 3)) == 0 else []
    if kind == "generate":
        return ["traces", "generate", "lublin", "--jobs", "5", "--out", out, *force]
    if kind == "simulate":
        return ["simulate", "--trace", "default", "--policy", "fcfs", "--jobs", "20", "--plot", out, *force]
    source = draw(st.sampled_from(["log.txt", "map.json", "a.swf"]))
    names = draw(st.sampled_from([["--salt", "s"], ["--id-map", "map.json"], ["--id-map", out]]))
    return ["traces", "import", "--slurm", source, "--procs", "4", *names, "--out", out, *force]


SACCT = ("JobID|JobIDRaw|User|Group|Account|Partition|Submit|Eligible|Start|End|Elapsed|Timelimit|ReqCPUS|AllocCPUS|"
         "ReqNodes|AllocNodes|ReqMem|State|ExitCode|Priority\n"
         "1|1|alice|g|acct|p|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|2024-01-01T00:11:00|"
         "00:10:00|01:00:00|2|2|1|1|1G|COMPLETED|0:0|100\n")


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(argv=writing_commands(), owned_first=st.booleans())
def test_writing_commands_never_replace_inputs_or_foreign_files(argv, owned_first):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "log.txt").write_text(SACCT)
        (root / "map.json").write_text("{}")
        (root / "a.swf").write_text("; the user's trace\n")
        (root / "fig.png").write_bytes(b"the user's figure")
        (root / "sub").mkdir()
        cwd = os.getcwd()
        os.chdir(root)
        try:
            if owned_first:  # a first run: what it writes is schedrl's, and a rerun may replace it
                run_cli(*argv)
            inputs = {a: sha(root / a) for a in argv if (root / a).is_file() and a in ("log.txt", "map.json")
                      and argv[argv.index(a) - 1] in ("--slurm",)}
            foreign = {n: sha(root / n) for n in ("a.swf", "fig.png", "log.txt")}
            status, out, err = run_cli(*argv)
        finally:
            os.chdir(cwd)
        assert_clean_outcome(status, out, err, argv)
        event(f"{argv[0]} {argv[1]}: exit {status}")
        for name, digest in inputs.items():
            assert sha(root / name) == digest, (argv, name)  # an input is never written
        if "--force" not in argv:
            for name, digest in foreign.items():
                assert sha(root / name) == digest, (argv, name, err)  # a file schedrl did not write stays
        assert not list(root.rglob("*.part")), argv  # no temporary file left behind


def test_an_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "rule.json"
    target.write_text("old")

    def broken(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["rule.json"]


def test_a_run_that_fails_before_its_first_checkpoint_leaves_no_directory(tmp_path):
    out = tmp_path / "runs" / "a"
    with pytest.raises(RuntimeError):
        with writing("train", [Out("--out", out, "dir")], keep=lambda d: (d / "checkpoint_000001").exists()):
            assert out.is_dir()
            raise RuntimeError("ray failed")
    assert not (tmp_path / "runs").exists()
    # one with a checkpoint stays, for --resume
    with pytest.raises(RuntimeError):
        with writing("train", [Out("--out", out, "dir")], keep=lambda d: bool(list(d.rglob("checkpoint_*")))):
            (out / "checkpoint_000001").mkdir()
            raise RuntimeError("ray failed later")
    assert (out / "checkpoint_000001").is_dir()
    # and the next run, or --resume, may use it: it is train's
    claim("train", [Out("--out", out, "dir")])
    with pytest.raises(OutputError, match="export"):
        claim("export", [Out("--out", out, "dir")])
    shutil.rmtree(out)


LOG_STATES = ("absent", "empty-file", "cycle-log", "cycle-log-gz", "foreign-file", "foreign-json", "directory",
              "absent-parent", "state-file")
STATE_DIR_STATES = ("absent", "empty", "adapter-files", "foreign-file", "a-file", "parent-is-file")


def make_log(root: Path, state: str, state_dir: Path) -> Path:
    """A `slurm run --log` path in the given state."""
    import gzip
    import json

    header = json.dumps({"kind": "header", "time": 0.0, "cluster": "c", "partition": "p", "policy": "sjf"}) + "\n"
    path = root / ("log.jsonl.gz" if state == "cycle-log-gz" else "log.jsonl")
    if state == "empty-file":
        path.write_text("")
    elif state == "cycle-log":
        path.write_text(header + '{"kind":"cycle","time":1.0}\n')
    elif state == "cycle-log-gz":
        with gzip.open(path, "wt") as f:
            f.write(header)
    elif state == "foreign-file":
        path.write_text("the site's accounting log\n")
    elif state == "foreign-json":
        path.write_text('{"kind": "job", "job": 1}\n')
    elif state == "directory":
        path.mkdir()
    elif state == "absent-parent":
        return root / "missing" / "log.jsonl"
    elif state == "state-file":
        return state_dir / "c.audit.jsonl"
    return path


def make_state_dir(root: Path, state: str) -> Path:
    path = root / "state"
    if state == "empty":
        path.mkdir()
    elif state == "adapter-files":
        path.mkdir()
        for name in ("c.lock", "c.state.json", "c.audit.jsonl", "c.p.shadow-report.json", "c.state.tmp123"):
            (path / name).write_text("{}")
    elif state == "foreign-file":
        path.mkdir()
        (path / "thesis.tex").write_text("years of work")
    elif state == "a-file":
        path.write_text("x")
    elif state == "parent-is-file":
        (root / "afile").write_text("x")
        return root / "afile" / "state"
    return path


def continued_expected(log: str | None, state_dir: str) -> str | None:
    """The oracle: the refusal's words, or None where the paths are accepted (the command then asks Slurm)."""
    if state_dir == "a-file":
        return "is a file; give a directory"
    if state_dir == "parent-is-file":
        return "is a file, not a directory"
    if state_dir == "foreign-file":
        return "is not an adapter's state directory"
    if log == "state-file":
        return "one of the adapter's own state files"
    if log in ("foreign-file", "foreign-json"):
        return "is not a schedrl cycle log"
    if log == "directory":
        return "is a directory; give a file name"
    if log == "absent-parent":
        return "does not exist"
    return None


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(log=st.sampled_from((None, *LOG_STATES)), state_dir=st.sampled_from(STATE_DIR_STATES),
       command=st.sampled_from(["run", "report", "reset"]))
def test_slurm_outputs_are_continued_never_replaced(log, state_dir, command):
    """`slurm run --log` appends to a cycle log and `--state-dir` keeps the adapter's files: anything else at those
    paths is refused in one line before Slurm is asked anything, and left as it was. Where the paths are accepted the
    command goes on to Slurm (here: a stand-in that refuses, so no Slurm is needed)."""
    from schedrl.slurm import client as slurm_client

    def no_slurm(*args, **kwargs):
        raise slurm_client.SlurmError("no Slurm in this test")

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(slurm_client.SlurmClient, "run", no_slurm)
        root = Path(tmp)
        state = make_state_dir(root, state_dir)
        if command == "run":
            argv = ["slurm", "run", "--policy", "sjf", "--partition", "p", "--shadow", "--cycles", "1",
                    "--state-dir", str(state)]
            if log is not None:
                argv += ["--log", str(make_log(root, log, state))]
        elif command == "report":
            argv = ["slurm", "report", str(root / "nosuch.jsonl"), "--state-dir", str(state)]
            log = None
        else:
            argv = ["slurm", "reset", "--state-dir", str(state)]
            log = None
        before = snapshot(root)
        status, out, err = run_cli(*argv)
        assert_clean_outcome(status, out, err, argv)
        words = continued_expected(log, state_dir)
        if words is not None:
            event(f"refused: {words}")
            assert status == 2 and words in err, (argv, err)
        else:
            event("accepted: on to Slurm")
            assert "--log" not in err.split("error:")[-1] and "--state-dir" not in err.split("error:")[-1], err
        assert snapshot(root) == before, argv
