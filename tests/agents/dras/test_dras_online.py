"""DRAS online mode (§V-D/E): the policy keeps learning while it schedules the evaluation sequences."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from dras_workloads import LEARNING_JOBS, LEARNING_MACHINE, LEARNING_OPTIMUM, make_workload

from schedrl.agents.dras.config import DRASEnvConfig
from schedrl.agents.dras.env import DRASEnv
from schedrl.agents.dras.learner import PositionBaseline
from schedrl.agents.dras.modules import module_spec
from schedrl.agents.dras.online import OnlineDQLSettings, OnlineSettings, checkpoint_baseline, online_schedules
from schedrl.agents.dras.observation import StateScales
from schedrl.metrics import summarize
from schedrl.workload.swf import write_swf

LEARNING_ENV = {"window": 2, "sequence_length": 4, "w1": 0.0, "w2": 0.0, "w3": 1.0}


@pytest.fixture
def setup(tmp_path):
    workload = make_workload(LEARNING_JOBS, LEARNING_MACHINE)
    trace = str(write_swf(workload, tmp_path / "learning.swf"))
    cfg = DRASEnvConfig.from_dict({**LEARNING_ENV, "trace": trace,
                                   "norm": StateScales.from_trace(workload).to_dict()})
    env = DRASEnv(cfg)
    torch.manual_seed(0)
    spec = module_spec("pg")
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    module = spec.build()
    return cfg, env.workload, module


def episode_return(cfg, workload, schedule_module) -> float:
    """The greedy return of `schedule_module` on the learning instance."""
    env = DRASEnv(cfg, workload=workload)
    obs, _ = env.reset(options={"start": 0})
    total, done = 0.0, False
    from ray.rllib.core.columns import Columns

    while not done:
        batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in obs.items()}}
        with torch.no_grad():
            logits = schedule_module._forward(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
        obs, r, done, _, _ = env.step(int(np.argmax(np.where(obs["action_mask"] > 0, logits, -np.inf))))
        total += r
    return total


@pytest.mark.integration  # a training (online learning)
def test_online_learning_reaches_the_optimum_and_leaves_the_frozen_module_alone(setup):
    cfg, workload, module = setup
    before = [p.detach().clone() for p in module.parameters()]
    settings = OnlineSettings(lr=0.01, batch_size=20, decisions_per_update=10, seed=1)
    lines = []
    schedules, learner = online_schedules(module, cfg, workload, [0] * 400, 4, settings, progress=lines.append)
    assert len(schedules) == 400 and len(lines) == 400 and lines[-1].startswith("online 400/400")
    assert learner.updates > 0 and learner.decisions >= 400 * 3
    # the frozen module is untouched; the learner's copy has moved
    assert all(torch.equal(a, b) for a, b in zip(before, module.parameters()))
    assert any(not torch.equal(a, b) for a, b in zip(module.parameters(), learner.module.parameters()))
    # the online copy learned the hand-checked optimal two-level schedule; the untrained module had not
    assert episode_return(cfg, workload, module) < LEARNING_OPTIMUM
    assert episode_return(cfg, workload, learner.module) == pytest.approx(LEARNING_OPTIMUM)
    # the reported schedules are the ones run while learning: the last ones are the optimum's
    busy_late = [summarize(s).utilization for s in schedules[-5:]]
    busy_early = [summarize(s).utilization for s in schedules[:5]]
    assert np.mean(busy_late) >= np.mean(busy_early)


@pytest.mark.integration  # a training (online learning)
def test_online_dql_learns_the_optimum(setup):
    cfg, workload, _ = setup
    env = DRASEnv(cfg, workload=workload)
    torch.manual_seed(0)
    spec = module_spec("dql")
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    module = spec.build()

    def greedy(m) -> float:
        obs, _ = env.reset(options={"start": 0})
        total, done = 0.0, False
        while not done:
            with torch.no_grad():
                q = m.compute_q_values({"obs": {k: torch.as_tensor(v)[None] for k, v in obs.items()}})
            obs, r, done, _, _ = env.step(int(torch.argmax(list(q.values())[0][0])))
            total += r
        return total

    settings = OnlineDQLSettings(lr=0.01, epsilon=0.3, batch_size=16, learning_starts=16, decisions_per_step=2,
                                 target_update_every=20, seed=1)
    _, learner = online_schedules(module, cfg, workload, [0] * 200, 4, settings)
    assert learner.updates > 100 and learner.decisions >= 600
    assert greedy(module) < LEARNING_OPTIMUM
    assert greedy(learner.module) == pytest.approx(LEARNING_OPTIMUM)


def test_the_baseline_continues_from_the_checkpoint(tmp_path):
    import pickle

    b = PositionBaseline()
    b.add(np.array([0, 1, 1]), np.array([2.0, 4.0, 6.0]))
    state_dir = tmp_path / "ckpt" / "learner_group" / "learner"
    state_dir.mkdir(parents=True)
    with open(state_dir / "state.pkl", "wb") as f:
        pickle.dump({"dras_baselines": {"default_policy": b.get_state()}}, f)
    restored = checkpoint_baseline(tmp_path / "ckpt")
    assert restored(np.array([0, 1, 2])).tolist() == [2.0, 5.0, 0.0]
    assert checkpoint_baseline(tmp_path / "nothing")(np.array([0])).tolist() == [0.0]


@pytest.mark.parametrize("fields, message", [
    ({"lr": 0.0}, "learning rate must be > 0"),
    ({"lr": 1e-3, "epsilon": 1.5, "dql": True}, r"online DQL needs lr > 0 and 0 <= epsilon <= 1"),
    ({"lr": 1e-3, "batch_size": 5, "decisions_per_update": 10}, r"decisions_per_update \(10\) <= batch_size \(5\)"),
])
def test_bad_online_settings(fields, message):
    cls = OnlineDQLSettings if fields.pop("dql", False) else OnlineSettings
    with pytest.raises(ValueError, match=message):
        cls(**fields)


def test_evaluate_online_adds_a_column_the_library_reproduces(ray_session, tmp_path, capsys):
    """`schedrl evaluate CKPT --online`: the frozen column unchanged, one more column learning online."""
    import json
    from pathlib import Path

    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import load_policy
    from schedrl.cli.main import main

    out = tmp_path / "run"
    assert main(["train", "dras-pg", "--trace", "default", "--train-fraction", "0.7", "--window", "4",
                 "--iterations", "1", "--batch-size", "64", "--decisions-per-update", "32", "--sequence-length", "64",
                 "--envs-per-runner", "1", "--validation-sequences", "1", "--eval-sequences", "1", "--eval-jobs", "64",
                 "--out", str(out)]) == 0
    ckpt = Path(json.loads((out / "summary.json").read_text())["checkpoint"])
    capsys.readouterr()
    assert main(["evaluate", str(ckpt), "--sequences", "2", "--jobs", "64", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    frozen = {r["policy"]: r["per_sequence"] for r in plain["results"]}
    assert plain["note"].startswith("held out: jobs ")  # its own trace's held-out part, not "another trace"
    assert main(["evaluate", str(ckpt), "--sequences", "2", "--jobs", "64", "--json", "--online"]) == 0
    captured = capsys.readouterr()
    table = json.loads(captured.out)
    values = {r["policy"]: r["per_sequence"] for r in table["results"]}
    assert "RL online 2/2" in captured.err
    assert values["RL"] == frozen["RL"] and list(values)[-2:] == ["RL", "RL online"]
    policy = load_policy(ckpt)
    agent = get_agent("dras-pg")
    env = agent.env_config_class.from_dict(dict(policy.record.env_config))
    judge = agent.judge(env)
    expected = agent.online_metrics(policy, ckpt, env, judge.load(), table["starts"], 64)
    assert values["RL online"] == pytest.approx([m.value("wait") for m in expected])
    # the methods table gets a "<label> online" row too
    assert main(["evaluate", str(ckpt), "--sequences", "2", "--jobs", "64", "--json", "--online",
                 "--metrics", "wait,max_wait,slowdown"]) == 0
    methods = json.loads(capsys.readouterr().out)
    assert methods["trained"] == ["dras-pg", "dras-pg online"]
    assert methods["methods"]["dras-pg online"]["mean"]["wait"] == pytest.approx(
        np.mean([m.avg_wait for m in expected]))
    assert main(["evaluate", str(ckpt), "--online", "--policies", "fcfs"]) == 2
    assert "--online reports beside the agent's own baselines" in capsys.readouterr().err
    # `schedrl select` re-scores a DRAS run's checkpoints through the agent, in the run's validation zone
    assert main(["select", str(out), "--sequences", "2", "--jobs", "64"]) == 0
    selection = json.loads((out / "selection.json").read_text())
    lo, hi = judge.split_range(len(judge.load()), validation=True)
    assert all(lo <= s and s + 64 <= hi for s in selection["starts"])
    assert selection["scores"][str(ckpt)] == pytest.approx(
        np.mean(judge.score_policy(policy, judge.load(), selection["starts"], 64)))
    assert {"FCFS+EASY", "Optimization"} <= set(selection["baselines"])
    capsys.readouterr()
    assert main(["select", str(out), "--jobs", "100000"]) == 2
    err = capsys.readouterr().err
    assert "does not fit the" in err and "validation zone" in err and "Traceback" not in err
