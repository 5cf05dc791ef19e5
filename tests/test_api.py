"""schedrl from Python (schedrl/api.py, eval/loaded.py, agents/acting.py): `load_policy` for every kind, a learned
policy's `act` on its env's observation deciding as its `pick` does, and `compare` giving the command's table."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from cli_process import run_cli
from shared_traces import shared_trace

import schedrl
from schedrl.eval.compare import compare as compare_table
from schedrl.eval.policies import FunctionPolicy, resolve_policy
from schedrl.metrics import summarize
from schedrl.scenarios.drawing import run_policy
from schedrl.sim import SimConfig, Simulator
from schedrl.workload.catalog import load_trace
from schedrl.workload.sampling import sequence
from schedrl.zoo.manifest import rule_file


def test_the_api_is_reached_from_the_package():
    import schedrl.api

    assert schedrl.load_policy is schedrl.api.load_policy and schedrl.compare is schedrl.api.compare
    assert {"load_policy", "compare", "Policy"} <= set(dir(schedrl))
    with pytest.raises(AttributeError, match="no attribute 'lode_policy'"):
        schedrl.lode_policy  # noqa: B018


@pytest.fixture(scope="module")
def default_trace():
    return load_trace("default")


@pytest.fixture(scope="module")
def lublin():
    return load_trace(shared_trace("lublin_256.swf.gz"))


KINDS = [("f1", "rule"), (f"tuned:{rule_file('tuned-lublin1-s0')}", "tuned rule"), ("zoo:tuned-lublin1-s0", "tuned rule"),
         ("plan:f1:samples=1:horizon=16", "planner"), ("zoo:rlscheduler-lublin1-s0", "learned")]


@pytest.mark.parametrize(("spec", "kind"), KINDS, ids=["rule", "tuned-file", "tuned-zoo", "planner", "learned"])
def test_every_kind_picks_as_the_commands_run_it(spec, kind, lublin):
    policy = schedrl.load_policy(spec)
    assert policy.kind == kind
    jobs = sequence(lublin, 500, 64)

    def bsld(p):
        return summarize(run_policy(p, Simulator(jobs, SimConfig()))).value("bsld")

    assert bsld(policy) == bsld(resolve_policy(spec))


def test_your_own_object_is_an_outside_policy():
    class Mine:
        name = "mine"

        def pick(self, sim):
            return int(sim.queue[0])

    policy = schedrl.load_policy(Mine())
    assert policy.kind == "outside policy" and policy.name == "mine" and schedrl.load_policy(policy) is policy
    with pytest.raises(ValueError, match="is not a policy"):
        schedrl.load_policy(object())


def test_a_rule_has_no_observation_to_act_on():
    with pytest.raises(ValueError, match="f1 is a rule: it has no network"):
        schedrl.load_policy("f1").act({"action_mask": np.ones(3)})
    with pytest.raises(ValueError, match="unknown policy 'fifo'"):
        schedrl.load_policy("fifo")


@pytest.mark.parametrize("name", ["rlscheduler-default-s0", "linear-default-s0"])
def test_act_on_the_env_observation_decides_as_pick(name, default_trace):
    """The env's observation of a simulator, through `act`, starts the same jobs as `pick` on that simulator."""
    policy = schedrl.load_policy(f"zoo:{name}")
    env = gym.make(policy.env_id, **policy.env_config)
    through_env = FunctionPolicy.for_env(policy.act, env, name="act")
    config = policy.record.sim_config
    for start in (3000,):
        jobs = sequence(default_trace, start, 128)
        picked = run_policy(policy, Simulator(jobs, config))
        acted = run_policy(through_env, Simulator(jobs, config))
        assert np.array_equal(picked.start, acted.start), start


@pytest.mark.parametrize("name", ["rlscheduler-default-s0", "linear-default-s0", "deeprm-rlschert-vasp-s0",
                                  "rlschert-rlschert-vasp-kill-s0"])
