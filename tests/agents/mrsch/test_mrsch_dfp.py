"""DFP: its defining property on a tiny env, the module's masking, and the RLlib Algorithm on MRSch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from mrsch_two_goals import STEPS, TwoGoalsEnv
from schedrl.agents.mrsch.config import MRSchEnvConfig
from schedrl.agents.mrsch.dfp import DFP, build_dfp_config
from schedrl.agents.mrsch.env import MRSchEnv, sim_config_for
from schedrl.agents.mrsch.keys import DFP_MSE, INFO_START, OBS_ACTION_MASK, OBS_MEASUREMENTS
from schedrl.agents.mrsch.modules import DFPModule, dfp_module_spec
from schedrl.agents.mrsch.observation import StateNorm
from schedrl.agents.mrsch.policy import DFPPolicy
from schedrl.agents.mrsch.settings import DFPSettings
from schedrl.agents.mrsch.workload import prepare_workload
from schedrl.sim import Simulator
from schedrl.workload.lublin import generate_lublin
from schedrl.workload.sampling import sequence

TINY_NET = {"state_hiddens": (32,), "state_out": 32, "io_hiddens": (16,), "stream_hiddens": (32,)}


@pytest.fixture
def one_torch_thread():
    # tiny networks on 2 shared cores: torch's thread pool costs more than it gives
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def greedy_episode(module, goal) -> tuple[list[int], np.ndarray]:
    env = TwoGoalsEnv()
    obs, _ = env.reset(options={"goal": goal})
    actions, done = [], False
    while not done:
        batch = {"obs": {k: torch.from_numpy(v)[None] for k, v in obs.items()}}
        a = int(module.forward_inference(batch)["actions"][0])
        actions.append(a)
        obs, _, done, _, _ = env.step(a)
    return actions, obs[OBS_MEASUREMENTS]


def test_dfp_acts_for_its_goal(ray_session, one_torch_thread):
    """DFP's defining property: one trained network, two goals, two behaviours. With goal [1, 0] the
    agent raises measurement 0, with [0, 1] measurement 1; a policy that ignored its goal input (or
    weighted the predictions by anything but the goal) would act the same way for both."""
    settings = DFPSettings(lr=1e-3, minibatch_size=32, updates_per_iteration=8, episodes_per_iteration=4,
                           learning_starts=32, epsilon_decay=0.98, epsilon_floor=0.1, seed=0)
    config = build_dfp_config(settings, TwoGoalsEnv, {"offsets": [1, 2, 4], "offset_weights": [1, 1, 1]},
                              model_config=TINY_NET)
    algo = config.build_algo()
    try:
        for _ in range(15):
            result = algo.train()
        assert result["learners"]["default_policy"][DFP_MSE] < 0.01
        module = algo.get_module()
        first, m_first = greedy_episode(module, [1.0, 0.0])
        second, m_second = greedy_episode(module, [0.0, 1.0])
    finally:
        algo.stop()
    assert first == [0] * STEPS and m_first[0] > m_first[1]
    assert second == [1] * STEPS and m_second[1] > m_second[0]


def test_dfp_module_never_chooses_a_masked_slot():
    env = TwoGoalsEnv()
    spec = RLModuleSpec(module_class=DFPModule, observation_space=env.observation_space,
                        action_space=env.action_space,
                        model_config={**dfp_module_spec("small").model_config, **TINY_NET,
                                      "offsets": 3, "offset_weights": (1.0, 1.0, 1.0)})
    module = spec.build()
    obs, _ = env.reset(seed=0)
    batch = {k: torch.from_numpy(np.repeat(v[None], 64, axis=0)) for k, v in obs.items()}
    batch[OBS_ACTION_MASK][:, 0] = 0.0
    scores = module.scores(batch)
    assert torch.isinf(scores[:, 0]).all() and torch.isfinite(scores[:, 1]).all()
    explored = module.forward_exploration({"obs": batch}, t=0)["actions"]  # epsilon = 1: all random
    assert (explored == 1).all()
    assert module.epsilon(0) == 1.0 and module.epsilon(10) == pytest.approx(0.995**10)
    assert module.epsilon(10**6) == module.cfg["epsilon_floor"]


def test_dfp_algorithm_trains_on_mrsch_and_its_module_schedules(ray_session, one_torch_thread):
    """Two iterations of the RLlib Algorithm on the MRSch env (sampling in the driver), then the module
    as a greedy simulator policy on a held-out sequence."""
    base = generate_lublin(800, 32, seed=9)
    wl = prepare_workload(base, "S4", 0)[0]
    env_config = MRSchEnvConfig(augment="S4", sequence_length=48, train_fraction=0.7,
                                norm=StateNorm.from_trace(wl).to_dict())
    settings = DFPSettings(minibatch_size=16, updates_per_iteration=2, learning_starts=1, num_env_runners=0)

    class Env(MRSchEnv):  # the generated workload instead of a catalog trace
        def __init__(self, config=None):
            super().__init__(config, workload=wl)

    config = build_dfp_config(settings, Env, env_config.to_dict(), model_config=TINY_NET)
    algo = config.build_algo()
    try:
        assert isinstance(algo, DFP)
        for _ in range(2):
            result = algo.train()
        assert np.isfinite(result["learners"]["default_policy"][DFP_MSE])
        assert len(algo.replay) >= 2 * 48 // 2  # two whole episodes of decisions
        # every iteration draws new training sequences (RLlib re-seeds envs on each episode-count sample
        # unless told not to, which replayed one sequence forever)
        starts = [e.get_infos(0)[INFO_START] for _ in range(4) for e in algo._sample_episodes()[0]]
        assert len(starts) == 4 and len(set(starts)) > 1, starts
        module = algo.get_module()
    finally:
        algo.stop()
    policy = DFPPolicy(module, env_config.to_dict())
    sim = Simulator(sequence(wl, 700, 64), sim_config_for(env_config))
    schedule = sim.run(policy)
    assert (schedule.end >= 0).all()
