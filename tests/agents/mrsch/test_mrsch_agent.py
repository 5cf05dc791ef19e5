"""The `mrsch` and `mrsch-scalar` agents behind the Agent contract."""

from __future__ import annotations

import argparse
import subprocess
import sys

import numpy as np
import pytest

from schedrl.agents.base import Agent
from schedrl.agents.mrsch.agent import MRSchAgent, MRSchScalarAgent
from schedrl.agents.mrsch.config import MRSchEnvConfig
from schedrl.agents.mrsch.env import MRSchEnv
from schedrl.agents.mrsch.workload import prepare_workload
from schedrl.workload.lublin import generate_lublin


def parse(agent: Agent, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--trace", default="default")
    p.add_argument("--cleaning", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-env-runners", type=int, default=0)
    p.add_argument("--envs-per-runner", type=int, default=1)
    p.add_argument("--num-gpus-per-learner", type=float, default=0.0)
    p.add_argument("--runner-resources", default=None)
    agent.add_arguments(p)
    return p.parse_args(list(argv))


@pytest.mark.integration  # a fresh interpreter checks the imports
def test_importing_the_agents_loads_neither_ray_nor_torch():
    code = ("import sys; import schedrl.agents.mrsch.agent, schedrl.agents.mrsch.scalar; "
            "print(any(m.split('.')[0] in ('ray', 'torch') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_mrsch_configure_prepare_and_algorithm_config():
    agent = MRSchAgent()
    env, settings = agent.configure(parse(agent, "--augment", "S5", "--offset-weights", "0,0,0,1,1,1", "--lr", "3e-4"))
    assert env.augment == "S5" and env.offset_weights == (0, 0, 0, 1, 1, 1) and settings.lr == 3e-4
    prepared = agent.prepare(env, settings, {}, log=lambda line: None)
    assert prepared.env_config.norm["time_scale"] > 0 and prepared.trace_sha256
    sim = agent.judge(env).sim
    assert (sim.discipline, sim.window, sim.backfill) == ("list", 10, "easy")
    config = agent.algorithm_config(prepared.env_config, settings)
    assert config.offsets == (1, 2, 4, 8, 16, 32) and config.lr == 3e-4
    assert config.get_rl_module_spec().model_config["offset_weights"] == (0, 0, 0, 1, 1, 1)
    baselines = agent.judge(env).baselines
    assert [b.name for b in baselines] == ["FCFS", "GA"] and baselines[1].make().name == "GA"
    with pytest.raises(ValueError, match="unknown model"):
        agent.configure(parse(agent, "--model", "huge"))
    assert (env.queue_weight, env.queue_scale) == (0.0, 100.0)  # the paper's measurements unless asked
    env, _ = agent.configure(parse(agent, "--queue-goal", "4", "--queue-scale", "50"))
    assert (env.queue_weight, env.queue_scale) == (4.0, 50.0) and not env.fit_first
    assert agent.configure(parse(agent, "--fit-first"))[0].fit_first
    assert MRSchScalarAgent().configure(parse(MRSchScalarAgent(), "--fit-first"))[0].fit_first  # the baseline too


def test_scalar_agent_trains_one_ppo_iteration(ray_session):
    agent = MRSchScalarAgent()
    env_config, settings = agent.configure(parse(agent, "--sequence-length", "32"))
    assert env_config.reward == "utilization"
    wl = prepare_workload(generate_lublin(400, 32, seed=2), "S4", 0)[0]

    class Env(MRSchEnv):  # a generated workload instead of the catalog trace
        def __init__(self, config=None):
            super().__init__(config, workload=wl)

    from dataclasses import replace

    settings = replace(settings, train_batch_size=64, minibatch_size=32, num_epochs=1, hiddens=(16,))
    config = agent.algorithm_config(env_config, settings).environment(env=Env)
    algo = config.build_algo()
    try:
        algo.train()
        module = algo.get_module()
    finally:
        algo.stop()
    from schedrl.agents.mrsch.env import sim_config_for
    from schedrl.agents.mrsch.observation import StateNorm
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    record = MRSchEnvConfig.from_dict({**env_config.to_dict(), "norm": StateNorm.from_trace(wl).to_dict()})
    policy = agent.policy_from_module(module, record.to_dict())
    schedule = Simulator(sequence(wl, 300, 64), sim_config_for(record)).run(policy)
    assert (schedule.end >= 0).all() and np.isfinite(schedule.wait).all()


def test_a_sweep_file_and_the_command_line_split_the_trace_alike():
    """A sweep file without `env.train_fraction` trains on the first 70% as `schedrl train mrsch` does (it was the
    whole trace, leaving nothing held out)."""
    from schedrl.training.sweep_file import sweep_from_dict

    agent = MRSchAgent()
    env, _ = agent.configure(parse(agent))
    spec = sweep_from_dict({"agent": "mrsch", "stop": {"iterations": 1}})
    assert env.train_fraction == spec.env.train_fraction == MRSchEnvConfig().train_fraction == 0.7
    assert agent.judge(spec.env).held_out_range(1000) == (700, 1000)
