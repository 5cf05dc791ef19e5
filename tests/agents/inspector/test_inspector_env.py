"""The inspector's env: a rejection skips to the next event, a point with nothing to wait for is masked, accepting
everything reproduces the base heuristic exactly, the reward is relative to the base's cached value; bad input is one
clear error."""

from __future__ import annotations

import numpy as np
import pytest

import base_rule_cases
from base_rule_cases import OFFSET, block_then_burst, make_workload, write_swf
from schedrl.agents.inspector.config import InspectorEnvConfig, make_base
from schedrl.agents.inspector.env import ACCEPT, REJECT, InspectorEnv
from schedrl.agents.inspector.observation import FEATURES
from schedrl.metrics import summarize
from schedrl.sim import Simulator
from schedrl.workload.sampling import sequence


def env_on(workload, **config) -> InspectorEnv:
    return base_rule_cases.env_on(InspectorEnv, workload, **config)


def test_a_rejection_starts_nothing_and_the_base_proposes_again_at_the_next_event():
    env = env_on(block_then_burst(), base="f1")
    obs, _ = env.reset()
    sim = env.sim
    assert sim.now == OFFSET and env.proposal == 0 and list(obs["action_mask"]) == [1.0, 1.0]
    features = dict(zip(FEATURES, obs["features"]))
    assert features["fits_now"] == 1.0 and features["requested_share"] == 1.0 and features["free_share"] == 1.0
    obs, reward, done, _, _ = env.step(REJECT)
    # nothing started; time moved to the burst's arrival; F1 now proposes the first short job
    assert not done and reward == 0.0 and sim.now == OFFSET + 60 and len(sim.running()) == 0
    assert len(sim.queue) == 9 and env.proposal == 1
    obs, *_ = env.step(ACCEPT)
    assert sim.state.start[1] == OFFSET + 60 and len(sim.running()) == 1
    # the next rejection waits for the running job's completion (no arrival is left)
    while env.proposal != 0:
        obs, *_ = env.step(ACCEPT)
    assert len(sim.running()) == 8 and dict(zip(FEATURES, obs["features"]))["fits_now"] == 0.0
    obs, *_ = env.step(REJECT)
    assert sim.now == OFFSET + 160 and len(sim.running()) == 0 and env.proposal == 0


def test_the_reward_is_relative_to_the_base_alone_and_the_base_value_is_cached():
    jobs = block_then_burst()
    env = env_on(jobs, base="f1")
    base = summarize(make_base("f1").run(Simulator(jobs, env.sim_config))).value("bsld")
    assert base > 40
    env.reset()
    done, first = False, True
    while not done:
        _, reward, done, _, info = env.step(REJECT if first else ACCEPT)
        first = False
    assert info["base_value"] == base and info["metric_value"] < 1.1 and info["rejections"] == 1
    assert reward == pytest.approx((base - info["metric_value"]) / base)
    assert len(env._base_values) == 1
    env._base_values[(0, len(jobs))] = 123.0  # a second episode on the same sequence reads the cache
    env.reset()
    done = False
    while not done:
        _, reward, done, _, info = env.step(ACCEPT)
    assert info["base_value"] == 123.0 and reward == pytest.approx((123.0 - base) / 123.0)


def test_a_point_with_no_running_job_and_no_arrival_left_cannot_be_rejected():
    # two jobs arrive together on an idle machine: rejecting would wait for an event that never comes
    env = env_on(make_workload([OFFSET, OFFSET], [100, 50], [4, 4], 4), base="sjf")
    obs, _ = env.reset()
    assert list(obs["action_mask"]) == [1.0, 0.0] and list(env.action_masks()) == [True, False]
    with pytest.raises(ValueError, match="not allowed"):
        env.step(REJECT)
    for _ in range(50):  # the masked action space never samples a rejection
        assert env.action_space.sample() == ACCEPT
    obs, *_ = env.step(ACCEPT)  # job 1 (SJF) starts; job 0 now has a completion to wait for
    assert list(obs["action_mask"]) == [1.0, 1.0]


