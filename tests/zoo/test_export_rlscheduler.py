"""`schedrl export` of an RLScheduler checkpoint, the exported policy without ray, and `zoo:NAME` everywhere a
checkpoint is accepted; bad input (an unknown name, corrupt weights, a trace not on the machine) is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from schedrl.cli.main import main
from zoo_checks import check_same_decisions, export, train


@pytest.fixture(scope="module")
def trained(ray_session, tmp_path_factory) -> Path:
    return train("rlscheduler", tmp_path_factory.mktemp("rlscheduler"))


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory) -> Path:
    return export(trained, tmp_path_factory.mktemp("export") / "kernel-default")


@pytest.fixture
def zoo(tmp_path, monkeypatch) -> Path:
    """An empty zoo in place of the package's (`SCHEDRL_ZOO_DIR`)."""
    monkeypatch.setenv("SCHEDRL_ZOO_DIR", str(tmp_path / "zoo"))
    return tmp_path / "zoo"


def test_the_export_makes_the_checkpoints_decisions_without_ray(trained, exported):
    assert check_same_decisions({"rlscheduler": trained}, {"rlscheduler": exported})["rlscheduler"] > 100


def test_the_export_is_tensors_a_record_and_a_card(trained, exported):
    import torch
    from safetensors.torch import load_file

    from schedrl.agents.checkpoint import load_record
    from schedrl.zoo.card import command_of
    from schedrl.zoo.store import file_sha256

    data = json.loads((exported / "policy.json").read_text())
    record = load_record(trained)
    assert data["name"] == "kernel-default" and data["record"]["env_config"] == json.loads(
        json.dumps(dict(record.env_config)))
    assert data["architecture"]["network"] == "kernel"
    weights = data["weights"]
    assert weights["sha256"] == file_sha256(exported / "weights.safetensors")
    assert weights["bytes"] == (exported / "weights.safetensors").stat().st_size < 20_000
    assert weights["parameters"] == 961  # RLScheduler's kernel 32-16-8 over 8 features: "less than 1,000"
    state = load_file(exported / "weights.safetensors")  # tensors only, no pickle
    assert sorted(state) == [f"pi.{i}.{p}" for i in (0, 2, 4, 6) for p in ("bias", "weight")]  # no value network
    # half precision only where the export found every validation decision unchanged
    card = data["card"]
    assert card["precision"]["stored"] == weights["precision"] and "decisions" in card["precision"]["why"]
    assert {state[k].dtype for k in state} == {torch.float16 if weights["precision"] == "fp16" else torch.float32}
    assert card["agent"] == "rlscheduler" and card["scenario"] == "none" and card["seed"] == 0
    assert card["command"] == command_of(record.to_dict())  # the trial's sys.argv: here pytest's
    assert card["budget"]["iterations"] == 1 and card["budget"]["env_steps"] == 256
    assert card["trace"] == {"name": "default", "sha256": record.trace_sha256}
    assert card["machine"] == {"procs": 256.0} and card["normalisation"] == dict(record.env_config)["norm"]
    assert card["validation"]["metric"] == "bsld" and card["validation"]["sequences"] == 1
    assert card["schedrl_version"] == "0.1.0" and len(card["git_commit"]) in (40, len("unknown"))
    readme = (exported / "README.md").read_text()
    assert readme.startswith("# kernel-default") and weights["sha256"] in readme and "procs 256" in readme


