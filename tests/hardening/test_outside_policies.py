"""Issue 9 item 16: policy objects and outside models in the evaluation API (`compare`, `FunctionPolicy`)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import schedrl  # noqa: F401  (registers the envs)
from schedrl.eval.compare import compare
from schedrl.eval.policies import FunctionPolicy
from schedrl.heuristics import get_heuristic


@pytest.fixture(scope="module")
def env():
    return gym.make("schedrl/RLScheduler-v0", trace="default", sequence_length=64)


def table(env, policies, starts=(0, 700)):
    base = env.unwrapped
    return compare(base.workload, policies, ["none", "easy"], list(starts), 64, config=base.sim_config, progress=False)


class FirstInQueue:
    """A policy object with `pick(sim)` and no name: labelled by its class name."""

    def pick(self, sim) -> int:
        return int(sim.queue[0])


def shortest_requested(observation) -> int:
    """Slot of the job with the smallest requested time (column 1 of the RLScheduler job matrix)."""
    valid = observation["action_mask"] > 0
    return int(np.argmin(np.where(valid, observation["jobs"][:, 1], np.inf)))


def test_compare_accepts_policy_objects_in_every_output(env):
    sjf = get_heuristic("sjf")
    sjf.name = "my-sjf"
    result = table(env, ["fcfs", sjf, FirstInQueue()])
    assert result.policies == ["fcfs", "my-sjf", "FirstInQueue"]
    header = result.to_text().splitlines()[1]
    assert "my-sjf" in header and "FirstInQueue" in header
    assert "| my-sjf | FirstInQueue |" in result.to_markdown()
    assert [r["policy"] for r in json.loads(result.to_json())["results"]][:3] == ["fcfs", "my-sjf", "FirstInQueue"]
    assert "my-sjf," in result.to_csv()
    # FCFS by object equals FCFS by name on every sequence
    assert result.values[("none", "FirstInQueue")] == result.values[("none", "fcfs")]


def test_policies_sharing_a_name_get_distinct_columns(env):
    result = table(env, [FirstInQueue(), FirstInQueue(), "sjf"], starts=(0,))
    assert result.policies == ["FirstInQueue", "FirstInQueue#2", "sjf"]


def test_a_non_policy_is_refused_with_its_reason(env):
    with pytest.raises(ValueError, match="is not a policy: give a name, checkpoint:PATH, or an object with pick"):
        table(env, ["sjf", object()])


def test_function_policy_sees_the_env_observation(env):
    # a plain function choosing the shortest requested time is SJF, on every sequence and backfilling
    policy = FunctionPolicy.for_env(shortest_requested, env)
    assert policy.name == "shortest_requested"
    result = table(env, ["sjf", policy])
    for backfill in ("none", "easy"):
        assert result.values[(backfill, "shortest_requested")] == result.values[(backfill, "sjf")]


def test_function_policy_takes_an_sb3_style_action_state_pair(env):
    policy = FunctionPolicy.for_env(lambda obs: (np.array(shortest_requested(obs)), None), env, name="pair")
    result = table(env, ["sjf", policy], starts=(0,))
    assert result.values[("none", "pair")] == result.values[("none", "sjf")]


def test_function_policy_names_a_bound_method_by_its_owner(env):
    class Model:
        def predict(self, observation):
            return 0

    assert FunctionPolicy.for_env(Model().predict, env).name == "Model"


def test_function_policy_refuses_a_masked_action(env):
    last_slot = FunctionPolicy.for_env(lambda obs: 127, env, name="last-slot")
    with pytest.raises(ValueError, match="last-slot chose action 127, which is masked"):
        table(env, [last_slot], starts=(0,))
    vector = FunctionPolicy.for_env(lambda obs: np.array([0, 1]), env, name="two")
    with pytest.raises(ValueError, match="two returned .*expected one integer action"):
        table(env, [vector], starts=(0,))


def test_function_policy_needs_an_env_that_observes_any_simulator():
    dras = gym.make("schedrl/DRAS-v0", trace="default", sequence_length=40, window=8)
    with pytest.raises(ValueError, match="DRASEnv has no observation_of"):
        FunctionPolicy.for_env(lambda obs: 0, dras)
