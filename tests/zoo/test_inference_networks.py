"""Every agent's ray-free network against its RLModule, for every network the agent offers (RLScheduler's Table IV
ablations, RLSchert's CNN and per-slot kill scorer included): an RLModule freshly built as training builds it (the
regression fixtures' run records give the envs), its policy weights loaded into the ray-free network (also rebuilt
from its architecture as JSON, as an export is loaded), the same decisions on a whole episode. No training."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "regression" / "fixtures"
EVENT_JOBS = 128
DTSIM_STEPS = 20
"""The discrete-time episode's cap (`max_seq`, at least the fixtures' simu_len of 20): an untrained RLSchert network
kills and requeues for thousands of steps. 20 steps are 135 decisions of each network (100 were 629: 20-120 s of the
fast tier for the CNN at load 10)."""

CASES = [("rlscheduler", m, {}) for m in ("kernel", "mlp_v1", "mlp_v2", "mlp_v3", "lenet")] + [
    ("linear", None, {}), ("dras-pg", None, {}), ("decima-pg", None, {}), ("dras-dql", None, {}),
    ("mrsch", None, {}), ("mrsch-scalar", None, {}),
    ("rlschert", "mlp", {}), ("rlschert", "mlp", {"kill_head": "slots"}), ("deeprm", "mlp", {}),
    ("rlschert", "cnn", {"model": "cnn"}), ("rlschert", "cnn", {"model": "cnn", "kill_head": "slots"}),
]


def build_module(agent, record, env_config, model, changes):
    """A freshly initialised RLModule of `agent`'s network `model`, on the env `env_config`."""
    import gymnasium as gym

    import schedrl.envs  # noqa: F401  (registers the envs)

    settings = replace(agent.settings_from_dict(record.settings), **changes)
    config = agent.algorithm_config(env_config, settings, model or record.model)
    env = gym.make(agent.env_id, config=env_config.to_dict())
    try:
        return config.get_rl_module_spec(env=env.unwrapped).build()
    finally:
        env.close()


@pytest.mark.parametrize(("name", "model", "changes"), CASES,
                         ids=[f"{n}-{m or 'default'}{''.join('-' + str(v) for v in c.values())}" for n, m, c in CASES])
def test_the_ray_free_network_decides_as_the_rlmodule(name, model, changes):
    import torch

    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import RunRecord
    from schedrl.zoo.decisions import first_difference, logged

    record = RunRecord.read(FIXTURES / name / "schedrl_run.json")
    agent = get_agent(record.agent)
    env = agent.env_config_class.from_dict(dict(record.env_config))
    if agent.judge(env).generated:
        env = replace(env, max_seq=DTSIM_STEPS)
    torch.manual_seed(0)
    module = build_module(agent, record, env, model, changes).eval()
    net = agent.inference_module(record, module)
    trained = module.state_dict()
    net.load_state_dict({k: trained[k] for k in net.state_dict()}, strict=True)
    loaded = agent.inference_module(record, json.loads(json.dumps(net.architecture)))  # as an export is loaded
    loaded.load_state_dict(net.state_dict(), strict=True)
    assert set(net.state_dict()) <= set(trained)

    judge = agent.judge(env)
    workload = judge.load()
    length = judge.sequence_length if judge.generated else EVENT_JOBS
    ids = judge.evaluation_ids(workload, 1, 0, length)

    def run(policy):
        return judge.score_policy(policy, workload, ids, length)

    logs = [logged(agent.policy_from_module(m.eval(), env.to_dict()), run) for m in (module, net, loaded)]
    assert len(logs[0][0].calls) > 10
    assert first_difference(logs[0][0], logs[1][0]) is None and first_difference(logs[0][0], logs[2][0]) is None
    assert logs[0][1] == logs[1][1] == logs[2][1]
