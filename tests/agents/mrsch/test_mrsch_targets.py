"""DFP targets from a whole episode, and the replay buffer."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.agents.mrsch.replay import ReplayBuffer
from schedrl.agents.mrsch.targets import future_targets


def test_future_targets_by_hand():
    m = np.array([[0, 0], [1, 0], [1, 2], [3, 2]], dtype=np.float32)
    targets, valid = future_targets(m, (1, 2))
    assert valid.tolist() == [[1, 1], [1, 1], [1, 0], [0, 0]]
    assert targets[0].tolist() == [[1, 0], [1, 2]]
    assert targets[1].tolist() == [[0, 2], [2, 2]]
    assert targets[2].tolist() == [[2, 0], [0, 0]]
    assert not targets[3].any()


def test_offsets_past_a_short_episode_are_all_masked():
    targets, valid = future_targets(np.ones((3, 2)), (4, 8))
    assert targets.shape == (3, 2, 2) and not valid.any()


def test_replay_wraps_around_and_keeps_the_newest_rows():
    buf = ReplayBuffer(5)
    buf.add({"x": np.arange(3), "y": np.arange(3) * 10})
    buf.add({"x": np.arange(3, 7), "y": np.arange(3, 7) * 10})
    assert len(buf) == 5 and buf.added == 7
    sample = buf.sample(200, np.random.default_rng(0))
    assert set(sample["x"].tolist()) == {2, 3, 4, 5, 6}
    assert np.array_equal(sample["y"], sample["x"] * 10)  # rows stay together
    with pytest.raises(ValueError, match="same number of rows"):
        buf.add({"x": np.arange(2), "y": np.arange(3)})
