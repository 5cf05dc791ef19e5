"""Every named policy network (Table IV) builds from the registry, masks, and has a value net."""

from __future__ import annotations

import pytest
import torch
from ray.rllib.core.columns import Columns

from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE, OBS_ACTION_MASK, OBS_JOBS
from schedrl.agents.rlscheduler.modules.flat import FlatMLPPolicyModule, LeNetPolicyModule
from schedrl.agents.rlscheduler.modules import MODELS, module_spec


def build(name, spaces, model_config=None):
    spec = module_spec(name, model_config)
    spec.observation_space, spec.action_space = spaces
    return spec.build()


@pytest.mark.parametrize("name", ["kernel", "mlp_v1", "mlp_v2", "mlp_v3", "lenet"])
def test_named_model_builds_forwards_and_masks(name, spaces, obs):
    module = build(name, spaces)
    logits = module.forward_train({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    assert logits.shape == (len(obs[OBS_JOBS]), MAX_OBSV_SIZE)
    assert torch.isfinite(logits).all()
    probs = torch.softmax(logits, dim=-1)
    assert probs[obs[OBS_ACTION_MASK] == 0].max() < 1e-30
    assert module.compute_values({Columns.OBS: obs}).shape == (len(obs[OBS_JOBS]),)


def test_registry_covers_the_paper_models():
    assert set(MODELS) == {"kernel", "mlp_v1", "mlp_v2", "mlp_v3", "lenet"}


@pytest.mark.parametrize(
    ("name", "hiddens"),
    [("mlp_v1", [128, 128, 128]), ("mlp_v2", [32, 16, 8]), ("mlp_v3", [32] * 5)],  # Table IV
)
def test_mlp_presets_follow_table_iv(name, hiddens, spaces):
    module = build(name, spaces)
    assert isinstance(module, FlatMLPPolicyModule)
    widths = [layer.out_features for layer in module.pi if isinstance(layer, torch.nn.Linear)]
    assert widths == hiddens + [MAX_OBSV_SIZE]


def test_lenet_is_two_conv_pool_blocks_then_dense(spaces):
    module = build("lenet", spaces)
    assert isinstance(module, LeNetPolicyModule)
    kinds = [type(layer).__name__ for layer in module.pi if not isinstance(layer, torch.nn.ReLU)]
    assert kinds == ["Conv1d", "MaxPool1d", "Conv1d", "MaxPool1d", "Flatten", "Sequential"]


def test_lenet_rejects_pooling_that_leaves_no_jobs(spaces):
    with pytest.raises(ValueError, match="lower model_config\\['pool'\\]"):
        build("lenet", spaces, {"pool": 16})


def test_value_network_is_shared_across_models(spaces):
    sizes = {name: [p.shape for p in build(name, spaces).vf.parameters()] for name in MODELS}
    assert len({str(s) for s in sizes.values()}) == 1


def test_model_config_overrides_preset(spaces):
    module = build("mlp_v1", spaces, {"policy_hiddens": (64,)})
    widths = [layer.out_features for layer in module.pi if isinstance(layer, torch.nn.Linear)]
    assert widths == [64, MAX_OBSV_SIZE]


def test_unknown_model_name_lists_valid_ones():
    with pytest.raises(ValueError, match=r"unknown model 'mlp_v4'; valid names: \['kernel', 'lenet', 'mlp_v1'"):
        module_spec("mlp_v4")