CASES = [
    ("f1", "none", 0, "standard"),
    ("sjf", "easy", 0, "standard"),
    ("wfp3", "none", 0, "rlscheduler"),
    ("f1", "easy", 10, "standard"),
    ("random", "none", 0, "standard"),
]


@pytest.mark.parametrize("base,backfill,window,preset", CASES)
def test_accepting_every_proposal_reproduces_the_base_heuristic_exactly(base, backfill, window, preset):
    """On a real trace (the embedded one), with and without backfilling, pick-and-wait and a list window."""
    config = InspectorEnvConfig(trace="default", base=base, backfill=backfill, window=window, preset=preset,
                                sequence_length=512, starts=(4321,), train_fraction=1.0)
    env = InspectorEnv(config)
    env.reset()
    done, steps = False, 0
    while not done:
        _, reward, done, _, info = env.step(ACCEPT)
        steps += 1
    alone = make_base(base).run(Simulator(sequence(env.workload, 4321, 512), config.sim_config()))
    np.testing.assert_array_equal(env.sim.schedule().start, alone.start)
    assert info["metric_value"] == summarize(alone).value("bsld") == info["base_value"] and reward == 0.0
    assert steps >= 512 - (env.sim.schedule().mode == 3).sum()  # one inspection per start the base chose


def test_the_starvation_guard_masks_rejecting_a_proposal_that_has_waited_long_enough():
    """With `starvation_wait` 30 s the blocking job (proposed at once) can be rejected, and after the burst arrives 60 s
    later, proposed again, it cannot: it has waited 60 s. Without the guard it still can."""
    for guard, allowed in ((30.0, 0.0), (0.0, 1.0)):
        env = env_on(block_then_burst(), base="f1", starvation_wait=guard)
        obs, _ = env.reset()
        assert list(obs["action_mask"]) == [1.0, 1.0]
        obs, *_ = env.step(REJECT)  # the burst arrives, F1 proposes its short jobs, then the blocking job again
        while env.proposal != 0:
            obs, *_ = env.step(ACCEPT)
        assert len(env.sim.running()) == 8  # an event (a completion) is left to wait for: only the guard masks
        assert env.sim.now - env.sim.state.submit[0] >= 60 and obs["action_mask"][1] == allowed
    with pytest.raises(ValueError, match="starvation_wait must be >= 0"):
        InspectorEnvConfig(starvation_wait=-1.0)


def test_every_episode_ends_under_random_decisions():
    config = InspectorEnvConfig(trace="default", base="f1", sequence_length=128, train_fraction=0.7)
    env = InspectorEnv(config)
    rng = np.random.default_rng(0)
    for episode in range(3):
        obs, _ = env.reset(seed=episode)
        done, steps = False, 0
        while not done:
            assert obs["features"].shape == (len(FEATURES),)
            assert ((0.0 <= obs["features"]) & (obs["features"] <= 1.0)).all()
            action = REJECT if obs["action_mask"][1] and rng.random() < 0.5 else ACCEPT
            obs, reward, done, _, info = env.step(action)
            steps += 1
        # each rejection consumes an arrival or a completion: at most 2 per job
        assert info["rejections"] <= 2 * 128 and steps == info["rejections"] + 128
        assert np.isfinite(reward) and not len(env.sim.schedule().unfinished)


def test_bad_bases_and_options_are_one_clear_error(tmp_path):
    from schedrl.heuristics.tuned import RuleError

    with pytest.raises(ValueError, match="unknown base heuristic 'nosuch'; choose one of fcfs, sjf"):
        InspectorEnvConfig(base="nosuch")
    with pytest.raises(RuleError, match="no such tuned-rule file"):
        InspectorEnvConfig(base=f"tuned:{tmp_path / 'missing.json'}")
    with pytest.raises(ValueError, match="needs the file"):
        InspectorEnvConfig(base="tuned:")
    with pytest.raises(ValueError, match="window must be >= 0"):
        InspectorEnvConfig(window=-1)
    with pytest.raises(ValueError, match="unknown inspector env option"):
        InspectorEnvConfig.from_dict({"bogus": 1})
    assert InspectorEnvConfig(base="SJF").base == "sjf"


