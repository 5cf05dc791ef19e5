"""Trained-module fixtures without RLlib checkpoints (a run record plus the module's weights as tensors), and the
comparison of recomputed numbers with recorded ones.

`fixtures/<agent>/schedrl_run.json` is the run record (`schedrl.agents.checkpoint.RunRecord`) of a tiny
training of that agent; `fixtures/<agent>/weights.safetensors` is its RLModule's `state_dict` in the
safetensors format (`write_weights`, `read_weights`): tensors in a plain header-plus-bytes container, no
pickle, so no code runs at load. The module is rebuilt from the record the way training built it (the agent's
`algorithm_config` and the spaces of its env), the weights go in strictly, and the agent turns it into its
greedy policy (`Agent.policy_from_module`). `make_fixtures.py` writes both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
"""One directory per agent: schedrl_run.json and weights.safetensors."""
EXPECTED = HERE / "expected"
"""`<agent>.json`: the fixture policy's evaluation, as `make_fixtures.py` recorded it."""
AGENTS = ("rlscheduler", "dras-pg", "dras-dql", "decima-pg", "mrsch", "mrsch-scalar", "linear", "rlschert", "deeprm")
"""Every agent of `schedrl.agents.AGENTS`, in the order the fixtures were made."""
RECORD_FILE = "schedrl_run.json"
WEIGHTS_FILE = "weights.safetensors"


def read_record(agent: str, root: Path = FIXTURES):
    """The run record of `agent`'s fixture."""
    from schedrl.agents.checkpoint import RunRecord

    return RunRecord.read(root / agent / RECORD_FILE)


def build_module(record):
    """A freshly initialised RLModule of the network `record` trained (its agent's spec, its env's spaces)."""
    import gymnasium as gym

    import schedrl.envs  # noqa: F401  (registers the envs)
    from schedrl.agents import get_agent

    agent = get_agent(record.agent)
    env_config = agent.env_config_class.from_dict(dict(record.env_config))
    config = agent.algorithm_config(env_config, agent.settings_from_dict(record.settings), record.model)
    env = gym.make(agent.env_id, config=dict(record.env_config))
    try:
        return config.get_rl_module_spec(env=env.unwrapped).build()
    finally:
        env.close()


def state_dict(module) -> dict:
    """The module's weights as plain contiguous tensors (no shared storage, so the file holds only them)."""
    return {name: tensor.detach().clone().contiguous() for name, tensor in module.state_dict().items()}


def write_weights(tensors: dict, path: Path) -> None:
    """Write a `state_dict` (`state_dict`'s plain tensors) as safetensors."""
    from safetensors.torch import save_file

    save_file(tensors, str(path))


def read_weights(path: Path) -> dict:
    """The tensors of a `write_weights` file, on the CPU (safetensors: no pickle, no code runs)."""
    from safetensors.torch import load_file

    return load_file(str(path), device="cpu")


def load_fixture_policy(agent: str, root: Path = FIXTURES):
    """The greedy `SchedulingPolicy` of `agent`'s fixture (with `.record` and `.name` set, as `load_policy`'s)."""
    from schedrl.agents import get_agent

    record = read_record(agent, root)
    module = build_module(record)
    module.load_state_dict(read_weights(root / agent / WEIGHTS_FILE), strict=True)
    module.eval()
    policy = get_agent(record.agent).policy_from_module(module, record.env_config)
    policy.record = record
    policy.name = f"fixture({agent})"
    return policy


def assert_same(actual, expected, where: str = "evaluation") -> None:
    """Equal structure and strings; numbers equal to 1e-9 (relative)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), f"{where}: keys differ"
        for key in expected:
            assert_same(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{where}: lengths differ"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12, nan_ok=True), f"{where}: {actual} != {expected}"
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"
