"""Make the regression fixtures: a tiny trained module of each agent and the numbers it must reproduce.

    .venv/bin/python tests/regression/make_fixtures.py                  # every agent (~15 min on 2 busy cores)
    .venv/bin/python tests/regression/make_fixtures.py rlschert mrsch   # some agents
    .venv/bin/python tests/regression/make_fixtures.py --training       # expected/training_rlscheduler.json

Regenerating is legitimate only when a numerical change is intended (a new observation, reward, network or
simulator rule), and the commit says which change moved which numbers. To check a refactor, run the tests
(`test_fixture_policies.py`, `test_training_determinism.py`); never regenerate to make them pass.

Make them from a clean export of the commit whose numbers they pin, so no uncommitted edit leaks in (the
committed ones come from 0ddbc26, before the agent-contract refactor):

    d=$(mktemp -d); git archive COMMIT | tar -x -C $d
    mkdir -p $d/tests/regression; cp tests/regression/*.py $d/tests/regression/
    (cd $d && PYTHONPATH=$d /path/to/.venv/bin/python tests/regression/make_fixtures.py)
    cp -r $d/tests/regression/fixtures $d/tests/regression/expected tests/regression/

For each agent this trains 1-2 iterations with tiny settings (`schedrl train`, or `schedrl tune` with a sweep
file where the CLI cannot make the network small: RLSchert/DeepRM's canvas, the scalar MRSch's layers), then
writes
  fixtures/<agent>/schedrl_run.json     the run record,
  fixtures/<agent>/weights.safetensors  the RLModule's state dict (safetensors: tensors only, no pickle; the RLlib
                                        checkpoint is not kept),
  expected/<agent>.json                 the fixture policy's per-sequence aggregates on a few held-out sequences.
Before writing, it checks that the policy rebuilt from the record and the weights (fixture_modules.py) makes the
same decisions as the RLlib checkpoint's own policy (`schedrl.agents.checkpoint.load_policy`) on those sequences.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from fixture_modules import AGENTS, EXPECTED, FIXTURES, WEIGHTS_FILE, build_module, load_fixture_policy, read_record, \
    state_dict, write_weights
from test_fixture_policies import evaluate
from test_training_determinism import EXPECTED as TRAINING_EXPECTED, train

SEQUENCES = 2
"""Held-out sequences each fixture is scored on."""
EVENT_JOBS = 128
"""Jobs per sequence on the event simulator (the discrete-time agents' length is their episode's)."""
TINY = ("--seed", "0", "--iterations", "1", "--num-env-runners", "0", "--envs-per-runner", "1", "--trial-cpus", "1",
        "--validation-sequences", "1", "--eval-sequences", "1", "--keep-checkpoints", "1")
EVENT = ("--trace", "default", "--eval-jobs", "64")
DRAS = (*EVENT, "--train-fraction", "0.7", "--window", "4", "--sequence-length", "64")
TRAIN_ARGS: dict[str, tuple[str, ...]] = {
    "rlscheduler": (*EVENT, "--no-filtering", "--warm-start", "none", "--no-overlap-sampling", "--batch-size", "512",
                    "--sequence-length", "64", "--epochs", "2", "--minibatch-size", "256", "--validation-jobs", "64"),
    "dras-pg": (*DRAS, "--batch-size", "64", "--decisions-per-update", "32"),
    "dras-dql": (*DRAS, "--iterations", "2"),
    "decima-pg": (*DRAS, "--batch-size", "64", "--decisions-per-update", "32"),
    # one 64-job episode collects fewer than MRSch's learning_starts (256) steps, so no update runs: the committed
    # mrsch fixture is its seed-0 initialisation (bit for bit); it still pins the network, observation and simulator
    "mrsch": (*EVENT, "--augment", "S4", "--sequence-length", "64"),
    "linear": (*EVENT, "--batch-size", "512", "--sequence-length", "64"),
}
"""`schedrl train AGENT` options after `TINY` (a later option wins)."""
# RLSchert/DeepRM: a 10-step canvas and 3 visible jobs keep the 64-64 MLP near 70k weights (Table 2's 120 x 75
# canvas makes it 1.2M); work-conserving, so the greedy policy cannot idle for the whole 3,000-step cap
DTSIM_ENV = {"jobs": "synthetic", "res_slot": 10, "job_width": 10, "num_nw": 3, "horizon": 10, "job_len": 10,
             "backlog": 20, "simu_len": 20, "work_conserving": True}
DTSIM_PPO = {"num_env_runners": 0, "num_envs_per_env_runner": 1, "train_batch_size_per_learner": 256,
             "warm_start": False, "seed": 0}
SWEEPS: dict[str, dict] = {
    "mrsch-scalar": {"env": {"trace": "default", "augment": "S4", "sequence_length": 64, "train_fraction": 0.7},
                     "ppo": {"num_env_runners": 0, "num_envs_per_env_runner": 1, "train_batch_size": 512,
                             "minibatch_size": 256, "num_epochs": 2, "hiddens": [32], "seed": 0}},
    "rlschert": {"env": DTSIM_ENV, "ppo": DTSIM_PPO},
    "deeprm": {"env": DTSIM_ENV, "ppo": DTSIM_PPO},
}
"""Agents whose small network only a sweep file reaches (env fields, settings the CLI has no option for): the
sweep's env and settings sections; one trial, one iteration."""


