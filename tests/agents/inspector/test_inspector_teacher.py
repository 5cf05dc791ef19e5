"""The hindsight teacher (`agents/inspector/teacher.py`): its labels, its checks, its DAgger, its CLI errors."""

from __future__ import annotations

import numpy as np
import pytest

from base_rule_cases import OFFSET, block_then_burst, make_workload
from schedrl.agents.inspector import teacher
from schedrl.agents.inspector.observation import Normalisation, Observer
from schedrl.eval.hindsight import HindsightInspector
from schedrl.sim import Simulator
from schedrl.sim.config import SimConfig


def observer():
    return Observer(Normalisation(10_000.0))


def test_the_teacher_labels_the_blocking_job_reject_with_the_gap_as_weight():
    demos = teacher.Demonstrations()
    r = teacher.label_window(block_then_burst(), SimConfig(), "f1", "bsld", 1, observer(), 0.0, None, demos)
    obs, labels, weights = demos.arrays()
    assert labels[0] == 1 and weights[0] > 0.9  # bsld ~44.9 -> ~1.0, relative to the base's 44.9: a gap near 1
    assert r.rejects_taken >= 1 and r.value < 2.0 and r.base > 40
    assert (weights[labels == 0] < weights[0]).all()
    assert obs["features"].shape == (len(labels), 21)


def test_a_student_that_accepts_everything_is_labelled_on_its_own_states():
    demos = teacher.Demonstrations()
    r = teacher.label_window(block_then_burst(), SimConfig(), "f1", "bsld", 1, observer(), 0.0,
                             lambda f, m: 0, demos)
    assert r.rejects_taken == 0 and r.rejects_labelled >= 1 and r.value == pytest.approx(r.base)


def test_the_wait_penalty_changes_the_objective():
    """With a penalty on waits past a bound the teacher values holding a job past it as worse."""
    wl = block_then_burst()
    plain = teacher.objective("bsld", 100.0, 0.0)
    penal = teacher.objective("bsld", 100.0, 10.0)
    sim = Simulator(wl, SimConfig())
    from schedrl.heuristics import get_heuristic
    get_heuristic("f1").run(sim)
    assert penal(sim) > plain(sim)


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative", "rlscheduler", "slurm"])
@pytest.mark.parametrize("discipline", ["pick-and-wait", "list"])
def test_the_teacher_rolls_out_every_backfilling_exactly(backfill, discipline):
    """The continuation valued at one decision is the one the next decision finds (`verify`), for every
    backfilling the inspector trains with (Slurm's passes too: a rollout copies the simulator, its pass clock and
    plan with it): so `check_teacher` refuses none of them."""
    rng = np.random.default_rng(7)
    n = 48
    wl = make_workload(OFFSET + np.cumsum(rng.exponential(200.0, n)), rng.integers(30, 4000, n),
                       rng.integers(1, 9, n), 8)
    policy = HindsightInspector("f1", "bsld", verify=True, depth=2)
    config = SimConfig(backfill=backfill, discipline=discipline, window=5 if discipline == "list" else 0,
                       **({"node_procs": 2} if backfill == "slurm" else {}))
    Simulator(wl, config).run(policy)
    assert policy.inspections > 0
    teacher.check_teacher("hindsight", "f1", config, 2)


def test_check_teacher_refuses_what_it_cannot_be():
    from dataclasses import replace

    with pytest.raises(ValueError, match="is not a teacher"):
        teacher.check_teacher("oracle", "f1", SimConfig(), 1)
    with pytest.raises(ValueError, match="depth must be between 1 and 16"):
        teacher.check_teacher("hindsight", "f1", SimConfig(), 0)
    with pytest.raises(ValueError, match="cannot roll out --base random"):
        teacher.check_teacher("hindsight", "random", SimConfig(), 1)
    with pytest.raises(ValueError, match="backfill_choice"):
        teacher.check_teacher("hindsight", "f1", replace(SimConfig(backfill="easy"), backfill_choice="policy"), 1)
    teacher.check_teacher(None, "random", SimConfig(), 0)  # no teacher: nothing to check


@pytest.mark.parametrize("argv, message", [
    (["--teacher", "nosuch"], "is not a teacher"),
    (["--teacher", "hindsight", "--base", "random"], "cannot roll out --base random"),
    (["--teacher", "hindsight", "--teacher-depth", "0"], "--teacher-depth must be between 1 and 16"),
    (["--teacher-depth", "3"], "--teacher-depth is an option of --teacher"),
    (["--teacher-scenarios", "sdsc-sp2"], "--teacher-scenarios is an option of --teacher"),
    (["--teacher", "hindsight", "--teacher-scenarios", "nosuch"], "--teacher-scenarios: "),
    (["--teacher", "hindsight", "--teacher-scenarios", "sdsc-sp2,sdsc-sp2"], "names a scenario twice"),
    (["--teacher", "hindsight", "--teacher-scenarios", "sdsc-sp2,"], "comma-separated scenario names"),
    (["--teacher", "hindsight", "--teacher-scenarios", "rlschert-vasp"], "generated on the discrete-time cluster"),
    (["--teacher", "hindsight", "--teacher-scenarios", "dras-sdsc-sp2"], "judges wait, the run bsld"),
    (["--teacher", "hindsight", "--metric", "wait", "--teacher-scenarios", "dras-sdsc-sp2"],
     "the inspector decides differently on dras-sdsc-sp2: discipline 'list'"),
    (["--teacher", "hindsight", "--teacher-scenarios", "default"], "is on default, the run's own trace"),
])
def test_train_refuses_a_bad_teacher_in_one_error_line(argv, message, capsys, tmp_path):
    from schedrl.cli.main import main

    assert main(["train", "inspector", *argv, "--iterations", "1", "--out", str(tmp_path / "run")]) == 2
    assert not (tmp_path / "run").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "error:" in err[0] and message in err[0]


