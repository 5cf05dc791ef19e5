"""The DAgger warm start of RLSchert (`schedrl/agents/rlschert/warm_start.py`) and DeepRM's settings."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from rlschert_cases import small_config, small_table

from schedrl.agents import get_agent
from schedrl.agents.base import AgentOptions
from schedrl.agents.rlschert.env import RLSchertEnv
from schedrl.agents.rlschert.evaluation import run_sequences, validation_seeds
from schedrl.agents.rlschert.keys import OBS_IMAGE
from schedrl.agents.rlschert.settings import (
    NO_IMITATION, RLSCHERT_IMITATION, DeepRMSettings, RLSchertSettings, imitation_weight,
)
from schedrl.agents.rlschert.warm_start import Demonstrations, dagger, rollouts
from schedrl.dtsim.heuristics import make_policy


def test_teacher_rollouts_record_the_teachers_actions_and_discounted_returns():
    env = RLSchertEnv(small_config(), table=small_table())
    demos = Demonstrations()
    stats = rollouts(env, demos, episodes=3, seed=7, gamma=0.9)
    obs, labels, returns = demos.arrays()
    assert stats.episodes == 3 and stats.cut == 0 and len(stats.values) == 3 and stats.agreement == 1.0
    assert len(labels) == stats.decisions == len(returns) == len(obs[OBS_IMAGE])
    assert obs[OBS_IMAGE].dtype == np.uint8 and set(np.unique(obs[OBS_IMAGE])) <= {0, 1}
    assert "teacher" not in obs
    # replaying the labels on the same sequences gives the same episodes, and the returns are the discounted sums
    replay_env = RLSchertEnv(small_config(), table=small_table())
    i = 0
    for e in range(3):
        replay_env.reset(seed=7 + e)
        rewards = []
        while True:
            _, reward, term, trunc, info = replay_env.step(int(labels[i + len(rewards)]))
            rewards.append(reward)
            if term or trunc:
                break
        expected = [sum(r * 0.9 ** k for k, r in enumerate(rewards[t:])) for t in range(len(rewards))]
        np.testing.assert_allclose(returns[i:i + len(rewards)], expected, rtol=1e-5)
        assert info["metric_value"] == pytest.approx(stats.values[e])
        i += len(rewards)
    assert i == len(labels)


def _module(env: RLSchertEnv):
    from schedrl.agents.rlschert.modules import module_spec

    spec = module_spec("mlp")
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    return spec.build()


@pytest.mark.integration  # a training (DAgger)
def test_dagger_clones_the_teacher_closer_than_plain_cloning():
    """On the small cluster the teacher is SAF with the kill rule; a DAgger-cloned greedy policy must agree with
    it on almost every state the clone itself reaches and schedule held-out sequences better than Random."""
    pytest.importorskip("torch")
    config = small_config()
    env = RLSchertEnv(config, table=small_table())
    module = _module(env)
    report = dagger(module, env, {"episodes": 16, "rounds": 2, "round_episodes": 8, "epochs": 20, "round_epochs": 10,
                                  "seed": 0, "gamma": 0.99})
    assert report["teacher"] == "kill rule + SAF"
    assert len(report["rounds"]) == 2 and report["episodes"] == 16 + 2 * 8
    assert report["agreement"] > 0.9 > report["agreement_before"]
    assert report["rounds"][-1]["agreement"] > 0.85
    seeds = validation_seeds(12, seed=3)
    agent = get_agent("rlschert")
    table = small_table()
    learned = [s["slowdown"] for s in run_sequences(lambda i: agent.policy_from_module(module, config.to_dict()),
                                                    config, seeds, table)]
    random = [s["slowdown"] for s in run_sequences(lambda i: make_policy("random", seed=i), config, seeds, table)]
    assert np.mean(learned) < np.mean(random), (np.mean(learned), np.mean(random))


def _args(name: str, *argv: str) -> AgentOptions:
    agent = get_agent(name)
    p = argparse.ArgumentParser()
    agent.add_arguments(p)
    return AgentOptions.of(p.parse_args(list(argv)))


def test_train_announces_the_silent_warm_start_only_when_there_is_one():
    rlschert = get_agent("rlschert")
    args = _args("rlschert", "--warm-start-rounds", "2")
    rlschert.configure(args)
    assert args.notes[0].startswith("warm start: DAgger of the kill rule + SAF (32 teacher sequences, then 2 "
                                         "rounds of 16) before the first iteration")
    args = _args("rlschert", "--no-kill")
    rlschert.configure(args)
    assert args.notes[0].startswith("warm start: DAgger of SAF (32 teacher sequences, then 4 rounds")
    for name, argv in (("rlschert", ("--no-warm-start",)), ("deeprm", ())):
        args = _args(name, *argv)
        get_agent(name).configure(args)
        assert args.notes == ()


def test_warm_start_is_rlscherts_default_and_never_deeprms():
    rlschert, deeprm = get_agent("rlschert"), get_agent("deeprm")
    _, on = rlschert.configure(_args("rlschert"))
    _, off = rlschert.configure(_args("rlschert", "--no-warm-start"))
    _, rounds = rlschert.configure(_args("rlschert", "--warm-start-rounds", "2"))
    assert on.warm_start and on.warm_start_spec()["rounds"] == 4 and on.imitation_schedule == RLSCHERT_IMITATION
    assert off.warm_start_spec() is None and rounds.warm_start_spec()["rounds"] == 2
    _, baseline = deeprm.configure(_args("deeprm"))
    assert isinstance(baseline, DeepRMSettings) and not baseline.warm_start
    assert baseline.imitation_schedule == NO_IMITATION
    # a sweep file builds settings from a dict: DeepRM's defaults hold there too
    from_yaml = deeprm.settings_from_dict({"lr": 3e-4})
    assert from_yaml.imitation_schedule == NO_IMITATION and not from_yaml.warm_start
    assert rlschert.settings_from_dict({}).warm_start
    with pytest.raises(SystemExit):
        _args("deeprm", "--imitation-steps", "100")  # DeepRM has no imitation term to anneal
    _, floored = rlschert.configure(_args("rlschert", "--imitation-floor", "0.1"))
    assert floored.imitation_schedule == ((0, 0.5), (RLSCHERT_IMITATION[-1][0], 0.1))
    _, longer = rlschert.configure(_args("rlschert", "--imitation-steps", "1000", "--imitation-floor", "0.05"))
    assert longer.imitation_schedule == ((0, 0.5), (1000, 0.05))
    assert imitation_weight(longer.imitation_schedule, 10**9) == 0.05  # the floor holds to the end
    for bad, match in ((("--imitation-floor", "0.7"), r"must be in \[0, 0.5\]"),
                       (("--imitation-steps", "0", "--imitation-floor", "0.1"), "cannot have --imitation-floor")):
        with pytest.raises(ValueError, match=match):
            rlschert.configure(_args("rlschert", *bad))
    with pytest.raises(ValueError, match="warm_start_rounds"):
        RLSchertSettings(warm_start_rounds=-1)
    _, undiscounted = rlschert.configure(_args("rlschert", "--gamma", "1.0"))
    assert undiscounted.gamma == 1.0 and on.gamma == 0.99
    _, per_step = rlschert.configure(_args("rlschert", "--discount", "time"))
    assert per_step.discount == "time" and on.discount == "decision"
    with pytest.raises(ValueError, match=r"gamma=1.5 must be in \[0, 1\]"):
        rlschert.configure(_args("rlschert", "--gamma", "1.5"))


def test_warm_start_reaches_the_learner_config():
    from schedrl.agents.rlschert.settings import WARM_START_KEY

    agent = get_agent("rlschert")
    env, settings = agent.configure(_args("rlschert", "--no-kill", "--jobs", "synthetic"))
    config = agent.algorithm_config(env, settings)
    assert config.learner_config_dict[WARM_START_KEY] == settings.warm_start_spec()
    env, settings = agent.configure(_args("rlschert", "--no-warm-start", "--jobs", "synthetic"))
    assert agent.algorithm_config(env, settings).learner_config_dict[WARM_START_KEY] is None


def test_the_progress_line_reports_the_dagger_rounds():
    from schedrl.training.callbacks import describe_warm_start, loggable

    report = {"teacher": "SAF", "candidates": {}, "decisions": 61062, "episodes": 96,
              "demonstration_seconds": 0.0, "clone_seconds": 159.2, "agreement": 0.978,
              "agreement_before": 0.202, "teacher_value": 10.04,
              "rounds": [{"slowdown": 11.93, "cut": 3}, {"slowdown": 10.47, "cut": 0}]}
    # in Tune's result the rounds are a dict keyed by round (its loggers take no lists); the line is the same
    logged = loggable(report)
    assert logged["rounds"] == {"1": {"slowdown": 11.93, "cut": 3}, "2": {"slowdown": 10.47, "cut": 0}}
    assert {k: v for k, v in logged.items() if k != "rounds"} == {k: v for k, v in report.items() if k != "rounds"}
    line = describe_warm_start(report)
    assert describe_warm_start(logged) == line
    assert line == ("warm start: cloned SAF with 2 DAgger rounds (the clone's own sequences: average 11.93 -> 10.47, "
                    "3 cut) from 61062 decisions of 96 training sequences in 159 s: greedy agreement 97.8% "
                    "(untrained 20.2%), teacher's mean value 10.04")