def schedrl(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "schedrl", *args], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"schedrl {' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def train_checkpoint(agent: str, work: Path) -> Path:
    """Train `agent` tinily in `work`; the checkpoint its run selected."""
    if agent in TRAIN_ARGS:
        schedrl("train", agent, *TINY, *TRAIN_ARGS[agent], "--out", str(work / "run"))
        return Path(json.loads((work / "run" / "summary.json").read_text())["checkpoint"])
    # JSON is YAML; no final table (the fixture scores itself; the sweep report's table also fails for the
    # discrete-time agents, whose env configs have no trace)
    sweep = work / "fixture.yaml"
    sweep.write_text(json.dumps({"name": "fixture", "agent": agent, **SWEEPS[agent], "stop": {"iterations": 1},
                                 "training": {"validation_sequences": 1, "checkpoint_every": 1},
                                 "evaluate": {"sequences": 0}, "resources": {"max_concurrent_trials": 1}}, indent=2))
    schedrl("tune", str(sweep), "--out", str(work / "run"))
    found = sorted((work / "run").rglob("checkpoint_*"))
    if not found:
        raise SystemExit(f"{agent}: no checkpoint under {work / 'run'}")
    return found[-1]


class Recorder:
    """Logs every decision method's answers of a policy (wraps its pick/backfill/kill/act in place)."""

    def __init__(self, policy):
        self.calls: list = []
        for name in ("pick", "backfill", "kill", "act"):
            method = getattr(policy, name, None)
            if callable(method):
                setattr(policy, name, self._wrap(name, method))

    def _wrap(self, name, method):
        def logged(*args, **kwargs):
            answer = method(*args, **kwargs)
            self.calls.append((name, repr(answer)))
            return answer
        return logged


def schedules(policy, record, ids, length: int) -> list:
    """Each sequence's start/end/mode/killed arrays under `policy` (event simulator; none on the discrete-time
    cluster)."""
    from schedrl.agents import get_agent
    from schedrl.eval.policies import run_policy
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    agent = get_agent(record.agent)
    judge = agent.judge(agent.env_config_class.from_dict(dict(record.env_config)))
    if judge.generated:
        return []
    workload, config = judge.load(), judge.sim
    out = []
    for s in ids:
        done = run_policy(policy, Simulator(sequence(workload, s, length), config))
        out.append(np.stack([done.start, done.end, done.mode, done.killed]).astype(float))
    return out


def check_same_decisions(original, rebuilt, record, ids, length: int) -> dict:
    """Assert the rebuilt policy decides as the checkpoint's; the evaluation (rebuilt's) and the decisions compared."""
    logs = [Recorder(original), Recorder(rebuilt)]
    values = [evaluate(p, record, ids, length) for p in (original, rebuilt)]
    if json.dumps(values[0]) != json.dumps(values[1]):
        raise SystemExit(f"{record.agent}: the checkpoint and the fixture score differently")
    for a, b in zip(schedules(original, record, ids, length), schedules(rebuilt, record, ids, length)):
        if not np.array_equal(a, b, equal_nan=True):
            raise SystemExit(f"{record.agent}: the checkpoint and the fixture schedule differently")
    if logs[0].calls != logs[1].calls:
        first = next((i for i, (a, b) in enumerate(zip(*(log.calls for log in logs))) if a != b),
                     min(len(log.calls) for log in logs))
        raise SystemExit(f"{record.agent}: decision {first} differs between the checkpoint and the fixture")
    return {"per_sequence": values[1], "decisions_compared": len(logs[1].calls)}


def make(agent_name: str) -> None:
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import load_policy, load_record

    with tempfile.TemporaryDirectory(prefix=f"fixture-{agent_name}-") as tmp:
        checkpoint = train_checkpoint(agent_name, Path(tmp))
        record = load_record(checkpoint)
        original = load_policy(checkpoint)
        out = FIXTURES / agent_name
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        EXPECTED.mkdir(exist_ok=True)
        record.write(out)
        module = build_module(read_record(agent_name))  # the rebuilt module must take the trained weights as they are
        module.load_state_dict(original_module_state(checkpoint, record), strict=True)
        write_weights(state_dict(module), out / WEIGHTS_FILE)
        rebuilt = load_fixture_policy(agent_name)
        agent = get_agent(record.agent)
        judge = agent.judge(agent.env_config_class.from_dict(dict(record.env_config)))
        length = judge.sequence_length if judge.generated else EVENT_JOBS
        ids = [int(i) for i in judge.evaluation_ids(judge.load(), SEQUENCES, 0, length)]
        checked = check_same_decisions(original, rebuilt, record, ids, length)
    (EXPECTED / f"{agent_name}.json").write_text(json.dumps(
        {"agent": agent_name, "ids": ids, "length": length, "per_sequence": checked["per_sequence"]}, indent=2) + "\n")
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"{agent_name}: {size / 1024:.0f} KB, {checked['decisions_compared']} decisions identical to the "
          "checkpoint's")


def original_module_state(checkpoint: Path, record) -> dict:
    """The trained weights as RLlib restores them from the checkpoint."""
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import find_module_dir

    return state_dict(get_agent(record.agent).load_module(find_module_dir(checkpoint), record))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agents", nargs="*", help=f"agents to (re)make (default: all of {', '.join(AGENTS)})")
    parser.add_argument("--training", action="store_true",
                        help="rewrite expected/training_rlscheduler.json (test_training_determinism.py) instead")
    args = parser.parse_args(argv)
    if args.training:
        TRAINING_EXPECTED.parent.mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="fixture-training-") as tmp:
            TRAINING_EXPECTED.write_text(json.dumps(train(Path(tmp) / "run"), indent=2))
        return 0
    unknown = sorted(set(args.agents) - set(AGENTS))
    if unknown:
        parser.error(f"unknown agent(s) {', '.join(unknown)}; choose from {', '.join(AGENTS)}")
    for agent in args.agents or AGENTS:
        make(agent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
