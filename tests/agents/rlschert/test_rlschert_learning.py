"""A learning test where killing is the known-better action.

The pool holds one job at a time. Every job is predicted to take 3 steps; most run 1-2, but a
quarter run 20 and reveal it after their first step (re-estimate 20). Leaving such a job to run
blocks every other job for 20 steps; killing it at once (it goes to the end of the queue) lets the
short jobs through first. A PPO policy trained briefly with the kill actions must end up killing
and must beat SAF, the best policy that cannot kill, on held-out sequences.
"""

from __future__ import annotations

import numpy as np
from rlschert_cases import write_jobs_csv

from schedrl.agents import get_agent
from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.evaluation import run_sequences
from schedrl.agents.rlschert.settings import RLSchertSettings
from schedrl.dtsim.heuristics import make_policy

JOBS = [(1, 3, 20, []), (2, 3, 20, [3]), (1, 3, 20, []), (20, 3, 20, [20] * 19)]


def test_ppo_learns_to_kill_the_mispredicted_long_job(ray_session, tmp_path):
    agent = get_agent("rlschert")
    env = RLSchertEnvConfig(jobs=str(write_jobs_csv(tmp_path / "jobs.csv", JOBS)), res_slot=2, job_width=2, num_nw=2,
                            num_kill=1, horizon=20, job_len=20, backlog=20, simu_len=12, job_rate=0.6, max_seq=300)
    settings = RLSchertSettings(lr=1e-3, train_batch_size_per_learner=1024, minibatch_size=128,
                                imitation_schedule=((0, 0.5), (6000, 0.0)), num_envs_per_env_runner=2, seed=0)
    algo = agent.algorithm_config(env, settings).build_algo()
    try:
        for _ in range(10):
            algo.train()
        module = algo.get_module()
    finally:
        algo.stop()
    seeds = agent.judge(env).evaluation_ids(None, 16, 5, 0)
    learned = run_sequences(lambda i: agent.policy_from_module(module, env.to_dict()), env, seeds)
    saf = run_sequences(lambda i: make_policy("saf"), env, seeds)
    random = run_sequences(lambda i: make_policy("random", seed=i), env, seeds)
    slow = {name: float(np.mean([s["slowdown"] for s in runs]))
            for name, runs in (("learned", learned), ("saf", saf), ("random", random))}
    assert sum(s["kills"] for s in learned) > 0, slow
    assert slow["learned"] < slow["saf"] < slow["random"] or slow["learned"] < min(slow["saf"], slow["random"]), slow
