"""DRAS on RLlib: PG and DQL train end to end; PG learns the hand-checked optimal two-level schedule."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from dras_workloads import LEARNING_JOBS, LEARNING_MACHINE, LEARNING_OPTIMUM, make_workload

from schedrl.agents.dras.agent import DecimaPGAgent, DRASDQLAgent, DRASPGAgent
from schedrl.agents.dras.config import DRASEnvConfig
from schedrl.agents.dras.env import DRASEnv
from schedrl.agents.dras.keys import OBS_ACTION_MASK
from schedrl.agents.dras.settings import DQLSettings, PGSettings
from schedrl.workload.swf import write_swf

LEARNING_ENV = {"window": 2, "sequence_length": 4, "starts": [0], "w1": 0.0, "w2": 0.0, "w3": 1.0}


@pytest.fixture
def learning_trace(tmp_path):
    return str(write_swf(make_workload(LEARNING_JOBS, LEARNING_MACHINE), tmp_path / "learning.swf"))


def episode_return(env: DRASEnv, actions: list[int]) -> tuple[float, bool, np.ndarray]:
    """Replay `actions` from the start: (return so far, episode over, current mask)."""
    obs, _ = env.reset(options={"start": 0})
    total, done = 0.0, False
    for a in actions:
        obs, r, done, _, _ = env.step(a)
        total += r
    return total, done, obs[OBS_ACTION_MASK]


def best_return(env: DRASEnv, prefix: list[int] | None = None) -> float:
    prefix = prefix or []
    total, done, mask = episode_return(env, prefix)
    if done:
        return total
    return max(best_return(env, prefix + [int(a)]) for a in np.flatnonzero(mask))


def test_hand_checked_optimum_of_the_learning_instance(learning_trace):
    env = DRASEnv({**LEARNING_ENV, "trace": learning_trace})
    assert best_return(env) == pytest.approx(LEARNING_OPTIMUM)
    # starting r0 first leaves x reserved with a level-2 choice; c2 beats c1 there
    assert episode_return(env, [0, 0, 1])[0] == pytest.approx(0.5 + 0.5 + 1.0)
    total, _, mask = episode_return(env, [0, 0])
    assert env.level == 2 and mask.tolist() == [1.0, 1.0]


def _agent_args(trace: str, **extra) -> argparse.Namespace:
    base = dict(trace=trace, cleaning=None, window=2, reward="capability", weights="0,0,1", priority_fraction=None,
                sequence_length=4, train_fraction=1.0, model="scaled", lr=None, num_env_runners=0, envs_per_runner=1,
                num_gpus_per_learner=0.0, seed=0, runner_resources=None, batch_size=None, decisions_per_update=None)
    return argparse.Namespace(**{**base, **extra})


@pytest.mark.parametrize("agent", [DRASPGAgent(), DRASDQLAgent(), DecimaPGAgent()], ids=lambda a: a.name)
def test_two_training_iterations(ray_session, learning_trace, agent):
    env_config, settings = agent.configure(_agent_args(learning_trace))
    if isinstance(settings, PGSettings):
        settings = PGSettings(**{**settings.__dict__, "train_batch_size_per_learner": 32, "decisions_per_update": 8})
    else:
        settings = DQLSettings(**{**settings.__dict__, "learning_starts": 8, "train_batch_size_per_learner": 8,
                                  "rollout_fragment_length": 8, "decisions_per_iteration": 32})
    prepared = agent.prepare(env_config, settings, {}, log=lambda text: None)
    assert prepared.env_config.norm and prepared.env_config.two_level == (agent.name != "decima-pg")
    algo = agent.algorithm_config(prepared.env_config, settings).build_algo()
    try:
        for _ in range(2):
            result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 64
        module = algo.get_module()
        policy = agent.policy_from_module(module, prepared.env_config.to_dict())
        from schedrl.sim import Simulator

        judge = agent.judge(prepared.env_config)
        schedule = Simulator(judge.load(), judge.sim).run(policy)
        assert (schedule.end >= 0).all()
    finally:
        algo.stop()


def test_pg_learns_the_optimal_two_level_schedule(ray_session, learning_trace):
    agent = DRASPGAgent()
    env_config = DRASEnvConfig.from_dict({**LEARNING_ENV, "trace": learning_trace})
    settings = PGSettings(lr=0.01, train_batch_size_per_learner=80, decisions_per_update=20, seed=1)
    prepared = agent.prepare(env_config, settings, {}, log=lambda text: None)
    algo = agent.algorithm_config(prepared.env_config, settings).build_algo()
    env = DRASEnv(prepared.env_config)
    policy = agent.policy_from_module(algo.get_module(), prepared.env_config.to_dict())

    def greedy_return() -> float:
        policy.module = algo.get_module()
        obs, _ = env.reset(options={"start": 0})
        total, done = 0.0, False
        while not done:
            scores = policy.scores(obs["state"], obs[OBS_ACTION_MASK], env.level)
            obs, r, done, _, _ = env.step(int(np.argmax(np.where(obs[OBS_ACTION_MASK] > 0, scores, -np.inf))))
            total += r
        return total

    rng = np.random.default_rng(0)
    random_returns = []
    for _ in range(50):
        obs, _ = env.reset(options={"start": 0})
        total, done = 0.0, False
        while not done:
            obs, r, done, _, _ = env.step(int(rng.choice(np.flatnonzero(obs[OBS_ACTION_MASK]))))
            total += r
        random_returns.append(total)
    try:
        initial = greedy_return()
        for _ in range(25):
            algo.train()
            learned = greedy_return()
            if learned == pytest.approx(LEARNING_OPTIMUM):
                break
    finally:
        algo.stop()
    assert np.mean(random_returns) < LEARNING_OPTIMUM - 0.3
    assert initial < LEARNING_OPTIMUM  # the untrained network's greedy choice is not already optimal
    assert learned == pytest.approx(LEARNING_OPTIMUM)


@pytest.mark.parametrize("agent, value, message", [
    ("dras-pg", "soon", r"--starvation-wait must look like 90s, 20m or 1\.5h"),
    ("decima-pg", "24h", r"--starvation-wait needs DRAS's reservation level; decima-pg has none"),
])
def test_bad_starvation_wait_is_one_error_line(agent, value, message, tmp_path, capsys):
    from schedrl.cli.main import main

    assert main(["train", agent, "--trace", "default", "--starvation-wait", value, "--iterations", "1",
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len([x for x in err.splitlines() if "error:" in x]) == 1, err
    assert __import__("re").search(message, err), err


def test_starvation_wait_reaches_the_env_config():
    from schedrl.cli.main import build_parser
    from schedrl.cli.train import build_spec

    spec = build_spec(build_parser("train").parse_args(["train", "dras-pg", "--starvation-wait", "1.5h", "--out", "x"]))
    assert spec.env.starvation_wait == 5400.0