def test_export_add_then_zoo_name_everywhere_a_checkpoint_goes(exported, trained, zoo, capsys):
    assert main(["export", str(trained), "--out", str(zoo.parent / "out"), "--name", "kernel-default", "--add",
                 "--check-jobs", "256"]) == 0
    manifest = json.loads((zoo / "manifest.json").read_text())
    entry = manifest["policies"]["kernel-default"]
    assert entry["directory"] == "policies/kernel-default" and entry["agent"] == "rlscheduler"
    assert entry["weights"]["bytes"] == (zoo / "policies" / "kernel-default" / "weights.safetensors").stat().st_size
    capsys.readouterr()
    assert main(["zoo", "list"]) == 0
    assert "kernel-default  rlscheduler  none" in capsys.readouterr().out
    assert main(["zoo", "show", "kernel-default"]) == 0
    assert capsys.readouterr().out.startswith("# kernel-default")
    assert main(["evaluate", "zoo:kernel-default", "--sequences", "1", "--jobs", "64", "--json"]) == 0
    out = capsys.readouterr()
    rows = {r["policy"] for r in json.loads(out.out)["results"]}
    assert "checkpoint:zoo:kernel-default" in rows and "warning" not in out.err  # its own machine: no warning
    assert main(["compare", "--trace", "default", "--policies", "sjf,zoo:kernel-default", "--sequences", "1",
                 "--jobs", "64", "--json"]) == 0
    assert {r["policy"] for r in json.loads(capsys.readouterr().out)["results"]} == {"sjf", "zoo:kernel-default"}
    assert main(["simulate", "--trace", "default", "--policy", "zoo:kernel-default", "--jobs", "64", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["jobs"] == 64


def test_zoo_policy_on_another_machine_warns_once(exported, tmp_path, capsys):
    other = tmp_path / "other.swf.gz"
    assert main(["traces", "generate", "lublin", "--jobs", "300", "--nodes", "64", "--seed", "5", "--out",
                 str(other)]) == 0
    capsys.readouterr()
    assert main(["compare", "--trace", str(other), "--policies", f"sjf,checkpoint:{exported}", "--sequences", "2",
                 "--jobs", "64"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings == ["schedrl: warning: RL(kernel-default): it was trained on a machine of procs 256; this "
                        "simulation has procs 64"]


def test_an_unknown_zoo_name_says_what_it_might_be(exported, zoo, capsys):
    from schedrl.zoo import manifest

    manifest.add(exported, "kernel-default")
    capsys.readouterr()
    assert main(["evaluate", "zoo:kernel-defualt"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("schedrl evaluate: error: zoo:kernel-defualt: no such policy in the zoo (did you mean "
                   "kernel-default?; `schedrl zoo list` shows them)")
    assert main(["simulate", "--trace", "default", "--policy", "zoo:kernl"]) == 2
    assert "did you mean kernel-default?" in capsys.readouterr().err


def test_corrupt_weights_fail_in_one_line(exported, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(exported, broken)
    data = bytearray((broken / "weights.safetensors").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (broken / "weights.safetensors").write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["evaluate", str(broken), "--sequences", "1", "--jobs", "64"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"schedrl evaluate: error: {broken / 'weights.safetensors'}: checksum mismatch")


def test_a_trace_not_on_this_machine_says_where_it_looked_and_how_to_fetch_it(exported, tmp_path, monkeypatch,
                                                                             capsys):
    moved = tmp_path / "moved"
    shutil.copytree(exported, moved)
    data = json.loads((moved / "policy.json").read_text())
    data["record"]["env_config"]["trace"] = "HPC2N"
    (moved / "policy.json").write_text(json.dumps(data))
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", str(tmp_path / "none"))
    monkeypatch.setenv("SCHEDRL_CACHE_DIR", str(tmp_path / "cache"))
    capsys.readouterr()
    assert main(["evaluate", str(moved), "--sequences", "1", "--jobs", "64"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "HPC2N-2002-2.2-cln.swf.gz is not available locally (looked in " in err[0]
    assert "schedrl traces fetch HPC2N" in err[0]


def test_the_export_checks_its_input(trained, tmp_path, capsys):
    capsys.readouterr()
    assert main(["export", str(tmp_path / "nothing"), "--out", str(tmp_path / "x")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["export", str(trained), "--out", str(tmp_path / "x"), "--name", "Bad Name", "--add"]) == 2
    assert "a zoo name is lowercase letters" in capsys.readouterr().err


def test_the_python_api_acts_on_a_checkpoint_as_on_its_export(trained, exported):
    """`schedrl.load_policy(CHECKPOINT)` turns the RLModule into its ray-free network for `act`: the same actions as
    the export's on the observations of the run's own env."""
    import gymnasium as gym

    import schedrl

    checkpoint, export_ = schedrl.load_policy(str(trained)), schedrl.load_policy(str(exported))
    assert checkpoint.kind == export_.kind == "learned" and checkpoint.network is not checkpoint.module
    env = gym.make(checkpoint.env_id, **checkpoint.env_config)
    observation, _ = env.reset(seed=0)
    for _ in range(100):
        action = checkpoint.act(observation)
        assert action == export_.act(observation)
        observation, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