@pytest.mark.integration
def test_dagger_fits_the_network_to_the_teacher(tmp_path):
    """Round 0 (the teacher drives) and one DAgger round on the block-then-burst case: the fitted network rejects
    the blocking job and accepts the rest."""
    pytest.importorskip("ray")
    import gymnasium as gym

    from base_rule_cases import write_swf
    from schedrl.agents.inspector.agent import InspectorAgent, InspectorSettings
    from schedrl.agents.inspector.config import InspectorEnvConfig
    from schedrl.agents.inspector.env import InspectorEnv
    from schedrl.agents.inspector.policy import InspectorPolicy

    path = write_swf(block_then_burst(), tmp_path / "case.swf")
    cfg = InspectorEnvConfig(trace=str(path), cleaning="none", sequence_length=9, train_fraction=1.0,
                             norm={"time_scale": 10_000.0})
    env = InspectorEnv(cfg)
    spec = InspectorAgent().module_spec("mlp", InspectorSettings())
    spec.observation_space, spec.action_space = env.observation_space, gym.spaces.Discrete(2)
    module = spec.build()
    report = teacher.dagger(module, cfg.to_dict(), {"depth": 1, "windows": 1, "rounds": 1, "epochs": 200,
                                                    "seed": 0}, log=lambda m: None)
    assert report["decisions"] >= 2 and len(report["rounds"]) == 2
    policy = InspectorPolicy(module, cfg.to_dict())
    schedule = Simulator(block_then_burst(), cfg.sim_config()).run(policy)
    from schedrl.metrics import summarize
    assert summarize(schedule).value("bsld") < 2.0 and policy.totals["rejections"] >= 1


def constant_logits(accept: float, reject: float):
    """A policy network (`pi`, 21 features) whose logits are these whatever it sees."""
    import torch

    module = torch.nn.Module()
    module.pi = torch.nn.Sequential(torch.nn.Linear(21, 2))
    with torch.no_grad():
        module.pi[0].weight.zero_()
        module.pi[0].bias.copy_(torch.tensor([accept, reject]))
    return module


def test_auto_threshold_keeps_a_student_that_always_rejects_from_starving(tmp_path):
    """A network that always rejects (logit +0.75 over accept) starves the machine; `choose_threshold` picks the
    smallest shift that stops it on training windows, and `shift_reject` moves the network's bias by it."""

    from base_rule_cases import write_swf
    from schedrl.agents.inspector.config import InspectorEnvConfig


    rng = np.random.default_rng(11)
    n = 300
    wl = make_workload(OFFSET + np.cumsum(rng.exponential(120.0, n)), rng.integers(30, 3000, n),
                       rng.integers(1, 9, n), 8)
    path = write_swf(wl, tmp_path / "random.swf")
    cfg = InspectorEnvConfig(trace=str(path), cleaning="none", norm={"time_scale": 10_000.0})
    module = constant_logits(0.0, 0.75)  # always rejects
    whole = [teacher.Source("random", cfg.workload(), 0, n, cfg.sim_config())]
    tau, table = teacher.choose_threshold(module, cfg, whole, np.random.default_rng(0), 2, 128,
                                          grid=(0.0, 0.5, 1.0, 2.0), log=lambda m: None)
    assert [r["feasible"] for r in table] == [False, False, True, True] and tau == 1.0
    teacher.shift_reject(module, tau)
    assert float(module.pi[0].bias[1].detach()) == pytest.approx(-0.25)


