"""RLSchert's allocation teacher option (`--teacher saf-hold`, ours): the env's teacher follows SAF + hold at
every decision, with and without kills; the CLI, the warm start's label and bad values."""

from __future__ import annotations

import argparse

import pytest

from schedrl.agents import get_agent
from schedrl.agents.base import AgentOptions
from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.env import RLSchertEnv
from schedrl.dtsim.heuristics import SAF, KillRule, SAFHold

# a loaded cluster (an arrival every step) of the synthetic table, whose longest jobs exceed the hold length
LOADED = dict(jobs="synthetic", simu_len=150, job_rate=1.0)


@pytest.mark.parametrize("kill", [False, True])
def test_the_teacher_follows_saf_hold_at_every_decision(kill):
    env = RLSchertEnv(RLSchertEnvConfig(**LOADED, kill=kill, teacher="saf-hold"))
    _, info = env.reset(seed=3)
    decisions = held = 0
    while True:
        action, sim = info["teacher_action"], env.sim
        mask = env.view.mask()
        kill_action = KillRule().kill_action(sim) if kill else None
        if not mask.any():
            expected = env.config.num_nw
        elif kill_action is not None and mask[kill_action]:
            expected = kill_action
        else:
            expected = SAFHold().act(sim)
            held += expected != SAF().act(sim)  # SAF would start a long job here; the teacher waits or picks another
        assert action == expected
        decisions += 1
        _, _, term, trunc, info = env.step(action)
        if term or trunc:
            break
    assert decisions > 300 and held > 0


def test_saf_stays_the_default_teacher():
    env = RLSchertEnv(RLSchertEnvConfig(**LOADED, kill=False))
    _, info = env.reset(seed=3)
    while True:
        mask = env.view.mask()
        assert info["teacher_action"] == (SAF().act(env.sim) if mask.any() else env.config.num_nw)
        _, _, term, trunc, info = env.step(info["teacher_action"])
        if term or trunc:
            break


def _args(agent: str, *argv: str) -> AgentOptions:
    p = argparse.ArgumentParser()
    get_agent(agent).add_arguments(p)
    return AgentOptions.of(p.parse_args(["--jobs", "synthetic", *argv]))


def test_cli_teacher_reaches_the_env_and_names_the_warm_start():
    agent = get_agent("rlschert")
    args = _args("rlschert", "--no-kill", "--teacher", "saf-hold")
    env, _ = agent.configure(args)
    assert env.teacher == "saf-hold" and env.teacher_label == "SAF + hold"
    assert args.notes[0].startswith("warm start: DAgger of SAF + hold (32 teacher sequences")
    env, _ = agent.configure(_args("rlschert", "--teacher", "saf-hold"))
    assert env.teacher_label == "kill rule + SAF + hold"
    env, _ = agent.configure(_args("rlschert"))
    assert env.teacher == "saf" and env.teacher_label == "kill rule + SAF"
    assert RLSchertEnvConfig.from_dict(env.to_dict()) == env  # a run record rebuilds the same env
    with pytest.raises(ValueError, match="teacher must be one of saf, saf-hold; got 'sjf'"):
        RLSchertEnvConfig(teacher="sjf")
    with pytest.raises(SystemExit):  # DeepRM has no imitation term, so no teacher
        _args("deeprm", "--teacher", "saf-hold")
