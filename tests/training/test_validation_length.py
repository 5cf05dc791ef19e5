"""Validation sequences as long as the final evaluation's (RLScheduler), `training.validation_jobs` /
`--validation-jobs` to choose, and the other agents' training-length default."""

from __future__ import annotations

import pytest

from schedrl.agents import get_agent
from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
from schedrl.agents.rlscheduler.env import load_env_workload
from schedrl.training.driver import validation_spec
from schedrl.training.sweep import TrainingOptions


@pytest.fixture(scope="module")
def default_trace():
    env = RLSchedulerEnvConfig(trace="default", sequence_length=256, train_fraction=0.7)
    return env, load_env_workload(env)


def test_rlscheduler_validates_on_sequences_of_the_evaluation_length(default_trace):
    env, workload = default_trace
    agent = get_agent("rlscheduler")
    lo, hi = agent.judge(env).split_range(len(workload), validation=True)
    assert hi - lo >= 1024
    assert agent.judge(env).validation_length(workload, 1024) == 1024
    assert agent.judge(env).validation_length(workload, 64) == 256  # never shorter than a training episode
    assert agent.judge(env).validation_length(workload, 10 ** 6) == (hi - lo) // 2  # half the zone: windows that differ
    spec = validation_spec(agent, env, workload, 2, 0, evaluation_jobs=1024)
    assert spec["length"] == 1024 and len(spec["starts"]) == 2
    assert all(lo <= s and s + 1024 <= hi for s in spec["starts"])
    assert validation_spec(agent, env, workload, 2, 0, jobs=300)["length"] == 300  # training.validation_jobs


@pytest.mark.parametrize("train_fraction, length", [(0.9, 500), (0.97, 256)])
def test_a_short_validation_zone_gives_different_windows_not_one_window_repeated(default_trace, train_fraction, length):
    """Lublin-1's zone is 750 jobs: 1,024-job validation made its five sequences the same 750 jobs."""
    from dataclasses import replace

    from schedrl.training.driver import describe_validation

    _, workload = default_trace
    env = RLSchedulerEnvConfig(trace="default", sequence_length=256, train_fraction=train_fraction)
    agent = get_agent("rlscheduler")
    lo, hi = agent.judge(env).split_range(len(workload), validation=True)
    assert hi - lo < 2 * 1024
    spec = validation_spec(agent, env, workload, 5, 0, evaluation_jobs=1024)
    assert spec["length"] == length == max(256, (hi - lo) // 2)
    assert len(set(spec["starts"])) == 5 and all(lo <= s and s + length <= hi for s in spec["starts"])
    line = describe_validation(agent, env, workload, spec)
    assert line == f"validation: 5 sequences of {length} jobs, starting in jobs {lo}..{hi - 1}"
    # what the old rule did: one window, five times; the line says so
    repeated = validation_spec(agent, env, workload, 5, 0, jobs=hi - lo, evaluation_jobs=1024)
    assert len(set(repeated["starts"])) == 1
    assert "only 1 distinct" in describe_validation(agent, replace(env), workload, repeated)


def test_generated_validation_sequences_are_described_by_their_seeds():
    from schedrl.training.driver import describe_validation

    agent = get_agent("rlschert")
    line = describe_validation(agent, agent.env_config_class(), None, {"starts": [10000, 10001, 10002], "length": 70})
    assert line == "validation: 3 generated sequences of about 70 jobs (seeds 10000..10002)"


def test_other_agents_keep_their_training_length():
    for name in ("dras-pg", "dras-dql", "decima-pg", "mrsch", "mrsch-scalar", "linear", "rlschert", "deeprm"):
        agent = get_agent(name)
        judge = agent.judge(agent.env_config_class())
        assert judge.validation_length(None, 1024) == judge.sequence_length, name


def test_validation_jobs_is_checked():
    with pytest.raises(ValueError, match="validation_jobs=0 must be >= 1"):
        TrainingOptions(validation_jobs=0)
    from schedrl.cli.main import build_parser
    from schedrl.cli.train import build_spec

    argv = ["rlscheduler", "--out", "x", "--validation-jobs", "0"]
    args = build_parser("train").parse_args(["train", *argv])
    args.argv = argv
    with pytest.raises(ValueError, match="--validation-jobs must be >= 1"):
        build_spec(args)
    argv = ["rlscheduler", "--out", "x", "--validation-jobs", "512"]
    args = build_parser("train").parse_args(["train", *argv])
    args.argv = argv
    assert build_spec(args).training.validation_jobs == 512
