"""`schedrl train rlscheduler` with no PPO options: settings sized for the machine, said on stderr and
recorded with the run; `--paper-defaults` keeps the paper's configuration; options given always win."""

from __future__ import annotations

import pytest

from schedrl.agents.rlscheduler.agent import machine_defaults
from schedrl.agents.rlscheduler.settings import PPOSettings
from schedrl.cli.main import build_parser, explicit_dests
from schedrl.cli.train import build_plan


def plan_of(*options: str):
    """`schedrl train rlscheduler --out x OPTIONS`'s plan, parsed as `schedrl.cli.main.main` parses it."""
    argv = ["train", "rlscheduler", "--out", "x", *options]
    parser = build_parser("train")
    args = parser.parse_args(argv)
    args.argv, args.explicit = argv[1:], explicit_dests(parser, argv)
    return build_plan(args), args


def spec_of(*options: str, cores: int = 2, monkeypatch=None, with_args: bool = False, env: bool = False):
    """The spec's settings (with the options the agent was configured with: `with_args`), or its env config."""
    if monkeypatch is not None:
        monkeypatch.setattr("os.cpu_count", lambda: cores)
    plan, args = plan_of(*options)
    if env:
        return plan.spec.env
    return (plan.spec.settings, plan) if with_args else plan.spec.settings


def note(plan) -> str | None:
    """The agent's note (the machine-sized settings), which `schedrl train` prints first."""
    return plan.options.notes[0] if plan.options.notes else None


def test_no_options_on_two_cores_gives_the_documented_two_core_settings(monkeypatch):
    settings, plan = spec_of(monkeypatch=monkeypatch, with_args=True)
    assert (settings.train_batch_size_per_learner, settings.num_epochs, settings.minibatch_size) == (8192, 2, 512)
    assert (settings.num_env_runners, settings.num_envs_per_env_runner, settings.overlap_sampling) == (1, 64, True)
    # what the paper fixes stays the paper's
    paper = PPOSettings()
    assert (settings.lr, settings.vf_lr, settings.target_kl, settings.gamma) == (paper.lr, paper.vf_lr, paper.target_kl,
                                                                                  paper.gamma)
    assert note(plan).startswith("settings for this machine (2 cores): --batch-size 8192 --epochs 2 "
                                         "--minibatch-size 512 --envs-per-runner 64 --num-env-runners 1 "
                                         "--overlap-sampling --validate-every 4")
    assert plan.spec.training.validate_every == 4
    assert plan.options.validate_every == 1  # what the agent was given; it sized its own copy
    # our additions: a warm start from the best heuristic, and evaluation on jobs training never saw
    assert settings.warm_start == "auto" and "--warm-start auto --train-fraction 0.7" in note(plan)
    assert spec_of(monkeypatch=monkeypatch, env=True).train_fraction == 0.7


def test_more_cores_add_env_runners():
    assert machine_defaults(2)["--num-env-runners"] == 1
    assert machine_defaults(8)["--num-env-runners"] == 4
    assert machine_defaults(64)["--num-env-runners"] == 8


def test_paper_defaults_are_the_papers_configuration(monkeypatch):
    settings, plan = spec_of("--paper-defaults", monkeypatch=monkeypatch, with_args=True)
    paper = PPOSettings()
    assert (settings.train_batch_size_per_learner, settings.num_epochs, settings.minibatch_size) == \
           (paper.train_batch_size_per_learner, paper.num_epochs, paper.minibatch_size) == (25_600, 80, None)
    assert note(plan) is None
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


def resources_of(*options: str, monkeypatch, cores: int = 2, ray_address: str | None = None):
    monkeypatch.setattr("ray.is_initialized", lambda: False)  # as a run that starts its own Ray instance
    if ray_address is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", ray_address)
    monkeypatch.setattr("os.cpu_count", lambda: cores)
    plan, _ = plan_of(*options)
    return plan.spec.resources, plan


def test_the_training_process_gets_the_cores_the_env_runners_leave(monkeypatch):
    resources, plan = resources_of(monkeypatch=monkeypatch)
    assert resources.cpus_for_main_process == 1 and plan.auto_trial_cpus == 1  # the default env runner has the other
    assert plan.notes[-1] == ("the training process reserves 1 CPU(s) (its learner's torch threads; "
                              "--trial-cpus N to change, e.g. 1 each for two runs side by side)")
    assert resources_of("--num-env-runners", "0", monkeypatch=monkeypatch)[0].cpus_for_main_process == 2
    assert resources_of("--num-env-runners", "1", monkeypatch=monkeypatch)[0].cpus_for_main_process == 1
    assert resources_of("--num-env-runners", "3", monkeypatch=monkeypatch, cores=8)[0].cpus_for_main_process == 5
    assert resources_of("--num-env-runners", "4", monkeypatch=monkeypatch)[0].cpus_for_main_process == 1  # at least 1


