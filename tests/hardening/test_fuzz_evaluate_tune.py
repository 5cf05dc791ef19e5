"""Random `schedrl evaluate` arguments on a checkpoint, and random sweep files through `schedrl tune
--dry-run`: each run succeeds or is refused with one `error:` line, never a traceback or a hang.

The checkpoint is an untrained RLScheduler module written without training (`checkpoint_files.py`);
sweep files mix valid sections with wrong types, unknown keys, bad search spaces and non-mappings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from checkpoint_files import write_checkpoint
from harness import assert_clean_outcome, run_cli
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from test_fuzz_cli import BACKFILL, JOBS, POLICY, mostly

EXAMPLES = 60


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return write_checkpoint(tmp_path_factory.mktemp("fuzz-evaluate") / "run")


OPTIONAL = {
    "--backfill": BACKFILL,
    "--policies": st.lists(POLICY, min_size=1, max_size=2).map(",".join),
    "--sequences": mostly(["1", "2"], ["0", "-1", "100000", "x"]),
    "--jobs": JOBS,
    "--starts": mostly(["0", "0,100"], ["1999", "-1", "0,", "x"]),
    "--metric": mostly(["bsld", "wait"], ["speed"]),
    "--trace": mostly(["default"], ["no_such_trace", "/"]),
    "--cleaning": mostly(["default", "none"], ["bogus"]),
    "--augment": mostly(["S1", "S6"], ["S11", ""]),
    "--seed": mostly(["0", "5"], ["x"]),
}


@st.composite
def evaluate_args(draw, checkpoint: str) -> list[str]:
    args = ["evaluate", draw(mostly([checkpoint], ["/nonexistent/checkpoint", checkpoint + "x"]))]
    for name in draw(st.lists(st.sampled_from(sorted(OPTIONAL)), max_size=4, unique=True)):
        args += [name, draw(OPTIONAL[name])]
    if "--jobs" not in args:
        args += ["--jobs", "64"]  # keep every run small
    if "--sequences" not in args:
        args += ["--sequences", "1"]
    return args + draw(st.lists(st.sampled_from(["--json", "--markdown"]), max_size=1))


@pytest.mark.integration  # 60 evaluate runs of a network in a Python loop: 34 s at load 15 on 2 cores (issue 60)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                      HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_evaluate_arguments_run_or_are_refused_in_one_line(checkpoint, data):
    args = data.draw(evaluate_args(str(checkpoint)))
    status, out, err = run_cli(*args)
    assert_clean_outcome(status, out, err, args)
    event(f"evaluate: exit {status}")


SCALAR = st.one_of(st.integers(-3, 5000), st.floats(-1, 1e4, allow_nan=False), st.booleans(), st.none(),
                   st.sampled_from(["default", "easy", "bsld", "20m", "x", "", "kernel"]))
SEARCH = st.one_of(st.fixed_dictionaries({"grid": st.lists(SCALAR, max_size=3)}),
                   st.fixed_dictionaries({"loguniform": st.lists(SCALAR, max_size=3)}),
                   st.fixed_dictionaries({"choice": SCALAR}))
VALUE = st.one_of(SCALAR, SEARCH, st.lists(SCALAR, max_size=3))
ENV_KEYS = ["trace", "metric", "backfill", "sequence_length", "preset", "cleaning", "window", "bogus"]
PPO_KEYS = ["lr", "num_epochs", "train_batch_size_per_learner", "num_env_runners", "entropy_coeff", "learning_rate"]


def section(keys):
    return st.dictionaries(st.sampled_from(keys), VALUE, max_size=3)


SWEEP = st.fixed_dictionaries(
    {"stop": st.one_of(st.just({"iterations": 1}), st.dictionaries(st.sampled_from(["iterations", "time_budget",
                                                                                   "walltime"]), SCALAR, max_size=2))},
    optional={"agent": mostly(["rlscheduler", "linear", "dras-pg", "mrsch"], ["nobody", ""]),
              "env": section(ENV_KEYS), "ppo": section(PPO_KEYS), "pg": section(["lr", "seed"]),
              "param_space": st.dictionaries(st.sampled_from(["ppo.lr", "env.backfill", "model", "lr", "pg.lr"]),
                                             VALUE, max_size=2),
              "scheduler": st.one_of(st.sampled_from(["none", "asha", "pbt", "bogus"]),
                                     st.fixed_dictionaries({"type": st.sampled_from(["asha", "pbt"])})),
              "num_samples": SCALAR, "metric": mostly(["schedrl/validation"], ["x"]), "mode": SCALAR,
              "model": SCALAR, "resources": section(["max_concurrent_trials", "cpus_per_env_runner"]),
              "evaluate": section(["sequences", "jobs", "traces", "starts"])})


@settings(max_examples=EXAMPLES * 2, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.function_scoped_fixture])
@given(data=st.one_of(SWEEP, st.lists(SCALAR, max_size=2), SCALAR), raw=st.booleans())
def test_random_sweep_files_validate_or_are_refused_in_one_line(tmp_path, data, raw):
    path = tmp_path / "sweep.yaml"
    if raw and isinstance(data, dict):  # a corrupted copy: truncated mid-file
        text = yaml.safe_dump(data)
        path.write_text(text[: len(text) // 2] + "\n  - : [")
    else:
        path.write_text(yaml.safe_dump(data))
    status, out, err = run_cli("tune", str(path), "--dry-run")
    assert "Traceback" not in err, (data, err)
    assert status in (0, 2), (data, status, err)
    if status == 2:
        assert len([line for line in err.splitlines() if "error:" in line]) == 1, (data, err)
    event(f"tune --dry-run: exit {status}")
