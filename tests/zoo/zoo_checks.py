"""What the zoo tests share: a tiny training of each agent, its export, and the check that the export, loaded in a
process where `import ray` fails, schedules a whole episode exactly as the checkpoint does.

Each test module trains its family once (`train`, in-process on the session's Ray instance); `ray_free` runs
`episodes` on exported policies in a child Python whose `sys.modules["ray"]` is None, the parent runs it on the
checkpoints, and the two JSON answers must be equal: every decision, and every job's start and end (the event
simulator) or the episode's objective (the discrete-time cluster).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TINY = ("--seed", "0", "--iterations", "1", "--num-env-runners", "0", "--envs-per-runner", "1", "--trial-cpus", "1",
        "--validation-sequences", "1", "--eval-sequences", "1", "--keep-checkpoints", "1")
EVENT = ("--trace", "default", "--eval-jobs", "64")
DRAS = (*EVENT, "--train-fraction", "0.7", "--window", "4", "--sequence-length", "64")
MRSCH = (*EVENT, "--augment", "S4", "--sequence-length", "64")
TRAIN_ARGS: dict[str, tuple[str, ...]] = {
    "rlscheduler": (*EVENT, "--no-filtering", "--warm-start", "none", "--no-overlap-sampling", "--batch-size", "256",
                    "--sequence-length", "64", "--epochs", "1", "--minibatch-size", "128", "--validation-jobs", "64"),
    "linear": (*EVENT, "--batch-size", "256", "--sequence-length", "64"),
    "dras-pg": (*DRAS, "--batch-size", "64", "--decisions-per-update", "32"),
    "dras-dql": DRAS,
    "decima-pg": (*DRAS, "--batch-size", "64", "--decisions-per-update", "32"),
    "mrsch": MRSCH,
}
"""`schedrl train AGENT` options after `TINY` (tests/regression/make_fixtures.py's, smaller where it can be)."""
# RLSchert/DeepRM: a 10-step canvas and 3 visible jobs keep the 64-64 MLP small; the scalar MRSch's layers: a sweep
# file reaches settings the CLI has no option for
DTSIM_ENV = {"jobs": "synthetic", "res_slot": 10, "job_width": 10, "num_nw": 3, "horizon": 10, "job_len": 10,
             "backlog": 20, "simu_len": 20, "work_conserving": True}
DTSIM_PPO = {"num_env_runners": 0, "num_envs_per_env_runner": 1, "train_batch_size_per_learner": 128,
             "warm_start": False, "seed": 0}
SWEEPS: dict[str, dict] = {
    "mrsch-scalar": {"env": {"trace": "default", "augment": "S4", "sequence_length": 64, "train_fraction": 0.7},
                     "ppo": {"num_env_runners": 0, "num_envs_per_env_runner": 1, "train_batch_size": 256,
                             "minibatch_size": 128, "num_epochs": 1, "hiddens": [32], "seed": 0}},
    "rlschert": {"env": DTSIM_ENV, "ppo": DTSIM_PPO},
    "deeprm": {"env": DTSIM_ENV, "ppo": DTSIM_PPO},
}
EPISODE_JOBS = 256
"""Jobs of the event-simulator episode the export is checked on (four times the training episodes')."""


def train(agent: str, work: Path) -> Path:
    """A checkpoint of `agent` after one tiny training iteration (on the session's Ray instance)."""
    from schedrl.cli.main import main

    if agent in TRAIN_ARGS:
        assert main(["train", agent, *TINY, *TRAIN_ARGS[agent], "--out", str(work / "run")]) == 0
        return Path(json.loads((work / "run" / "summary.json").read_text())["checkpoint"])
    sweep = work / "sweep.yaml"  # JSON is YAML
    sweep.write_text(json.dumps({"name": "zoo", "agent": agent, **SWEEPS[agent], "stop": {"iterations": 1},
                                 "training": {"validation_sequences": 1, "checkpoint_every": 1},
                                 "evaluate": {"sequences": 0}, "resources": {"max_concurrent_trials": 1}}))
    assert main(["tune", str(sweep), "--out", str(work / "run")]) == 0
    return sorted((work / "run").rglob("checkpoint_*"))[-1]


CHECK_JOBS = "256"
"""`schedrl export --check-jobs`: the export's own check on shorter episodes than its default (MRSch decides slowly)."""


def export(checkpoint: Path, out: Path, *options: str) -> Path:
    from schedrl.cli.main import main

    assert main(["export", str(checkpoint), "--out", str(out), "--check-jobs", CHECK_JOBS, *options]) == 0
    return out


def held_out(record) -> tuple[list[int], int]:
    """One whole episode no training or validation saw: an evaluation-zone start (event simulator, `EPISODE_JOBS`
    jobs) or an evaluation seed (the discrete-time cluster, its episode length)."""
    from schedrl.agents import get_agent

    agent = get_agent(record.agent)
    judge = agent.judge(agent.env_config_class.from_dict(dict(record.env_config)))
    length = judge.sequence_length if judge.generated else EPISODE_JOBS
    return [int(i) for i in judge.evaluation_ids(judge.load(), 1, 0, length)], length


def episodes(policy, ids, length: int) -> dict:
    """Every decision of `policy` on the sequences `ids`, and each job's start and end (event simulator) or the
    episode's objective (discrete-time cluster), as JSON-ready lists."""
    from schedrl.agents import get_agent
    from schedrl.eval.policies import run_policy
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence
    from schedrl.zoo.decisions import DecisionLog

    record = policy.record
    agent = get_agent(record.agent)
    judge = agent.judge(agent.env_config_class.from_dict(dict(record.env_config)))
    workload = judge.load()
    log = DecisionLog(policy)
    if not judge.generated:
        config = judge.sim
        runs = []
        for s in ids:
            done = run_policy(policy, Simulator(sequence(workload, s, length), config))
            runs.append({"start": done.start.tolist(), "end": done.end.tolist()})
    else:
        runs = judge.score_policy(policy, workload, list(ids), length)
    return {"decisions": [list(c) for c in log.calls], "episodes": runs}


RAY_FREE = """
import json, sys
sys.modules["ray"] = None  # `import ray` raises ImportError from here on
sys.path.insert(0, {here!r})
import torch
torch.set_num_threads({threads})  # the parent's: float sums, and so near ties of a barely trained network, depend on it
from schedrl.agents.checkpoint import load_policy
from zoo_checks import episodes
out = {{}}
for name, (path, ids, length) in json.loads(sys.argv[1]).items():
    out[name] = episodes(load_policy(path), ids, length)
out["ray_modules"] = sorted(m for m in sys.modules if m.split(".")[0] == "ray" and sys.modules[m] is not None)
print(json.dumps(out))
"""


def ray_free(jobs: dict[str, tuple[str, list[int], int]]) -> dict:
    """`episodes` of each exported policy (name -> (directory or zoo:NAME, ids, length)), run in a child process
    where ray cannot be imported."""
    import torch

    script = RAY_FREE.format(here=str(HERE), threads=torch.get_num_threads())
    done = subprocess.run([sys.executable, "-c", script, json.dumps(jobs)],
                          capture_output=True, text=True, timeout=600, env={**os.environ})
    assert done.returncode == 0, done.stderr[-4000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out.pop("ray_modules") == []
    return out


def check_same_decisions(trained: dict[str, Path], exported: dict[str, Path]) -> dict[str, int]:
    """Each checkpoint of `trained` and its export in `exported` (by agent) schedule a held-out whole episode the
    same way, the export loaded without ray; the number of decisions compared, by agent."""
    from schedrl.agents.checkpoint import load_policy

    jobs, expected = {}, {}
    for agent, checkpoint in trained.items():
        policy = load_policy(checkpoint)
        ids, length = held_out(policy.record)
        expected[agent] = episodes(policy, ids, length)
        jobs[agent] = (str(exported[agent]), ids, length)
    actual = ray_free(jobs)
    for agent in trained:
        assert actual[agent]["decisions"] == expected[agent]["decisions"], agent
        assert actual[agent]["episodes"] == expected[agent]["episodes"], agent
        assert len(expected[agent]["decisions"]) > 10, agent
    return {agent: len(expected[agent]["decisions"]) for agent in trained}


def check_files(checkpoint: Path, exported: Path) -> dict:
    """The export holds the trained module's policy weights only, as tensors, in the precision its card gives, under
    the sha256 and size `policy.json` records; its `weights` section."""
    import torch
    from safetensors.torch import load_file

    from schedrl.agents.checkpoint import load_policy
    from schedrl.zoo.store import file_sha256

    data = json.loads((exported / "policy.json").read_text())
    weights = data["weights"]
    assert weights["sha256"] == file_sha256(exported / "weights.safetensors")
    assert weights["bytes"] == (exported / "weights.safetensors").stat().st_size
    state = load_file(exported / "weights.safetensors")
    trained = load_policy(checkpoint).module.state_dict()
    assert set(state) <= set(trained)
    assert {k: v.shape for k, v in state.items()} == {k: trained[k].shape for k in state}
    assert weights["parameters"] == sum(v.numel() for v in state.values())
    assert weights["precision"] == data["card"]["precision"]["stored"] in ("fp16", "fp32")
    assert {v.dtype for v in state.values() if v.is_floating_point()} == \
        {torch.float16 if weights["precision"] == "fp16" else torch.float32}
    return weights
