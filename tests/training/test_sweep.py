"""Sweep files: validation errors name the file and the key, trial expansion, the param space Tune
receives, and one tiny real sweep through Ray Tune with its report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from schedrl.training.driver import PreparedEnv, build_param_space, env_key
from schedrl.agents.rlscheduler.agent import PPO_CONFIG_PATHS
from schedrl.training.sweep import expand_trials
from schedrl.training.sweep_file import load_sweep, sweep_from_dict
from schedrl.training.yaml_reader import SweepError

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO / "tune_configs").glob("*.yaml"))
TINY = {
    "env": {"trace": "default", "sequence_length": 32},
    "ppo": {"num_env_runners": 0, "num_envs_per_env_runner": 1, "train_batch_size_per_learner": 128, "num_epochs": 1},
    "stop": {"iterations": 1},
}


def write(tmp_path: Path, data: dict, name: str = "sweep.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def with_(base: dict, **sections) -> dict:
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    for key, value in sections.items():
        out[key] = {**out.get(key, {}), **value} if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def test_unknown_key_names_the_file_the_key_path_and_a_suggestion(tmp_path):
    path = write(tmp_path, with_(TINY, ppo={"learning_rate": 1e-3}))
    with pytest.raises(SweepError, match=r"sweep\.yaml: unknown key 'ppo\.learning_rate' \(did you mean lr\?\)"):
        load_sweep(path)


@pytest.mark.parametrize("data, message", [
    (with_(TINY, bogus=1), r"unknown key 'bogus' \(valid: name, agent"),
    (with_(TINY, env={"seq_length": 3}), r"unknown key 'env\.seq_length' \(did you mean sequence_length\?\)"),
    (with_(TINY, resources={"num_env_runners": 2}), r"unknown key 'resources\.num_env_runners' \(did you mean ppo\.num_env_runners\?\)"),
    (with_(TINY, stop={"iterations": 1, "walltime": "1h"}), r"unknown key 'stop\.walltime'"),
    (with_(TINY, scheduler={"type": "asha", "perturbation_interval": 2}), r"unknown key 'scheduler\.perturbation_interval'"),
    (with_(TINY, param_space={"lr": {"grid": [1e-3]}}), r"unknown key 'param_space\.lr' .*did you mean ppo\.lr\?"),
    (with_(TINY, param_space={"ppo.lrr": {"grid": [1e-3]}}), r"unknown key 'param_space\.ppo\.lrr' \(did you mean lr\?\)"),
    (with_(TINY, evaluate={"trace": ["SDSC-SP2"]}), r"unknown key 'evaluate\.trace' \(did you mean traces\?\)"),
])
def test_unknown_keys_anywhere_are_rejected(data, message):
    with pytest.raises(SweepError, match=r"^x\.yaml: " + message):
        sweep_from_dict(data, source="x.yaml")


@pytest.mark.parametrize("data, message", [
    (with_(TINY, ppo={"lr": {"normal": [0, 1]}}), r"'ppo\.lr' must be float; got \{'normal': \[0, 1\]\} \(search spaces"),
    (with_(TINY, ppo={"lr": {"uniform": [1e-3]}}), r"'ppo\.lr': \{uniform: \[lo, hi\]\} takes two bounds"),
    (with_(TINY, ppo={"lr": {"loguniform": [0, 1e-3]}}), r"'ppo\.lr': loguniform needs lo < hi and lo > 0"),
    (with_(TINY, ppo={"lr": {"uniform": [1e-2, 1e-3]}}), r"'ppo\.lr': uniform needs lo < hi"),
    (with_(TINY, ppo={"lr": {"grid": []}}), r"'ppo\.lr': \{grid: \.\.\.\} takes a non-empty list"),
    (with_(TINY, ppo={"num_epochs": {"uniform": [1, 4]}}), r"'ppo\.num_epochs' holds int: uniform cannot sample it \(use randint"),
    (with_(TINY, ppo={"num_epochs": {"randint": [1.5, 4]}}), r"'ppo\.num_epochs\.randint' must be int; got 1\.5"),
    (with_(TINY, env={"backfill": {"uniform": [0, 1]}}), r"'env\.backfill' holds str: uniform cannot sample it"),
    (with_(TINY, env={"sequence_length": {"randint": [16, 64]}}), r"'env\.sequence_length': environment fields take grid or choice"),
    (with_(TINY, env={"norm": {"grid": [{}]}}), r"'env\.norm' cannot be searched"),
    (with_(TINY, ppo={"num_env_runners": {"grid": [0, 1]}}), r"'ppo\.num_env_runners' cannot be searched"),
    (with_(TINY, param_space={"ppo.lr": 1e-3}), r"'param_space\.ppo\.lr' must be a search space"),
    (with_(TINY, ppo={"lr": {"grid": [1e-3]}}, param_space={"ppo.lr": {"grid": [1e-4]}}), r"'ppo\.lr' is searched twice"),
    (with_(TINY, ppo={"lr": 1e-3}, param_space={"ppo.lr": {"grid": [1e-4]}}), r"'ppo\.lr' is set both under ppo"),
    (with_(TINY, stop={"time_budget": {"grid": [1, 2]}}), r"'stop\.time_budget': search spaces belong under env, ppo"),
    (with_(TINY, scheduler={"type": "pbt", "hyperparam_mutations": {"env.backfill": {"choice": ["none"]}}}),
     r"'scheduler\.hyperparam_mutations\.env\.backfill': PBT mutates ppo\.<field> only"),
    (with_(TINY, scheduler={"type": "pbt", "hyperparam_mutations": {"ppo.lr": {"uniform": [1e-4, 1e-3]}}},
           env={"backfill": {"grid": ["none", "easy"]}}), r"scheduler pbt copies trials onto each other"),
    (with_(TINY, scheduler={"type": "pbt"}), r"scheduler: pbt needs hyperparam_mutations"),
    (with_(TINY, scheduler={"type": "asha", "grace_period": 5}), r"scheduler: asha's grace_period=5 exceeds max_t=1"),
    (with_(TINY, scheduler="asha", training={"validate_every": 3}),
     r"scheduler: asha reads schedrl/validation at every iteration; training\.validate_every must be 1 with it, got 3"),
])
def test_bad_search_spaces_are_rejected(data, message):
    with pytest.raises(SweepError, match=r"^x\.yaml: " + message):
        sweep_from_dict(data, source="x.yaml")


@pytest.mark.parametrize("data, message", [
    (with_(TINY, ppo={"lr": "fast"}), r"'ppo\.lr' must be float; got 'fast'"),
    (with_(TINY, ppo={"num_epochs": 2.5}), r"'ppo\.num_epochs' must be int; got 2\.5"),
    (with_(TINY, ppo={"num_epochs": True}), r"'ppo\.num_epochs' must be int; got True"),
    (with_(TINY, ppo={"lr": -1e-3}), r"ppo: invalid PPOSettings: lr=-0\.001 must be > 0"),
    (with_(TINY, ppo={"lr": {"loguniform": [1e-4, 2.0e+1]}, "gamma": 2.0}),
     r"ppo, ppo\.lr=0\.0001: invalid PPOSettings: gamma=2\.0 must be in \[0, 1\]"),
    (with_(TINY, ppo={"minibatch_size": {"grid": [64, 256]}}), r"ppo, ppo\.minibatch_size=256: invalid PPOSettings: minibatch_size=256"),
    (with_(TINY, env={"metric": "makespan"}), r"env: metric must be one of"),
    (with_(TINY, env={"backfill": {"grid": ["none", "eazy"]}}), r"env\.backfill='eazy': backfill must be one of none, easy"),
    (with_(TINY, env={"cleaning": "strict"}), r"env: unknown cleaning preset 'strict'"),
    (with_(TINY, env={"train_starts": [1, 2]}), r"'env\.train_starts' is derived from the data before training"),
    (with_(TINY, model={"grid": ["kernel", "resnet"]}), r"unknown model 'resnet'"),
    (with_(TINY, stop={"iterations": None}), r"stop: give iterations, time_budget and/or total_time_budget"),
    (with_(TINY, stop={"time_budget": "20 minutes"}), r"stop: time_budget must look like 90s, 20m or 1\.5h"),
    (with_(TINY, num_samples=0), r"'num_samples' must be >= 1"),
    (with_(TINY, agent="dras"), r"'agent' must be one of rlscheduler"),
    (with_(TINY, name="../escape"), r"'name' must be a plain directory name"),
    (with_(TINY, metric="env_runners/episode_return_mean"), r"give 'mode' \(min or max\)"),
    (with_(TINY, env={"metric": {"grid": ["bsld", "utilization"]}}), r"env\.metric mixes lower- and higher-is-better metrics"),
    (with_(TINY, training={"validation_sequences": 0}), r"metric schedrl/validation needs training\.validation_sequences >= 1"),
])
def test_bad_values_are_rejected_through_the_dataclasses(data, message):
    with pytest.raises(SweepError, match=r"^x\.yaml: " + message):
        sweep_from_dict(data, source="x.yaml")


def test_yaml_problems_name_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("env: {trace: default\n")
    with pytest.raises(SweepError, match=r"broken\.yaml:2: not valid YAML \(.*\)$"):  # one line, with the line
        load_sweep(path)
    path.write_text("- a list\n")
    with pytest.raises(SweepError, match=r"broken\.yaml: a sweep file is a mapping"):
        load_sweep(path)


def test_values_are_normalised_and_mode_follows_the_metric():
    spec = sweep_from_dict(with_(TINY, ppo={"lr": "3e-4", "vf_lr": {"loguniform": ["1e-4", "1e-3"]}},
                                 env={"metric": "utilization"}, model={"choice": ["kernel", "mlp_v2"]}))
    assert spec.settings.lr == 3e-4  # YAML 1.1 reads 3e-4 (no dot) as a string
    assert spec.param_space["ppo.vf_lr"].values == (1e-4, 1e-3)
    assert set(spec.param_space) == {"ppo.vf_lr", "model"}
    assert spec.mode == "max" and spec.metric == "schedrl/validation"
    assert sweep_from_dict(with_(TINY, env={"metric": "wait"})).mode == "min"
    asha = sweep_from_dict(with_(TINY, stop={"iterations": 7}, scheduler="asha"))
    assert asha.scheduler == "asha" and asha.scheduler_options.max_t == 7
    assert sweep_from_dict(TINY, default_name="from_file").name == "from_file"


def test_dry_run_expansion_counts_grid_times_samples():
    spec = sweep_from_dict(with_(TINY, env={"backfill": {"grid": ["none", "easy"]}},
                                 ppo={"lr": {"loguniform": [1e-4, 1e-3]}, "seed": {"grid": [0, 1, 2]}},
                                 param_space={"ppo.entropy_coeff": {"choice": [0.0, 0.01]}}, num_samples=2))
    trials = expand_trials(spec)
    assert spec.grid_size() == 6 and spec.num_trials() == len(trials) == 12
    combos = [(t["env.backfill"], t["ppo.seed"]) for t in trials]
    assert all(combos.count(c) == 2 for c in set(combos)) and len(set(combos)) == 6
    assert all(1e-4 <= t["ppo.lr"] <= 1e-3 and t["ppo.entropy_coeff"] in (0.0, 0.01) for t in trials)
    assert [g["backfill"] for g in spec.env_variants()] == ["none", "easy"]
    assert len(expand_trials(sweep_from_dict(with_(TINY, num_samples=3)))) == 3


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_sweep_validates(path):
    spec = load_sweep(path)
    assert spec.name == path.stem
    assert len(expand_trials(spec)) == spec.num_trials() >= 2


def test_shipped_sweeps_cover_the_issue():
    names = {p.stem for p in SHIPPED}
    assert {"rlscheduler_paper_lublin", "rlscheduler_paper_sdsc_sp2", "rlscheduler_lr_entropy",
            "rlscheduler_generalisation"} <= names
    lublin = load_sweep(REPO / "tune_configs" / "rlscheduler_paper_lublin.yaml")
    assert lublin.env.trace == "lublin_256" and lublin.env.preset == "rlscheduler" and lublin.env.metric == "bsld"
    assert lublin.param_space["env.backfill"].values == ("none", "rlscheduler")
    general = load_sweep(REPO / "tune_configs" / "rlscheduler_generalisation.yaml")
    assert set(general.param_space["env.trace"].values) == set(general.evaluate.traces) == {"lublin_256", "SDSC-SP2", "HPC2N"}
    assert load_sweep(REPO / "tune_configs" / "rlscheduler_lr_entropy.yaml").scheduler == "asha"


def test_searchable_ppo_fields_sit_where_build_ppo_config_puts_them():
    from schedrl.agents.rlscheduler.ppo import PPOSettings, build_ppo_config

    changed = {"gamma": 0.5, "lambda_": 0.5, "clip_param": 0.3, "lr": 0.123, "vf_lr": 0.456, "target_kl": 0.07,
               "num_epochs": 3, "train_batch_size_per_learner": 640, "minibatch_size": 64, "entropy_coeff": 0.02,
               "vf_clip_param": 5.0, "seed": 42, "warm_start": "f1"}
    assert set(changed) == set(PPO_CONFIG_PATHS)
    config = build_ppo_config(replace(PPOSettings(), **changed), "schedrl/RLScheduler-v0", {}).to_dict()
    for name, path in PPO_CONFIG_PATHS.items():
        value = config
        for part in path:
            value = value[part]
        assert value == changed[name], name


def test_param_space_places_search_spaces_and_prepared_values_per_environment():
    from ray.tune.search.variant_generator import generate_variants

    from schedrl.training.callbacks import VALIDATION_KEY
    from schedrl.training.sweep import trial_settings as trial_ppo, trial_values
    from schedrl.agents.rlscheduler.modules import module_spec

    spec = sweep_from_dict(with_(TINY, env={"backfill": {"grid": ["none", "easy"]}},
                                 ppo={"lr": {"grid": [1e-3, 2e-3]}, "train_batch_size_per_learner": {"grid": [128, 256]}},
                                 model={"choice": ["kernel", "mlp_v2"]}, training={"filter_phase1_iterations": 4}))
    table = {env_key({"backfill": b}, ("backfill",)): PreparedEnv(
                 f"backfill={b}",
                 {**replace(spec.env, backfill=b).to_dict(), "norm": {"wait": i + 1.0}, "train_starts": [i, i + 1],
                  "filter_phase1_episodes": 1, "filter_phase1_iterations": 4},
                 {"starts": [i], "heuristics": {}}, None)
             for i, b in enumerate(["none", "easy"])}
    space = build_param_space(spec, table)
    variants = [config["config"] for _, config in generate_variants({"config": space})]
    assert len(variants) == 8
    for config in variants:
        i = ["none", "easy"].index(config["env_config"]["backfill"])
        assert config["env_config"]["norm"] == {"wait": i + 1.0}
        assert config["env_config"]["train_starts"] == [i, i + 1]
        assert config["learner_config_dict"][VALIDATION_KEY]["starts"] == [i]
        # phase 1 lasts 4 iterations of batch / 32-job episodes, over one env
        assert config["env_config"]["filter_phase1_episodes"] == 4 * config["_train_batch_size_per_learner"] // 32
        assert config["lr"] in (1e-3, 2e-3) and config["env_config"]["trace"] == "default"
        values = trial_values(spec, config)
        assert config["_rl_module_spec"] == module_spec(values["model"])
        assert trial_ppo(spec, config).train_batch_size_per_learner == values["ppo.train_batch_size_per_learner"]


def test_schedulers_are_built_on_the_config_paths():
    from ray.tune.schedulers import ASHAScheduler, PopulationBasedTraining

    from schedrl.training.driver import _scheduler_object

    asha = _scheduler_object(sweep_from_dict(with_(TINY, scheduler={"type": "asha", "grace_period": 2},
                                                   stop={"iterations": 10})))
    assert isinstance(asha, ASHAScheduler)
    pbt = _scheduler_object(sweep_from_dict(with_(TINY, scheduler={
        "type": "pbt", "perturbation_interval": 2,
        "hyperparam_mutations": {"ppo.lr": {"loguniform": [1e-4, 1e-3]}, "ppo.vf_lr": {"choice": [1e-3, 2e-3]}}})))
    assert isinstance(pbt, PopulationBasedTraining)
    assert set(pbt._hyperparam_mutations) == {"lr", "learner_config_dict"}
    assert pbt._hyperparam_mutations["learner_config_dict"]["vf_lr"] == [1e-3, 2e-3]


def test_tiny_sweep_runs_two_trials_and_reports_each_group(tmp_path, ray_session):
    from schedrl.training.driver import SWEEP_FILE, run_experiment as run_sweep
    from schedrl.training.report import write_report
    from schedrl.agents.checkpoint import load_policy

    spec = sweep_from_dict(with_(TINY, name="tiny", env={"backfill": {"grid": ["none", "easy"]}},
                                 training={"filter_phase1_iterations": 1, "validation_sequences": 1},
                                 resources={"max_concurrent_trials": 1}, evaluate={"sequences": 1, "jobs": 64}))
    run = run_sweep(spec, tmp_path, verbose=False)
    assert run.finished and len(run.results) == 2 and not run.results.errors
    assert sorted(r.config["env_config"]["backfill"] for r in run.results) == ["easy", "none"]
    for r in run.results:
        assert r.metrics["training_iteration"] == 1
        assert r.config["env_config"]["train_starts"] and r.config["env_config"]["filter_phase1_episodes"] > 0
        assert load_policy(r.checkpoint.path).env_config["backfill"] == r.config["env_config"]["backfill"]
    recorded = json.loads((tmp_path / SWEEP_FILE).read_text())
    assert recorded["spec"] == spec.to_data() and len(recorded["environments"]) == 2
    text = write_report(spec, run.results, tmp_path)
    assert "backfill=none" in text and "backfill=easy" in text
    rows = (tmp_path / "results.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("group,trial,env.backfill,schedrl/validation")
    assert (tmp_path / "trials.csv").exists() and (tmp_path / "sweep_curves.png").stat().st_size > 0
    with pytest.raises(FileExistsError, match="already holds a run"):
        run_sweep(spec, tmp_path, verbose=False)


def test_readme_example_validates_and_every_key_is_documented():
    import re
    from dataclasses import fields

    from schedrl.training.sweep import AshaOptions, EvaluateSpec, PBTOptions, ResourceSpec, StopSpec, TrainingOptions

    readme = (REPO / "tune_configs" / "README.md").read_text()
    block = re.search(r"<!-- sweep-example -->\s*```yaml\n(.+?)\n```", readme, re.S)
    assert block, "tune_configs/README.md has no sweep-example block"
    spec = sweep_from_dict(yaml.safe_load(block.group(1)), source="README")
    assert spec.num_trials() == 8 and spec.scheduler == "asha" and spec.evaluate.traces == ("lublin_256", "SDSC-SP2")
    top = ["name", "agent", "env", "ppo", "model", "param_space", "num_samples", "scheduler", "metric", "mode",
           "stop", "resources", "training", "evaluate"]
    documented = set(re.findall(r"^\| `(\w+)` \|", readme, re.M))
    keys = set(top) | {f.name for cls in (StopSpec, ResourceSpec, TrainingOptions, EvaluateSpec, AshaOptions,
                                          PBTOptions) for f in fields(cls)}
    assert keys <= documented, keys - documented


def test_searched_path_values_reach_the_trials_absolute(tmp_path, monkeypatch):
    # Tune runs each trial in its own directory: a searched file named relative to where the sweep started must
    # reach the trials (and the preparation table's keys) as an absolute path, other values as given
    from schedrl.agents.rlschert.config import RLSchertEnvConfig
    from schedrl.training.driver import portable_value

    (tmp_path / "jobs.csv").write_text("not read here\n")
    monkeypatch.chdir(tmp_path)
    env = RLSchertEnvConfig()
    assert portable_value(env, "jobs", "jobs.csv") == str(tmp_path / "jobs.csv")
    assert portable_value(env, "jobs", "synthetic") == "synthetic"
    assert portable_value(env, "res_slot", 12) == 12
    assert portable_value(env, "no_such_field", 1) == 1  # refused by the config: passed on as given
