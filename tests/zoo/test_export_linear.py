"""`schedrl export` of the example agent's checkpoint: its scorer without ray makes the checkpoint's decisions."""

from __future__ import annotations

import pytest

from zoo_checks import check_files, check_same_decisions, export, train


@pytest.fixture(scope="module")
def runs(ray_session, tmp_path_factory):
    checkpoint = train("linear", tmp_path_factory.mktemp("linear"))
    return checkpoint, export(checkpoint, tmp_path_factory.mktemp("export") / "linear")


def test_the_export_makes_the_checkpoints_decisions_without_ray(runs):
    checkpoint, exported = runs
    assert check_same_decisions({"linear": checkpoint}, {"linear": exported})["linear"] > 100


def test_the_export_is_the_scorer_alone(runs):
    weights = check_files(*runs)
    assert weights["parameters"] == 4  # one weight per feature and a bias; the value head stays behind
