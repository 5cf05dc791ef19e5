"""A short `schedrl train rlscheduler` run reproduces its recorded evaluation table to 1e-9.

Pins training end to end (data split, seeding, PPO updates, checkpoint selection, the final table) before
refactors of the agent contract and the CLI. The expected table is `expected/training_rlscheduler.json`;
regenerate it only for an intended numerical change (`python tests/regression/make_fixtures.py --training`).
Everything that otherwise follows the machine (`machine_defaults`: env runners, overlap sampling, validation
frequency; torch threads: `--trial-cpus`) is pinned, so the numbers do not depend on the core count; sampling
runs in the trainer. 30-45 s on 2 cores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixture_modules import assert_same

EXPECTED = Path(__file__).parent / "expected" / "training_rlscheduler.json"
TRAIN_ARGS = ("train", "rlscheduler", "--trace", "default", "--iterations", "2", "--seed", "0",
              "--num-env-runners", "0", "--envs-per-runner", "1", "--no-overlap-sampling", "--trial-cpus", "1",
              "--no-filtering", "--warm-start", "none", "--validate-every", "1", "--keep-checkpoints", "1",
              "--batch-size", "512", "--sequence-length", "64", "--epochs", "2", "--minibatch-size", "256",
              "--validation-sequences", "2", "--validation-jobs", "64", "--eval-sequences", "2", "--eval-jobs", "128")
"""Tiny settings: two PPO iterations of 512 steps, both validated, the final table on 2 sequences of 128 jobs."""


def train(out: Path) -> dict:
    """Run `schedrl train` with `TRAIN_ARGS` into `out` (a subprocess, as a user runs it); its evaluation.json."""
    done = subprocess.run([sys.executable, "-m", "schedrl", *TRAIN_ARGS, "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((out / "evaluation.json").read_text())


@pytest.mark.integration  # a training
def test_short_training_reproduces_its_evaluation_table(tmp_path):
    assert_same(train(tmp_path / "run"), json.loads(EXPECTED.read_text()))
