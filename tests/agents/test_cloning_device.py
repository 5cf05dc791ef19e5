"""The warm start on a GPU learner: with `--num-gpus-per-learner` the learner holds its module on the GPU, and the
warm start clones and scores that very module (`cloning.clone`, `CheckpointPolicy`), so both move their numpy
inputs to the module's device and its outputs back. Runs on the CPU everywhere, and on CUDA where there is one."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from schedrl.agents.cloning import module_device
from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
from schedrl.agents.rlscheduler.env import RLSchedulerEnv, load_env_workload
from schedrl.agents.rlscheduler.observation import JobFeatures
from schedrl.agents.rlscheduler.warm_start import clone, demonstrations, score_clone

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"))]


def test_module_device_is_the_parameters_device():
    assert module_device(torch.nn.Linear(2, 1)) == torch.device("cpu")
    assert module_device(torch.nn.Identity()) == torch.device("cpu")  # no parameters
    assert module_device(object()) == torch.device("cpu")  # no torch module


@pytest.mark.parametrize("device", DEVICES)
def test_warm_start_clones_and_scores_the_module_where_it_is(device):
    from schedrl.agents.rlscheduler.modules import module_spec

    config = RLSchedulerEnvConfig(trace="default", sequence_length=64)
    env_config = replace(config, norm=JobFeatures.from_trace(load_env_workload(config)).to_dict()).to_dict()
    env = RLSchedulerEnv(config=env_config)
    spec = module_spec("kernel")
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    torch.manual_seed(0)
    module = spec.build().to(device)
    demos = demonstrations(env_config, "sjf", 4, seed=0)
    stats = clone(module, demos, epochs=4, seed=0)
    assert module_device(module).type == device  # trained in place
    assert stats["agreement"] > stats["agreement_before"] and np.isfinite(stats["value_mse"])
    value = score_clone(module, env_config, demos.sequences[:2])  # CheckpointPolicy on the module's device
    assert np.isfinite(value) and value >= 1.0  # bsld
