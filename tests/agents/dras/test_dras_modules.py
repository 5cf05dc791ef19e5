"""DRAS networks: Table III's parameter counts, the per-job Q shortcut, masking, the greedy policy."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from dras_workloads import make_workload
from ray.rllib.core.columns import Columns

from schedrl.agents.dras.env import DRASEnv
from schedrl.agents.dras.keys import OBS_ACTION_MASK, OBS_LEVEL, OBS_STATE
from schedrl.agents.dras.modules import module_spec
from schedrl.agents.dras.policy import DRASPolicy
from schedrl.sim import Simulator


def spaces(window: int, nodes: int):
    obs = gym.spaces.Dict({
        OBS_STATE: gym.spaces.Box(0.0, np.inf, (2 * window + nodes, 2), np.float32),
        OBS_LEVEL: gym.spaces.Box(0.0, 1.0, (1,), np.float32),
        OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, (window,), np.float32),
    })
    return obs, gym.spaces.Discrete(window)


def build(kind: str, model: str, window: int, nodes: int, **model_config):
    spec = module_spec(kind, model, model_config)
    spec.observation_space, spec.action_space = spaces(window, nodes)
    return spec.build()


@pytest.mark.parametrize("kind, expected", [("pg", 21_890_053), ("dql", 21_449_004)])
def test_theta_preset_has_the_papers_parameter_count(kind, expected):
    # DRAS Table III, Theta: W = 50, N = 4,360, fully connected 4,000 -> 1,000
    module = build(kind, "theta", 50, 4360)
    assert sum(p.numel() for p in module.parameters() if p.requires_grad) == expected


def test_scaled_preset_is_sized_from_window_and_machine():
    small = build("pg", "scaled", 10, 128)
    assert small.net.fc1.in_features == 148 and small.net.out.out_features == 10
    assert sum(p.numel() for p in small.parameters()) < 50_000
    assert build("pg", "scaled", 10, 128, fc_hiddens=(8, 4)).net.fc2.out_features == 4
    with pytest.raises(ValueError, match="unknown model_config key"):
        module_spec("pg", "scaled", {"hiddens": (3, 3)})
    with pytest.raises(ValueError, match="two positive ints"):
        module_spec("dql", "scaled", {"fc_hiddens": (3,)})


def random_obs(window: int, nodes: int, batch: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    mask = (torch.rand(batch, window, generator=g) < 0.6).float()
    mask[:, 0] = 1.0
    return {OBS_STATE: torch.rand(batch, 2 * window + nodes, 2, generator=g), OBS_ACTION_MASK: mask,
            OBS_LEVEL: torch.zeros(batch, 1)}


def test_dql_q_values_equal_the_network_run_on_each_job():
    module = build("dql", "scaled", 4, 6, fc_bias=True)
    obs = random_obs(4, 6, 3)
    q = module.compute_q_values({Columns.OBS: obs})["qf_preds"]
    net = module.net
    for b in range(3):
        for k in range(4):
            rows = torch.cat([obs[OBS_STATE][b, 2 * k: 2 * k + 2], obs[OBS_STATE][b, 8:]])[None]
            expected = net(rows)[0, 0]
            if obs[OBS_ACTION_MASK][b, k] > 0:
                assert q[b, k].item() == pytest.approx(expected.item(), rel=1e-5, abs=1e-6)
            else:
                assert q[b, k].item() == float("-inf")


def test_masked_slots_are_never_chosen():
    pg, dql = build("pg", "scaled", 5, 8), build("dql", "scaled", 5, 8, epsilon=1.0)
    obs = random_obs(5, 8, 64, seed=1)
    valid = obs[OBS_ACTION_MASK] > 0
    logits = pg.forward_exploration({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    sampled = torch.distributions.Categorical(logits=logits).sample()
    assert valid[torch.arange(64), sampled].all()
    for forward in (dql.forward_inference, dql.forward_exploration):  # epsilon 1: uniformly random
        actions = forward({Columns.OBS: obs})[Columns.ACTIONS]
        assert valid[torch.arange(64), actions].all()


@pytest.mark.parametrize("kind, two_level", [("pg", True), ("dql", True), ("pg", False)])
def test_policy_on_the_simulator_repeats_the_env_greedy_episode(kind, two_level):
    rng = np.random.default_rng(4)
    jobs, t = [], 0.0
    for _ in range(80):
        t += float(rng.integers(0, 20))
        req = float(rng.integers(10, 200))
        jobs.append((t, int(rng.integers(1, 9)), float(rng.integers(1, int(req) + 1)), req))
    wl = make_workload(jobs, 8)
    config = {"window": 3, "sequence_length": 80, "two_level": two_level, "norm": {"time_scale": 200.0, "wait_scale": 86400.0}}
    env = DRASEnv(config, workload=wl)
    torch.manual_seed(0)
    module = build(kind, "scaled", 3, 8)
    policy = DRASPolicy(module, env.config)
    obs, _ = env.reset(options={"start": 0})
    done = False
    while not done:
        scores = policy.scores(obs[OBS_STATE], obs[OBS_ACTION_MASK], 0)
        obs, _, done, _, _ = env.step(int(np.argmax(np.where(obs[OBS_ACTION_MASK] > 0, scores, -np.inf))))
    from schedrl.agents.dras.decisions import sim_config_for

    schedule = Simulator(wl, sim_config_for(env.config)).run(policy)
    np.testing.assert_array_equal(schedule.start, env.sim.schedule().start)
    np.testing.assert_array_equal(schedule.mode, env.sim.schedule().mode)