def test_teacher_scenarios_add_their_training_zones_under_their_own_semantics(tmp_path):
    """`--teacher-scenarios` (lever 2): the sources are the run's training zone and each scenario's, each window
    drawn inside its zone and scheduled under its scenario's semantics; the threshold's windows come round-robin from
    all of them."""

    from base_rule_cases import write_swf
    from schedrl.agents.inspector.config import InspectorEnvConfig
    from schedrl.scenarios.scenario import Scenario
    from schedrl.scenarios.registry import standard

    rng = np.random.default_rng(5)
    paths = []
    for i, n in enumerate((400, 600)):
        wl = make_workload(OFFSET + np.cumsum(rng.exponential(100.0, n)), rng.integers(30, 3000, n),
                           rng.integers(1, 9, n), 8)
        paths.append(write_swf(wl, tmp_path / f"t{i}.swf"))
    d = standard()["sdsc-sp2"].to_dict()
    d.update(name="other", workload={"trace": str(paths[1]), "cleaning": "none"},
             split={"train_fraction": 0.5, "validation_share": 0.25},
             validation={"count": 2, "seed": 0, "jobs": 64, "placement": "disjoint"},
             evaluation={"count": 2, "seed": 0, "jobs": 64, "placement": "disjoint"})
    other = Scenario.from_dict(d)
    cfg = InspectorEnvConfig(trace=str(paths[0]), cleaning="none", sequence_length=64, train_fraction=0.7,
                             norm={"time_scale": 10_000.0})
    srcs = teacher.sources(cfg, [other])
    assert [(s.lo, s.hi) for s in srcs] == [(0, 280), (0, 300)]
    assert srcs[0].sim_config == cfg.sim_config() and srcs[1].sim_config == other.sim
    assert srcs[1].sim_config.allocation == "nodes" and srcs[1].sim_config.event_order == "rlscheduler"
    draw = np.random.default_rng(0)
    for src in srcs:
        for _ in range(50):
            start, jobs = src.window(draw, 64)
            assert src.lo <= start and start + len(jobs) <= src.hi and len(jobs) == 64


    lines = []
    tau, table = teacher.choose_threshold(constant_logits(1.0, 0.0), cfg, srcs, np.random.default_rng(0), 4, 128, grid=(0.0, 1.0),
                                          log=lines.append)
    assert "from " + str(paths[0]) + ", other" in lines[0]
    assert all(r["feasible"] and r["vs_base"] == pytest.approx(0.0) for r in table) and tau == 0.0


def test_history_features_add_what_the_recent_arrivals_say(tmp_path):
    from base_rule_cases import write_swf
    from schedrl.agents.inspector.env import InspectorEnv
    from schedrl.agents.inspector.observation import FEATURES, HISTORY_FEATURES

    path = write_swf(block_then_burst(), tmp_path / "case.swf")
    plain = InspectorEnv(trace=str(path), cleaning="none", sequence_length=9, train_fraction=1.0)
    env = InspectorEnv(trace=str(path), cleaning="none", sequence_length=9, train_fraction=1.0,
                       history_features=True)
    assert plain.observation_space["features"].shape == (len(FEATURES),)
    assert env.observation_space["features"].shape == (len(FEATURES) + len(HISTORY_FEATURES),)
    obs, _ = env.reset(seed=0)
    base, _ = plain.reset(seed=0)
    np.testing.assert_array_equal(obs["features"][:len(FEATURES)], base["features"])
    extra = obs["features"][len(FEATURES):]
    assert ((extra >= 0) & (extra <= 1)).all() and extra[4] == 1.0  # the one arrival so far asks the whole machine
    obs, *_ = env.step(1)  # reject: the burst of eight one-processor jobs arrives
    extra = obs["features"][len(FEATURES):]
    assert extra[1] > 0 and extra[4] < 0.5 and extra[5] == 0.0


@pytest.mark.integration
def test_train_with_the_teacher_records_its_warm_start(tmp_path, ray_session):
    """`schedrl train inspector --teacher hindsight`: the DAgger warm start runs on the learner, inside the budget, and
    the run's summary reports it (teacher, decisions, rounds, the threshold chosen)."""
    import json

    from schedrl.cli.main import main

    out = tmp_path / "run"
    code = main(["train", "inspector", "--iterations", "1", "--batch-size", "256", "--sequence-length", "64",
                 "--teacher", "hindsight", "--teacher-depth", "2", "--teacher-windows", "1", "--teacher-rounds", "1",
                 "--teacher-epochs", "2", "--teacher-threshold", "0.5", "--lr", "1e-8", "--reject-where", "any",
                 "--validation-sequences", "1", "--validation-jobs", "128", "--eval-sequences", "1", "--eval-jobs",
                 "128", "--trial-cpus", "1", "--out", str(out)])
    assert code == 0
    warm = json.loads((out / "summary.json").read_text())["warm_start"]
    assert warm["teacher"] == "hindsight depth 2" and warm["decisions"] > 0 and warm["threshold"] == 0.5
    assert len(warm["rounds"]) == 2


def test_a_teacher_scenario_file_is_named_by_its_absolute_path(tmp_path, monkeypatch):
    # the warm start reads --teacher-scenarios inside a Ray trial, whose working directory is its own
    from schedrl.agents.inspector.agent import scenarios_option

    (tmp_path / "mine.yaml").write_text("name: mine\n")
    monkeypatch.chdir(tmp_path)
    assert scenarios_option("mine.yaml,default") == (str(tmp_path / "mine.yaml"), "default")
    assert scenarios_option("no-such.yaml") == ("no-such.yaml",)  # left for get_scenario's own error
