"""KernelPolicyModule: RLScheduler's per-job kernel network with masking and a value net."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch
from ray.rllib.core.columns import Columns

from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE, OBS_ACTION_MASK, OBS_JOBS
from schedrl.agents.rlscheduler.modules.kernel import KernelPolicyModule
from schedrl.agents.rlscheduler.modules import module_spec


def build(spaces, model_config=None, inference_only=False) -> KernelPolicyModule:
    obs_space, act_space = spaces
    spec = module_spec("kernel", model_config)
    spec.observation_space, spec.action_space, spec.inference_only = obs_space, act_space, inference_only
    return spec.build()


def logits_of(module, obs) -> torch.Tensor:
    return module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]


def test_permuting_job_rows_permutes_logits_identically(spaces, obs):
    module = build(spaces)
    perm = torch.randperm(MAX_OBSV_SIZE, generator=torch.Generator().manual_seed(1))
    permuted = {OBS_JOBS: obs[OBS_JOBS][:, perm], OBS_ACTION_MASK: obs[OBS_ACTION_MASK][:, perm]}
    assert torch.allclose(logits_of(module, permuted), logits_of(module, obs)[:, perm])


def test_policy_has_fewer_than_1000_parameters(spaces):
    # RLScheduler §IV-B1: "less than 1,000"; with its 8 job features: 8*32+32 + 32*16+16 + 16*8+8 + 8+1 = 961
    module = build(spaces)
    assert sum(p.numel() for p in module.pi.parameters()) == 961


def test_masked_slots_get_zero_probability(spaces, obs):
    probs = torch.softmax(logits_of(build(spaces), obs), dim=-1)
    masked = obs[OBS_ACTION_MASK] == 0
    assert masked.any()
    assert probs[masked].max() < 1e-30
    assert torch.allclose(probs.sum(-1), torch.ones(len(probs)))


def test_single_valid_slot_is_certain(spaces, obs):
    obs[OBS_ACTION_MASK] = torch.zeros_like(obs[OBS_ACTION_MASK])
    obs[OBS_ACTION_MASK][:, 7] = 1.0
    probs = torch.softmax(logits_of(build(spaces), obs), dim=-1)
    assert torch.allclose(probs[:, 7], torch.ones(len(probs)))


def test_masked_logits_stay_finite_and_give_finite_gradients(spaces, obs):
    module = build(spaces)
    logits = module.forward_train({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    assert torch.isfinite(logits).all()
    torch.log_softmax(logits, dim=-1)[:, 0].sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in module.pi.parameters())


def test_values_have_shape_batch(spaces, obs):
    values = build(spaces).compute_values({Columns.OBS: obs})
    assert values.shape == (len(obs[OBS_JOBS]),)


def test_inference_only_module_has_no_value_network(spaces, obs):
    module = build(spaces, inference_only=True)
    assert not hasattr(module, "vf")
    assert logits_of(module, obs).shape == (len(obs[OBS_JOBS]), MAX_OBSV_SIZE)


def test_feature_count_is_read_from_the_space(make_spaces, make_obs):
    module = build(make_spaces(num_features=5))
    assert module.num_features == 5
    assert logits_of(module, make_obs(batch=2, num_features=5)).shape == (2, MAX_OBSV_SIZE)


def test_model_config_sets_kernel_sizes(spaces):
    module = build(spaces, {"kernel_hiddens": [16, 4]})
    widths = [layer.out_features for layer in module.pi if isinstance(layer, torch.nn.Linear)]
    assert widths == [16, 4, 1]


def test_unknown_model_config_key_is_rejected():
    with pytest.raises(ValueError, match=r"unknown model_config key\(s\) \['kernel_size'\]"):
        module_spec("kernel", {"kernel_size": 3})


def test_bad_layer_sizes_are_rejected():
    with pytest.raises(ValueError, match="kernel_hiddens"):
        module_spec("kernel", {"kernel_hiddens": [32, 0]})


def test_observation_without_mask_is_rejected(spaces):
    obs_space = gym.spaces.Dict({OBS_JOBS: spaces[0][OBS_JOBS]})
    with pytest.raises(ValueError, match="action_mask"):
        build((obs_space, spaces[1]))


def test_action_space_must_match_slots(spaces):
    with pytest.raises(ValueError, match=f"Discrete\\({MAX_OBSV_SIZE}\\)"):
        build((spaces[0], gym.spaces.Discrete(MAX_OBSV_SIZE // 2)))
