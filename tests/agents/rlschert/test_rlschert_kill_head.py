"""The per-slot kill head (`kill_head="slots"`) and the up-weighted kill decisions of the warm start."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from rlschert_cases import small_config, small_table

from schedrl.agents import get_agent
from schedrl.agents.base import AgentOptions
from schedrl.agents.rlschert.env import RLSchertEnv
from schedrl.agents.rlschert.settings import RLSchertSettings


def _module(env: RLSchertEnv, kill_head: str):
    from schedrl.agents.rlschert.modules import module_spec

    spec = module_spec("mlp", {"kill_head": kill_head})
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    return spec.build()


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_slot_head_scores_every_slot_with_one_rule(model):
    """Identical running slots get identical kill logits with `slots` (one scorer), not with `flat` (8 outputs);
    a different slot gets a different one; allocations and void come from the network as before."""
    import torch

    from schedrl.agents.rlschert.modules import module_spec

    env = RLSchertEnv(small_config(), table=small_table())
    obs, _ = env.reset(seed=0)
    cfg = env.config
    slots, features = obs["running"].shape
    assert env.action_space.n == cfg.num_nw + 1 + slots and slots >= 2
    running = np.tile(np.array([0.05, 0.01, 2.4, 0.17, 0.01, 0.15, 1.0], np.float32), (slots, 1))
    image = torch.from_numpy(obs["image"][None]).float()
    rest = torch.cat([torch.from_numpy(running.reshape(1, -1)), torch.from_numpy(obs["extra"][None])], dim=-1)

    logits, modules = {}, {}
    for head in ("slots", "flat"):
        spec = module_spec(model, {"kill_head": head})
        spec.observation_space, spec.action_space = env.observation_space, env.action_space
        modules[head] = spec.build()
        with torch.no_grad():
            logits[head] = modules[head].pi(image, rest)[0]
        assert logits[head].shape == (env.action_space.n,)
    kills = logits["slots"][cfg.num_nw + 1:]
    assert torch.allclose(kills, kills[0].expand_as(kills))
    assert not torch.allclose(logits["flat"][cfg.num_nw + 1:], logits["flat"][cfg.num_nw + 1])
    # one slot changed: its kill logit departs from the others' (which stay equal among themselves)
    changed = running.copy()
    changed[-1] = [0.3, 0.2, 0.0, 0.3, 0.5, 0.5, 1.0]
    rest2 = torch.cat([torch.from_numpy(changed.reshape(1, -1)), torch.from_numpy(obs["extra"][None])], dim=-1)
    with torch.no_grad():
        kills2 = modules["slots"].pi(image, rest2)[0][cfg.num_nw + 1:]
    others = kills2[:-1]
    assert torch.allclose(others, others[0].expand_as(others)) and not torch.isclose(kills2[-1], others[0])


def test_slot_head_masks_like_the_flat_one():
    import torch
    from ray.rllib.core.columns import Columns

    env = RLSchertEnv(small_config(), table=small_table())
    module = _module(env, "slots")
    obs, _ = env.reset(seed=0)
    batch = {k: torch.from_numpy(v[None]) for k, v in obs.items()}
    logits = module.forward_inference({Columns.OBS: batch})[Columns.ACTION_DIST_INPUTS][0]
    invalid = torch.from_numpy(obs["action_mask"] == 0)
    assert invalid.any() and (logits[invalid] <= logits[~invalid].max() - 80).all()
    assert module.compute_values({Columns.OBS: batch}).shape == (1,)


def _args(*argv: str) -> AgentOptions:
    p = argparse.ArgumentParser()
    get_agent("rlschert").add_arguments(p)
    p.add_argument("--seed", type=int, default=0)
    return AgentOptions.of(p.parse_args(["--jobs", "synthetic", *argv]))


def test_kill_head_and_kill_weight_reach_the_module_and_the_warm_start():
    agent = get_agent("rlschert")
    env, flat = agent.configure(_args())
    assert flat.kill_head == "flat" and flat.warm_start_spec()["kill_weight"] == 1.0
    # the paper's network keeps its old spec (checkpoints written before the option load unchanged)
    assert "kill_head" not in agent.algorithm_config(env, flat).get_rl_module_spec().model_config
    env, slots = agent.configure(_args("--kill-head", "slots", "--warm-start-kill-weight", "4"))
    assert agent.algorithm_config(env, slots).get_rl_module_spec().model_config["kill_head"] == "slots"
    assert slots.warm_start_spec()["kill_weight"] == 4.0
    with pytest.raises(ValueError, match="--kill-head slots scores kill actions; --no-kill has none"):
        agent.configure(_args("--kill-head", "slots", "--no-kill"))
    with pytest.raises(ValueError, match="kill_head must be one of flat, slots"):
        RLSchertSettings(kill_head="rows")
    with pytest.raises(ValueError, match="warm_start_kill_weight=0.0 must be > 0"):
        RLSchertSettings(warm_start_kill_weight=0.0)
    with pytest.raises(ValueError, match="kill_head'] must be one of flat, slots"):
        from schedrl.agents.rlschert.modules import module_spec

        module_spec("mlp", {"kill_head": "rows"})
    with pytest.raises(SystemExit):  # DeepRM has no kills to score
        p = argparse.ArgumentParser()
        get_agent("deeprm").add_arguments(p)
        p.parse_args(["--kill-head", "slots"])


@pytest.mark.integration  # a training (cloning)
def test_weighted_cloning_follows_the_heavier_label():
    """Two identical states labelled differently: the clone takes the label with the larger weight."""
    import torch

    from schedrl.agents.cloning import clone

    env = RLSchertEnv(small_config(), table=small_table())
    obs, _ = env.reset(seed=0)
    valid = np.flatnonzero(obs["action_mask"])
    a, b = int(valid[0]), int(valid[1])
    keys = ("image", "running", "extra", "action_mask")
    states = {k: np.stack([obs[k]] * 8) for k in keys}
    labels = np.array([a] * 4 + [b] * 4)
    for heavy, light, expected in ((5.0, 1.0, a), (1.0, 5.0, b)):
        torch.manual_seed(0)
        module = _module(env, "flat")
        weights = np.array([heavy] * 4 + [light] * 4)
        stats = clone(module, states, labels, np.zeros(8, np.float32), epochs=60, minibatch=8, weights=weights)
        assert stats["agreement"] == 0.5
        from ray.rllib.core.columns import Columns

        with torch.no_grad():
            out = module.forward_inference({Columns.OBS: {k: torch.from_numpy(obs[k][None]) for k in keys}})
        assert int(out[Columns.ACTION_DIST_INPUTS][0].argmax()) == expected
    with pytest.raises(ValueError, match="weights must be 8 non-negative numbers"):
        clone(module, states, labels, np.zeros(8, np.float32), weights=np.zeros(8))
    with pytest.raises(ValueError, match="weights must be 8 non-negative numbers"):
        clone(module, states, labels, np.zeros(8, np.float32), weights=np.ones(3))
