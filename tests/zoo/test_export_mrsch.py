"""`schedrl export` of MRSch (DFP) and its scalar-reward baseline: their networks without ray make the checkpoints'
decisions, the DFP network with the offset weights its state dict does not carry."""

from __future__ import annotations

import json

import pytest

from zoo_checks import check_files, check_same_decisions, export, train

AGENTS = ("mrsch", "mrsch-scalar")


@pytest.fixture(scope="module")
def runs(ray_session, tmp_path_factory):
    trained = {a: train(a, tmp_path_factory.mktemp(a)) for a in AGENTS}
    return trained, {a: export(c, tmp_path_factory.mktemp("export") / a) for a, c in trained.items()}


def test_the_exports_make_the_checkpoints_decisions_without_ray(runs):
    compared = check_same_decisions(*runs)
    assert all(compared[a] > 10 for a in AGENTS)


def test_the_dfp_export_carries_its_offset_weights(runs):
    from schedrl.agents.mrsch.config import OFFSET_WEIGHTS

    trained, exported = runs
    check_files(trained["mrsch"], exported["mrsch"])
    architecture = json.loads((exported["mrsch"] / "policy.json").read_text())["architecture"]
    assert architecture["network"] == "dfp" and architecture["offset_weights"] == pytest.approx(list(OFFSET_WEIGHTS))


def test_the_scalar_export_leaves_the_value_network_behind(runs):
    trained, exported = runs
    weights = check_files(trained["mrsch-scalar"], exported["mrsch-scalar"])
    architecture = json.loads((exported["mrsch-scalar"] / "policy.json").read_text())["architecture"]
    layers = [layer for layer in architecture["pi"]["layers"] if layer["type"] == "Linear"]
    assert [layer["out_features"] for layer in layers[:-1]] == [32]  # the sweep's hiddens: [32]
    assert weights["parameters"] == sum(layer["in_features"] * layer["out_features"] + layer["out_features"] for layer in layers)
