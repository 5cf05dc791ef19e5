"""`schedrl train rlscheduler` with no PPO options: settings sized for the machine, said on stderr and
recorded with the run; `--paper-defaults` keeps the paper's configuration; options given always win."""

from __future__ import annotations

import pytest

from schedrl.agents.rlscheduler.agent import machine_defaults
from schedrl.agents.rlscheduler.settings import PPOSettings
from schedrl.cli.main import build_parser
from schedrl.cli.train import build_spec


def spec_of(*options: str, cores: int = 2, monkeypatch=None, with_args: bool = False, env: bool = False):
    if monkeypatch is not None:
        monkeypatch.setattr("os.cpu_count", lambda: cores)
    argv = ["rlscheduler", "--out", "x", *options]
    args = build_parser("train").parse_args(["train", *argv])
    args.argv = argv
    spec = build_spec(args)
    if env:
        return spec.env
    return (spec.settings, args) if with_args else spec.settings


def test_no_options_on_two_cores_gives_the_documented_two_core_settings(monkeypatch):
    settings, args = spec_of(monkeypatch=monkeypatch, with_args=True)
    assert (settings.train_batch_size_per_learner, settings.num_epochs, settings.minibatch_size) == (8192, 10, 2048)
    assert (settings.num_env_runners, settings.num_envs_per_env_runner) == (0, 16)
    # what the paper fixes stays the paper's
    paper = PPOSettings()
    assert (settings.lr, settings.vf_lr, settings.target_kl, settings.gamma) == (paper.lr, paper.vf_lr, paper.target_kl,
                                                                                  paper.gamma)
    assert args.settings_note.startswith("settings for this machine (2 cores): --batch-size 8192")
    # our additions: a warm start from the best heuristic, and evaluation on jobs training never saw
    assert settings.warm_start == "auto" and "--warm-start auto --train-fraction 0.7" in args.settings_note
    assert spec_of(monkeypatch=monkeypatch, env=True).train_fraction == 0.7


def test_more_cores_add_env_runners():
    assert machine_defaults(2)["--num-env-runners"] == 0
    assert machine_defaults(8)["--num-env-runners"] == 4
    assert machine_defaults(64)["--num-env-runners"] == 8


def test_paper_defaults_are_the_papers_configuration(monkeypatch):
    settings, args = spec_of("--paper-defaults", monkeypatch=monkeypatch, with_args=True)
    paper = PPOSettings()
    assert (settings.train_batch_size_per_learner, settings.num_epochs, settings.minibatch_size) == \
           (paper.train_batch_size_per_learner, paper.num_epochs, paper.minibatch_size) == (25_600, 80, None)
    assert getattr(args, "settings_note", None) is None
    assert settings.warm_start is None  # random initial weights
    assert spec_of("--paper-defaults", monkeypatch=monkeypatch, env=True).train_fraction == 1.0  # the whole trace


@pytest.mark.parametrize("options, field, value", [
    (("--epochs", "3"), "num_epochs", 3),
    (("--envs-per-runner", "2"), "num_envs_per_env_runner", 2),
    (("--batch-size", "512"), "minibatch_size", 512),  # a small batch keeps whole-batch minibatches
    (("--batch-size", "512", "--minibatch-size", "128"), "minibatch_size", 128),
    (("--warm-start", "none"), "warm_start", None),
    (("--warm-start", "F1"), "warm_start", "f1"),
])
def test_options_given_win_over_the_machine_defaults(monkeypatch, options, field, value):
    assert getattr(spec_of(*options, monkeypatch=monkeypatch), field) == value