def test_a_gymnasium_loop_runs_on_act(name):
    """The policy's own env stepped on `act`'s actions, each one the env allows (a whole episode where it is short)."""
    policy = schedrl.load_policy(f"zoo:{name}")
    env = gym.make(policy.env_id, **policy.env_config)
    observation, _ = env.reset(seed=0)
    done, steps = False, 0
    while not done and steps < 150:
        action = policy.act(observation)
        assert observation["action_mask"][action] > 0
        observation, _, terminated, truncated, _ = env.step(action)
        done, steps = terminated or truncated, steps + 1
    assert done or steps == 150


def test_act_names_an_observation_of_another_env():
    policy = schedrl.load_policy("zoo:rlscheduler-default-s0")
    small = {"jobs": np.zeros((64, 8), np.float32), "action_mask": np.ones(64, np.float32)}
    with pytest.raises(ValueError, match=r"'jobs' has shape \(64, 8\); its network takes \(128, 8\)"):
        policy.act(small)
    with pytest.raises(ValueError, match="acts on its env's observation"):
        policy.act([1, 2, 3])


def test_compare_is_the_command_s_table():
    options = ["--trace", "default", "--sequences", "3", "--jobs", "128", "--policies", "fcfs,f1", "--backfill",
               "none,easy"]
    shown = run_cli("compare", *options, "--no-progress")
    assert shown.returncode == 0, shown.stderr
    table = schedrl.compare(trace="default", sequences=3, jobs=128, policies=["fcfs", "f1"], backfill=["none", "easy"])
    assert table.to_text() == shown.stdout.rstrip("\n")


def test_compare_on_a_scenario_is_the_command_s_table():
    shown = run_cli("compare", "--scenario", "default", "--sequences", "2", "--jobs", "128", "--no-progress")
    assert shown.returncode == 0, shown.stderr
    assert schedrl.compare(scenario="default", sequences=2, jobs=128).to_text() == shown.stdout.rstrip("\n")


def test_compare_takes_policy_objects(default_trace):
    mine = schedrl.load_policy("sjf", name="mine")
    table = schedrl.compare(trace="default", sequences=2, jobs=96, policies=[mine, "f1"], no_progress=True)
    direct = compare_table(default_trace, ["sjf", "f1"], ["none"], table.starts, 96)
    assert table.policies == ["mine", "f1"]
    assert table.values[("none", "mine")] == direct.values[("none", "sjf")]


def test_compare_refuses_what_the_command_refuses():
    with pytest.raises(TypeError, match="unknown option sequence \\(did you mean sequences\\?\\)"):
        schedrl.compare(trace="default", sequence=3)
    with pytest.raises(ValueError, match="--jobs must be >= 1, got 0"):
        schedrl.compare(trace="default", jobs=0)
    with pytest.raises(ValueError, match="unknown backfill strategy fast"):
        schedrl.compare(trace="default", backfill="fast")


PROBE = """
import json, sys
import schedrl
lazy = "schedrl.api" not in sys.modules and "torch" not in sys.modules
import json
from pathlib import Path

import gymnasium as gym
policy = schedrl.load_policy("zoo:rlscheduler-default-s0")
env = gym.make(policy.env_id, **policy.env_config)
observation, _ = env.reset(seed=0)
policy.act(observation)
print(json.dumps({"lazy": lazy, "ray": sorted(m for m in sys.modules if m.split(".")[0] == "ray")}))
"""


@pytest.mark.integration  # a fresh interpreter checks the imports
def test_import_is_lazy_and_a_zoo_policy_acts_without_ray():
    import json
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"lazy": True, "ray": []}


ZOO = sorted(json.loads((Path(schedrl.__file__).parent / "zoo" / "manifest.json").read_text())["policies"])


@pytest.mark.integration  # every zoo policy's env, several on SDSC-SP2 (a large trace to load)
@pytest.mark.parametrize("name", ZOO)
def test_every_zoo_policy_acts_on_its_env_s_observation(name):
    """Each agent's exported network takes the observation its Gymnasium env emits, as it is."""
    policy = schedrl.load_policy(f"zoo:{name}")
    env = gym.make(policy.env_id, **policy.env_config)
    observation, _ = env.reset(seed=1)
    for _ in range(50):
        action = policy.act(observation)
        assert observation["action_mask"][action] > 0
        observation, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
