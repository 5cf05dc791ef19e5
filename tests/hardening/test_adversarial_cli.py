"""Issue 9 items 2, 3, 4, 5, 7 (fixed by the restructuring) and 12, as named cases through `schedrl`.

Each misuse ends with exit status 2 and one `error:` line saying what is wrong, never a traceback.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from checkpoint_files import write_checkpoint
from harness import assert_clean_outcome, run_cli

from schedrl.agents.checkpoint import MODULE_SUBPATH

TRAIN = ("train", "rlscheduler", "--trace", "default")


def refused(argv, expected: str) -> str:
    """Run `schedrl ARGV`, require a clean refusal whose `error:` line matches `expected`; that line."""
    status, out, err = run_cli(*argv)
    assert_clean_outcome(status, out, err, argv)
    assert status == 2, (argv, out, err)
    line = next(line for line in err.splitlines() if "error:" in line)
    assert expected in line, line
    return line


# ------------------------------------------------------------------ item 2: sequence longer than the trace

@pytest.fixture(scope="module")
def long_sequence(tmp_path_factory) -> subprocess.CompletedProcess:
    # a subprocess: today the refusal comes after Ray has started, which takes longer than the harness allows
    out = tmp_path_factory.mktemp("long") / "run"
    return subprocess.run([sys.executable, "-m", "schedrl", *TRAIN, "--sequence-length", "50000", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.integration  # starts a subprocess
def test_train_sequence_length_longer_than_the_trace(long_sequence):
    assert long_sequence.returncode == 2, long_sequence.stderr
    assert "Traceback" not in long_sequence.stderr
    errors = [line for line in long_sequence.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and re.search(
        r"(has 40000 jobs|the 28000 jobs training draws from are) fewer than the sequence length 50000", errors[0]), errors


@pytest.mark.integration  # starts a subprocess
def test_train_sequence_length_is_refused_before_ray_starts(long_sequence):
    assert "Started a local Ray instance" not in long_sequence.stderr


# ------------------------------------------------------------------ item 3: --iterations 0 / -1

@pytest.mark.parametrize("iterations", ["0", "-1"])
def test_train_refuses_iterations_below_one(tmp_path, iterations):
    refused((*TRAIN, "--iterations", iterations, "--out", str(tmp_path / "run")),
            f"--iterations must be >= 1, got {iterations}")
    assert not (tmp_path / "run").exists()  # refused before any work


# ------------------------------------------------------------------ item 4: tune on a binary file / a directory

BINARY = {
    "not-utf8": (b"\x89PNG\r\n\x1a\n\xff\xfe binary", "not a text file (a sweep file is UTF-8 YAML)"),
    "control-bytes": (b"\x00\x01\x02 binary", "not valid YAML"),
}


@pytest.mark.parametrize("content, expected", BINARY.values(), ids=BINARY.keys())
def test_tune_on_a_binary_file(tmp_path, content, expected):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_bytes(content)
    refused(("tune", str(sweep), "--dry-run"), f"{sweep}: {expected}")


def test_tune_on_a_directory(tmp_path):
    refused(("tune", str(tmp_path), "--dry-run"), f"{tmp_path} is a directory, not a sweep file")


# ------------------------------------------------------------------ item 7: --out an existing file

def test_train_out_is_an_existing_file(tmp_path):
    out = tmp_path / "taken"
    out.write_text("mine")
    refused((*TRAIN, "--out", str(out)), f"--out {out} exists and is a file; give a directory")
    assert out.read_text() == "mine"


# ------------------------------------------------------------------ item 5: corrupt checkpoints

@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return write_checkpoint(tmp_path_factory.mktemp("ckpt") / "run")


def test_an_intact_checkpoint_evaluates(checkpoint):
    status, out, err = run_cli("simulate", "--trace", "default", "--jobs", "64", "--policy", f"checkpoint:{checkpoint}")
    assert status == 0, err


CORRUPT = {
    "state-garbage": ("module_state.pkl", b"not a pickle at all"),
    "state-truncated": ("module_state.pkl", None),
    "class-and-args-empty": ("class_and_ctor_args.pkl", b""),
    # RLlib cannot unpickle the class and falls back to a bare `RLModule` with only a log warning;
    # load_policy refuses that fallback
    "class-and-args-garbage": ("class_and_ctor_args.pkl", b"\x80\x04garbage"),
}


@pytest.mark.parametrize("name, content", list(CORRUPT.values()), ids=list(CORRUPT))
def test_evaluate_a_corrupt_checkpoint(checkpoint, tmp_path, name, content):
    run = tmp_path / "run"
    shutil.copytree(checkpoint.parent, run)
    target = run / checkpoint.name / MODULE_SUBPATH / name
    target.write_bytes(content if content is not None else target.read_bytes()[: target.stat().st_size // 2])
    line = refused(("evaluate", str(run / checkpoint.name)), str(run / checkpoint.name / MODULE_SUBPATH))
    assert "checkpoints are pickles" in line and "source you trust" in line


# ------------------------------------------------------------------ item 12: no RLlib deprecation notice on load

LOAD = """
import sys
sys.path.insert(0, {here!r})
from pathlib import Path
from checkpoint_files import write_checkpoint
from schedrl.agents.checkpoint import load_policy
checkpoint = write_checkpoint(Path({run!r}))
print("LOADING", file=sys.stderr)
policy = load_policy(checkpoint)
print(policy.name)
"""


@pytest.mark.integration  # starts a subprocess
def test_loading_a_checkpoint_prints_no_rlmodule_config_deprecation(tmp_path):
    # a fresh process: RLlib prints the notice once per process, on the first module it builds
    code = LOAD.format(here=str(Path(__file__).parent), run=str(tmp_path / "run"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "RL(checkpoint_000001)"
    assert "LOADING" in result.stderr
    assert "RLModuleConfig" not in result.stderr and "DeprecationWarning" not in result.stderr, result.stderr


@pytest.mark.integration  # starts a subprocess
def test_other_ray_deprecation_notices_still_show():
    code = ("import schedrl\nfrom ray._common.deprecation import deprecation_warning\n"
            "deprecation_warning(old='old_thing', new='new_thing')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "`old_thing` has been deprecated" in result.stderr
