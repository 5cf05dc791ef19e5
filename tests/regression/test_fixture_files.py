"""The regression fixtures hold safetensors weights and a JSON record only, and load without any pickle."""

from __future__ import annotations

import json
import pickle

import pytest

from fixture_modules import AGENTS, FIXTURES, RECORD_FILE, WEIGHTS_FILE, load_fixture_policy, read_weights

REPO = FIXTURES.parents[2]
PICKLE_SUFFIXES = {".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".bin"}


def test_each_fixture_is_a_record_and_safetensors_weights():
    assert sorted(p.name for p in FIXTURES.iterdir()) == sorted(AGENTS)
    for agent in AGENTS:
        assert sorted(p.name for p in (FIXTURES / agent).iterdir()) == sorted([RECORD_FILE, WEIGHTS_FILE]), agent


def test_no_pickled_weights_in_the_repository():
    """Trained weights in the repo are safetensors only (the zoo's and these fixtures)."""
    found = [str(p.relative_to(REPO)) for top in ("schedrl", "tests", "tools", "benchmarks", "examples", "docs")
             if (REPO / top).is_dir() for p in (REPO / top).rglob("*")
             if p.suffix in PICKLE_SUFFIXES and p.is_file()]
    assert not found, f"pickled weights committed: {found} (write safetensors: safetensors.torch.save_file)"


def _refuse(*args, **kwargs):
    raise AssertionError("a regression fixture was unpickled")


@pytest.mark.parametrize("agent", ["linear", "rlscheduler"])
def test_fixtures_load_without_any_pickle(agent, monkeypatch):
    import torch

    path = FIXTURES / agent / WEIGHTS_FILE
    with open(path, "rb") as fh:  # safetensors: an 8-byte header length, then the JSON header naming the tensors
        header = json.loads(fh.read(int.from_bytes(fh.read(8), "little")))
    # torch.load(weights_only=True) has its own restricted unpickler: refused by name for the whole load
    monkeypatch.setattr(torch, "load", _refuse)
    monkeypatch.setattr(torch.serialization, "load", _refuse)
    with monkeypatch.context() as m:  # the pickle module only around the read: numba unpickles its compiled code
        for name in ("load", "loads", "Unpickler"):
            m.setattr(pickle, name, _refuse)
        tensors = read_weights(path)
    assert sorted(tensors) == sorted(k for k in header if k != "__metadata__")
    assert all(isinstance(t, torch.Tensor) for t in tensors.values())
    assert load_fixture_policy(agent).name == f"fixture({agent})"