def test_under_ray_address_or_when_given_the_training_process_cpus_are_not_guessed(monkeypatch):
    assert resources_of(monkeypatch=monkeypatch, cores=16, ray_address="auto")[0].cpus_for_main_process == 1
    resources, plan = resources_of("--trial-cpus", "3", monkeypatch=monkeypatch)
    assert resources.cpus_for_main_process == 3 and plan.auto_trial_cpus is None
    with pytest.raises(ValueError, match="--trial-cpus must be >= 1"):
        resources_of("--trial-cpus", "0", monkeypatch=monkeypatch)


def test_a_running_ray_instance_caps_the_training_process_cpus(monkeypatch):
    from schedrl.training.single import default_trial_cpus

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 64)
    monkeypatch.setattr("ray.is_initialized", lambda: True)
    monkeypatch.setattr("ray.cluster_resources", lambda: {"CPU": 2.0})
    assert default_trial_cpus(0) == 2 and default_trial_cpus(1) == 1


def test_resume_keeps_the_cpus_the_run_was_started_with(monkeypatch, tmp_path):
    import json

    from schedrl.cli.train import recorded_args

    (tmp_path / "sweep.json").write_text(json.dumps({
        "train_args": ["rlscheduler", "--out", str(tmp_path), "--iterations", "2"],
        "spec": {"resources": {"cpus_for_main_process": 1.0}}}))
    args = build_parser("train").parse_args(["train", "rlscheduler", "--out", str(tmp_path), "--resume"])
    args.argv = ["rlscheduler", "--out", str(tmp_path), "--resume"]
    assert recorded_args(args).trial_cpus == 1  # a run from before --trial-cpus, resumed on a bigger machine


def test_without_env_runners_nothing_overlaps(monkeypatch):
    # sampling in the training process: the default overlap is dropped, and asking for it is an error
    settings, plan = spec_of("--num-env-runners", "0", monkeypatch=monkeypatch, with_args=True)
    assert settings.num_env_runners == 0 and not settings.overlap_sampling
    assert "--overlap-sampling" not in note(plan)
    with pytest.raises(ValueError, match="overlap_sampling needs num_env_runners >= 1"):
        spec_of("--num-env-runners", "0", "--overlap-sampling", monkeypatch=monkeypatch)


def test_validate_every_given_wins(monkeypatch):
    _, plan = spec_of("--validate-every", "1", monkeypatch=monkeypatch, with_args=True)
    assert plan.spec.training.validate_every == 1 and "--validate-every" not in note(plan)


def test_no_overlap_sampling_given_wins(monkeypatch):
    settings, plan = spec_of("--no-overlap-sampling", monkeypatch=monkeypatch, with_args=True)
    assert settings.num_env_runners == 1 and not settings.overlap_sampling
    assert "--overlap-sampling" not in note(plan)


def test_validation_share_reaches_the_env_config(monkeypatch):
    assert spec_of(monkeypatch=monkeypatch, env=True).validation_share == 0.25
    env = spec_of("--train-fraction", "0.6", "--validation-share", "0.5", monkeypatch=monkeypatch, env=True)
    assert (env.train_fraction, env.validation_share) == (0.6, 0.5)


def test_the_parsed_options_are_never_changed(monkeypatch):
    # the machine defaults, the runner resources and the CPUs go into the plan, not onto the parsed namespace
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    argv = ["train", "rlscheduler", "--out", "x", "--scenario", "default"]
    parser = build_parser("train")
    args = parser.parse_args(argv)
    args.argv, args.explicit = argv[1:], explicit_dests(parser, argv)
    before = dict(vars(args))
    plan = build_plan(args)
    assert vars(args) == before
    assert plan.spec.training.validate_every == 4 and plan.options.runner_resources is None
    # the scenario's values in place of the parser's defaults (`Scenario.agent_options`)
    assert (plan.options.eval_sequences, plan.options.train_fraction) == (11, 0.6) != (args.eval_sequences,
                                                                                       args.train_fraction)


def test_an_abbreviated_option_wins_over_the_machine_defaults(monkeypatch):
    # `given` is the parser's (`explicit_dests`): `--epoch 3` is `--epochs 3`
    assert spec_of("--epoch", "3", monkeypatch=monkeypatch).num_epochs == 3
