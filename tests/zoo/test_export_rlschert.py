"""`schedrl export` of RLSchert and DeepRM checkpoints (the discrete-time cluster): their networks without ray make
the checkpoints' decisions (allocations, voids and kills) on a whole generated episode."""

from __future__ import annotations

import json

import pytest

from zoo_checks import check_files, check_same_decisions, export, train

AGENTS = ("rlschert", "deeprm")


@pytest.fixture(scope="module")
def runs(ray_session, tmp_path_factory):
    trained = {a: train(a, tmp_path_factory.mktemp(a)) for a in AGENTS}
    return trained, {a: export(c, tmp_path_factory.mktemp("export") / a) for a, c in trained.items()}


def test_the_exports_make_the_checkpoints_decisions_without_ray(runs):
    compared = check_same_decisions(*runs)
    assert all(compared[a] > 10 for a in AGENTS)


@pytest.mark.parametrize("agent", AGENTS)
def test_the_export_is_the_policy_network_alone_on_its_cluster(runs, agent):
    trained, exported = runs
    weights = check_files(trained[agent], exported[agent])
    data = json.loads((exported[agent] / "policy.json").read_text())
    assert data["architecture"]["pi"]["type"] == "flat"
    assert data["card"]["machine"] == {"units": 10.0}  # the sweep's res_slot
    assert data["card"]["normalisation"] == "none" and data["card"]["trace"]["name"] == "synthetic"
    assert weights["parameters"] < 100_000
