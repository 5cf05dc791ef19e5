"""`examples/sb3_maskable_ppo.py`: a model trained by another library (sb3-contrib's MaskablePPO) scored with schedrl's
metrics beside its heuristics. sb3-contrib is in the `test` extra, so CI runs this; elsewhere it skips without it."""

from __future__ import annotations

import math
import os

import pytest

from example_scripts import load_example

if os.environ.get("CI") != "true":
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed (pip install -e '.[test]' installs it)")


@pytest.mark.integration  # trains an outside model
def test_an_outside_model_is_scored_beside_the_heuristics():
    example = load_example("sb3_maskable_ppo")
    result = example.main(["--steps", "128", "--jobs", "32", "--sequences", "2"])
    assert result.policies == ["fcfs", "sjf", "MaskablePPO"]
    values = result.values[("none", "MaskablePPO")]
    assert len(values) == 2 and all(math.isfinite(v) and v >= 1 for v in values)  # bounded slowdown is >= 1
