"""Env-runner placement and fault tolerance as configured (no cluster needed): settings, builder, CLI."""

from __future__ import annotations

import pytest

from schedrl.agents.rlscheduler.ppo import PPOSettings, build_ppo_config
from schedrl.training.single import parse_runner_resources

ENV = "schedrl/RLScheduler-v0"


def test_runner_resources_reach_rllib_and_the_trial_placement_group():
    settings = PPOSettings(num_env_runners=2, env_runner_resources={"worker_node": 0.5})
    config = build_ppo_config(settings, ENV, {}, vector_entry_point=True)
    assert config.custom_resources_per_env_runner == {"worker_node": 0.5}
    # what Tune reserves for the trial: the driver's bundle, then one bundle per env runner
    bundles = config.algo_class.default_resource_request(config).bundles
    assert bundles == [{"CPU": 1.0}, {"CPU": 1.0, "worker_node": 0.5}, {"CPU": 1.0, "worker_node": 0.5}]


def test_defaults_restart_env_runners_a_bounded_number_of_times():
    settings = PPOSettings()
    assert settings.env_runner_resources is None
    config = build_ppo_config(settings, ENV, {})
    assert config.custom_resources_per_env_runner == {}
    assert config.restart_failed_env_runners is True
    assert config.max_num_env_runner_restarts == settings.max_env_runner_restarts == 10


def test_restarts_can_be_switched_off():
    config = build_ppo_config(PPOSettings(restart_failed_env_runners=False, max_env_runner_restarts=0), ENV, {})
    assert config.restart_failed_env_runners is False and config.max_num_env_runner_restarts == 0


@pytest.mark.parametrize("resources, message", [
    ({"CPU": 1}, r"name 'CPU' must be a custom resource name"),
    ({"worker_node": 0}, r"env_runner_resources\['worker_node'\]=0 must be a number > 0"),
    ({"": 1}, r"name '' must be a custom resource name"),
])
def test_invalid_runner_resources_are_rejected(resources, message):
    with pytest.raises(ValueError, match=message):
        PPOSettings(env_runner_resources=resources)


def test_negative_restart_bound_is_rejected():
    with pytest.raises(ValueError, match="max_env_runner_restarts=-1 must be >= 0"):
        PPOSettings(max_env_runner_restarts=-1)


def test_cli_parses_runner_resources():
    assert parse_runner_resources([]) is None
    assert parse_runner_resources(["worker_node=0.5", "ssd = 2"]) == {"worker_node": 0.5, "ssd": 2.0}


@pytest.mark.parametrize("item", ["worker_node", "worker_node=", "=1", "worker_node=half"])
def test_cli_rejects_malformed_runner_resources(item):
    with pytest.raises(ValueError, match=r"--runner-resource must look like NAME=AMOUNT"):
        parse_runner_resources([item])


def test_training_fails_once_no_env_runner_can_come_back(ray_session):
    import os
    import signal

    from schedrl.agents.rlscheduler.env import RLSchedulerEnv

    settings = PPOSettings(num_env_runners=1, num_envs_per_env_runner=1, train_batch_size_per_learner=64,
                           num_epochs=1, max_env_runner_restarts=0)
    from schedrl.training.callbacks import SchedulingMetricsCallback

    # the callbacks the training driver adds to every agent's config
    config = build_ppo_config(settings, RLSchedulerEnv, {"trace": "default", "sequence_length": 16})
    algo = config.callbacks(SchedulingMetricsCallback).build_algo()
    try:
        algo.train()
        (pid,) = algo.env_runner_group.foreach_env_runner(lambda runner: os.getpid(), local_env_runner=False)
        os.kill(pid, signal.SIGKILL)
        # RLlib alone would go on training on nothing; the driver's on_train_result check stops it
        with pytest.raises(RuntimeError, match=r"all 1 env runners died and cannot be restarted"):
            for _ in range(3):
                algo.train()
    finally:
        algo.stop()
