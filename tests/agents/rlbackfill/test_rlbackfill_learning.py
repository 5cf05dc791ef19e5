"""Learned backfilling learns a non-first-fit choice where it is better: PPO with a tiny budget on `long_before_short`,
where EASY's first fit backfills a 900-s job and makes a 10-s one wait 900 s. The trained greedy policy must start the
short job first, with probability above 0.9; the untrained network is checked to fall short of that probability
first, so the test can fail."""

from __future__ import annotations

from argparse import Namespace

import numpy as np
import pytest

from base_rule_cases import long_before_short, write_swf
from schedrl.agents import get_agent
from schedrl.metrics import summarize
from schedrl.sim import Simulator

ITERATIONS = 40


def greedy(agent, module, env_config, jobs) -> tuple[float, float]:
    """(mean bounded slowdown of the greedy policy on `jobs`, its probability of starting the short job first)."""
    import torch

    from schedrl.agents.rlbackfill.env import RLBackfillEnv

    policy = agent.policy_from_module(module, env_config.to_dict())
    value = summarize(Simulator(jobs, env_config.sim_config()).run(policy)).value("bsld")
    env = RLBackfillEnv(env_config, workload=jobs)
    obs, _ = env.reset(options={"start": 0})
    scores = torch.from_numpy(policy.scores(obs)[: len(env.candidates)])
    return value, float(torch.softmax(scores, 0)[1])


def test_ppo_learns_to_backfill_the_short_job_first(tmp_path, ray_session):
    agent = get_agent("rl-backfill")
    jobs = long_before_short()
    trace = write_swf(jobs, tmp_path / "case.swf")
    args = Namespace(trace=str(trace), cleaning="none", preset="standard", base="f1", metric="bsld", backfill="easy",
                     window=0, slots=None, skip=False, sequence_length=len(jobs), train_fraction=1.0,
                     validation_share=0.25, num_env_runners=0, envs_per_runner=4, num_gpus_per_learner=0.0, seed=0,
                     runner_resources=None, batch_size=128, minibatch_size=32, epochs=6, lr=3e-3, entropy_coeff=0.0,
                     hidden=None)
    env, settings = agent.configure(args)
    prepared = agent.prepare(env, settings, {}, log=lambda line: None).env_config
    sequence = prepared.workload()  # the trace read back: one window, start 0
    first_fit = summarize(_f1_easy(sequence, prepared)).value("bsld")
    assert first_fit == pytest.approx(26.0, abs=0.01)
    algo = agent.algorithm_config(prepared, settings).build_algo()
    try:
        value, p_short = greedy(agent, algo.get_module(), prepared, sequence)
        assert p_short < 0.9, p_short  # the check below fails for the untrained network
        for iteration in range(1, ITERATIONS + 1):  # noqa: B007  (reported after the loop)
            algo.train()
            value, p_short = greedy(agent, algo.get_module(), prepared, sequence)
            if p_short > 0.9:
                break
    finally:
        algo.stop()
    print(f"learned in {iteration} iterations: bsld {value:.3f} (first fit {first_fit:.2f}), p(short first) {p_short:.3f}")
    assert p_short > 0.9, (iteration, p_short)
    assert value == pytest.approx(3.5, abs=0.01) and np.isfinite(value)


def _f1_easy(jobs, env_config):
    from schedrl.agents.rlbackfill.config import make_base

    return make_base(env_config.base).run(Simulator(jobs, env_config.base_sim_config()))
