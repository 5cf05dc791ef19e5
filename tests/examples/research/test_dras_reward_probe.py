"""`examples/research/dras_reward_probe.py` (the DRAS experiment log reads the SDSC-SP2 runs with it): each rule's
return is the sum of the env's rewards and its wait the episode's metric, on the same training sequences."""

from __future__ import annotations

from example_scripts import load_example


def test_reward_probe_scores_fixed_rules_on_training_sequences():
    probe = load_example("research/dras_reward_probe")
    result = probe.probe("default", 4, 2, 48, "capability", 0.7, 0)
    assert set(result) == {"first", "random", "last"}
    for ret, wait in result.values():
        assert 0 < ret <= 2 * 48 and wait >= 0  # at most one pick per job per level, each reward <= 1
    assert result["first"] != result["last"]