@pytest.mark.parametrize("argv,message", [
    (["--base", "nosuch"], "unknown base heuristic 'nosuch'"),
    (["--base", "tuned:/nonexistent/rule.json"], "no such tuned-rule file"),
    (["--window", "-2"], "window must be >= 0"),
    (["--initial-reject", "1.5"], "initial_reject=1.5 must be in (0, 1)"),
    (["--starvation-wait", "soon"], "--starvation-wait must look like 90s, 20m or 1.5h; got 'soon'"),
])
def test_the_cli_prints_one_error_line(argv, message, tmp_path, capsys):
    from schedrl.cli.main import main

    code = main(["train", "inspector", *argv, "--iterations", "1", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "error: " in err[0] and message in err[0], err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value,seconds", [("0", 0.0), ("off", 0.0), ("24h", 86400.0), ("90m", 5400.0), (0, 0.0)])
def test_the_starvation_wait_option_reads_durations_and_0_or_off_for_no_guard(value, seconds):
    from schedrl.agents.inspector.agent import starvation_wait

    assert starvation_wait(value) == seconds


def test_a_tuned_rule_is_a_base_and_one_fitted_on_another_trace_is_refused(tmp_path):
    from schedrl.agents import get_agent
    from schedrl.heuristics.tuned import STARTS, RuleError, TunedRule, normalisation
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.cleaning import CleaningRules

    workload = load_trace("default", CleaningRules.preset("default"))
    scales = normalisation(workload, 1000)
    rule = TunedRule(np.asarray(STARTS["f1"]) * scales, scales,  # F1's weights: F1's keys to the bit
                     {"name": workload.name, "sha256": workload.sha256, "jobs": len(workload)})
    rule.save(tmp_path / "f1.json")
    config = InspectorEnvConfig(trace="default", base=f"tuned:{tmp_path / 'f1.json'}", sequence_length=256,
                                starts=(1234,), train_fraction=1.0)
    env = InspectorEnv(config)
    env.reset()
    done = False
    while not done:
        _, reward, done, _, info = env.step(ACCEPT)
    f1 = make_base("f1").run(Simulator(sequence(workload, 1234, 256), config.sim_config()))
    np.testing.assert_array_equal(env.sim.schedule().start, f1.start)
    assert info["base_value"] == summarize(f1).value("bsld") and reward == 0.0
    agent = get_agent("inspector")
    assert [b.name for b in agent.judge(config).baselines][:2] == ["TUNED", "FCFS"]
    other = InspectorEnvConfig(trace=str(write_swf(block_then_burst(), tmp_path / "other.swf")), cleaning="none",
                               base=f"tuned:{tmp_path / 'f1.json'}", sequence_length=9, train_fraction=1.0)
    with pytest.raises(RuleError, match="fitted on trace"):
        agent.prepare(other, None, {}, log=lambda line: None)


def test_the_greedy_policy_keeps_the_guard_it_was_trained_with():
    """A policy that always wants to reject (a module whose reject logit is large) rejects a proposal until it has
    waited `starvation_wait`; without the guard (records before it) it rejects while any event is left."""
    import torch

    from schedrl.agents.inspector.observation import Normalisation
    from schedrl.agents.inspector.policy import InspectorPolicy

    class AlwaysReject(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bias = torch.nn.Parameter(torch.tensor([0.0, 10.0]))

        def pi(self, x):
            return self.bias.expand(x.shape[0], 2)

    workload = block_then_burst()
    norm = Normalisation.from_trace(workload).to_dict()
    starts = {}
    for guard in (30.0, 0.0):
        policy = InspectorPolicy(AlwaysReject(), {"base": "f1", "norm": norm, "starvation_wait": guard})
        starts[guard] = Simulator(workload, InspectorEnvConfig(base="f1").sim_config()).run(policy).start
    # guarded: each job is rejected until it has waited 30 s or nothing is left to wait for, then accepted, so
    # seven of the burst start together at the first completion
    np.testing.assert_array_equal(starts[30.0] - OFFSET, [260, 60] + [160] * 7)
    # unguarded: every proposal is rejected while an event is left, so the jobs run one at a time
    np.testing.assert_array_equal(starts[0.0] - OFFSET, [860, 60, 160, 260, 360, 460, 560, 660, 760])
