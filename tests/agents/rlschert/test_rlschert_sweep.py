"""RLSchert's predictable fraction (Table 9) in the env and the agent's options, and a checkpoint as a sweep method."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import numpy as np
import pytest
from rlschert_cases import small_config, small_table

from schedrl.agents import get_agent
from schedrl.agents.base import AgentOptions
from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.env import RLSchertEnv
from schedrl.cli.main import main
from schedrl.dtsim import DTSim, DTSimConfig
from schedrl.dtsim.fidelity import fidelity_sequences
from schedrl.dtsim.heuristics import run
from schedrl.dtsim.sweep import sweep


def test_env_config_predictable():
    assert RLSchertEnvConfig().dtsim_config() == DTSimConfig()  # the default cluster is unchanged
    config = RLSchertEnvConfig.from_dict({"predictable": 0.25})
    assert config.dtsim_config().predictable == 0.25
    assert RLSchertEnvConfig.from_dict(config.to_dict()) == config
    for bad in (-0.5, 1.01, "half", True):
        with pytest.raises(ValueError, match=r"^predictable must be a fraction in \[0, 1\]") as e:
            RLSchertEnvConfig(predictable=bad)
        assert "\n" not in str(e.value)


def test_env_draws_which_jobs_are_predictable():
    env = RLSchertEnv(small_config(predictable=0.5, simu_len=200), table=small_table())
    env.reset(seed=1)
    share = np.mean(env.sim.predictable)
    assert 0.3 < share < 0.7
    env.reset(seed=1)
    assert np.mean(env.sim.predictable) == share  # seeded: the same sequence, the same jobs
    full = RLSchertEnv(small_config(simu_len=200), table=small_table())
    full.reset(seed=1)
    assert all(full.sim.predictable) and full.sim.n == env.sim.n


def _configure(name: str, *argv: str):
    agent = get_agent(name)
    parser = argparse.ArgumentParser()
    agent.add_arguments(parser)
    return agent.configure(AgentOptions.of(parser.parse_args(list(argv))))[0]


def test_train_option_predictable(capsys, tmp_path):
    assert _configure("rlschert", "--predictable", "0.8").predictable == 0.8
    assert _configure("rlschert").predictable == 1.0
    with pytest.raises(SystemExit):  # DeepRM sees pre-run predictions only: the option would mean nothing
        _configure("deeprm", "--predictable", "0.8")
    capsys.readouterr()
    code = main(["train", "rlschert", "--predictable", "1.5", "--jobs", "synthetic", "--iterations", "1",
                 "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "predictable must be a fraction in [0, 1]" in err
    assert not (tmp_path / "run").exists()


def _module(config: RLSchertEnvConfig):
    from schedrl.agents.rlschert.modules import module_spec

    env = RLSchertEnv(config, table=small_table())
    spec = module_spec("mlp")
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    module = spec.build()
    module.eval()
    return module


def _loaded(agent: str, config: RLSchertEnvConfig):
    return SimpleNamespace(record=SimpleNamespace(agent=agent, env_config=config.to_dict()), module=_module(config))


def test_a_checkpoint_runs_where_its_image_fits_and_is_skipped_elsewhere():
    from schedrl.agents.rlschert.policy import RLSchertPolicy
    from schedrl.agents.rlschert.sweep import CheckpointMethod

    trained = small_config()  # res_slot 4, num_nw 2, horizon 24: its own cluster, not the sweep's defaults
    method = CheckpointMethod("runs/x/checkpoint_000001", loaded=_loaded("rlschert", trained))
    assert method.label == "rlschert:checkpoint_000001"
    table = small_table()
    base = DTSimConfig(res_slot=4, simu_len=20, job_rate=0.8)
    result = sweep(table, base, "res_slot", [4, 6], sequences=2, seed=0, methods=[method])
    ran, skipped = result.cells[method.label]
    assert skipped.values == () and "trained at res_slot 4" in skipped.note and "res_slot 6" in skipped.note
    # the cell is the module acting greedily on the sweep's sequences under the checkpoint's own cluster
    expected = []
    for seq in fidelity_sequences(table, base, 2, 0):
        sim = DTSim(table, seq, trained.dtsim_config())
        run(sim, RLSchertPolicy(method.module, trained))
        r = sim.records()
        expected.append(float(np.mean((np.where(r.finish >= 0, r.finish, sim.now) - r.arrival) / r.real)))
    assert list(ran.values) == pytest.approx(expected, rel=1e-12)


def test_a_deeprm_checkpoint_keeps_its_prerun_estimates_and_other_agents_are_refused():
    from schedrl.agents.rlschert.sweep import CheckpointMethod

    trained = small_config(kill=False, estimates="prerun")
    method = CheckpointMethod("ckpt", label="DeepRM", loaded=_loaded("deeprm", trained))
    policy, config = method.policy_at(DTSimConfig(res_slot=4, simu_len=30, job_rate=0.5, predictable=0.5), small_table())
    assert config.estimates == "prerun" and config.num_kill == trained.num_kill
    assert (config.job_rate, config.simu_len, config.predictable) == (0.5, 30, 0.5)
    assert policy.config.kill is False
    with pytest.raises(ValueError, match="is a rlscheduler checkpoint; the sweep runs checkpoints of the discrete-time"):
        CheckpointMethod("ckpt", loaded=SimpleNamespace(record=SimpleNamespace(agent="rlscheduler", env_config={}),
                                                        module=None))


def test_the_sweep_reaches_checkpoints_through_the_agent_contract():
    """`schedrl dtsim sweep --checkpoint` asks the checkpoint's agent for its sweep method: the discrete-time agents
    declare the capability (`DTSimSweep.dtsim_method`) and give one, every other agent is refused in one line."""
    from schedrl.agents import get_agent
    from schedrl.agents.base import DTSimSweep
    from schedrl.agents.rlschert.sweep import CheckpointMethod
    from schedrl.cli.dtsim import sweep_agent

    method = sweep_agent(get_agent("deeprm"), "ckpt").dtsim_method("ckpt", "DeepRM",
                                                                   _loaded("deeprm", small_config(kill=False)))
    assert isinstance(method, CheckpointMethod) and method.label == "DeepRM"
    for name in ("rlscheduler", "dras-pg", "mrsch"):
        assert not isinstance(get_agent(name), DTSimSweep)
        with pytest.raises(ValueError, match=f"ckpt is a {name} checkpoint; the sweep runs checkpoints of the discrete"):
            sweep_agent(get_agent(name), "ckpt")
