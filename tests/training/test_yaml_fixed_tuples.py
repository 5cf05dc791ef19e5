"""Sweep files read fixed-length tuple fields (RLSchert's (timestep, weight) imitation schedule) place by place."""

import pytest

from schedrl.training.sweep_file import SweepError, load_sweep


def _doc(schedule: str) -> str:
    return f"""
name: t
agent: rlschert
ppo:
  num_env_runners: 0
  num_envs_per_env_runner: 1
  imitation_schedule: {schedule}
stop:
  iterations: 1
"""


def _load(tmp_path, schedule):
    path = tmp_path / "t.yaml"
    path.write_text(_doc(schedule))
    return load_sweep(path)


def test_a_schedule_of_int_float_pairs_is_read(tmp_path):
    sweep = _load(tmp_path, "[[0, 0.5], [1200000, 0.0]]")
    assert sweep.settings.imitation_schedule == ((0, 0.5), (1200000, 0.0))


@pytest.mark.parametrize("bad", ["[[0, 0.5, 3]]", "[[0.5, 0.5]]", "[0, 0.5]", "[['a', 0.5]]"])
def test_a_malformed_schedule_is_one_error_naming_the_key(tmp_path, bad):
    with pytest.raises(SweepError, match="ppo.imitation_schedule"):
        _load(tmp_path, bad)
