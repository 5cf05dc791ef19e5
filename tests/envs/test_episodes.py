"""Episode sources: fixed starts, seeded windows, filtering, the sampled/real/synthetic curriculum."""

from __future__ import annotations

import numpy as np
import pytest

from schedrl.envs.episodes import EpisodeSource, Phase, curriculum, parse_curriculum
from schedrl.workload.lublin import generate_lublin


@pytest.fixture(scope="module")
def trace():
    return generate_lublin(600, nodes=64, seed=3)


def test_fixed_starts_cycle_in_order(trace):
    source = EpisodeSource(trace, 50, fixed=(10, 20))
    rng = np.random.default_rng(0)
    assert [source.next(rng).start for _ in range(5)] == [10, 20, 10, 20, 10]
    assert source.next(rng).jobs.job_id.tolist() == trace.job_id[20:70].tolist()


def test_real_windows_stay_in_the_training_range_and_follow_the_seed(trace):
    a = EpisodeSource(trace, 50, lo=100, hi=400)
    b = EpisodeSource(trace, 50, lo=100, hi=400)
    starts = [a.next(np.random.default_rng(s)).start for s in range(200)]
    assert min(starts) >= 100 and max(starts) <= 350 and len(set(starts)) > 50
    assert [b.next(np.random.default_rng(s)).start for s in range(200)] == starts


def test_phases_follow_each_other_by_episode_count(trace):
    phases = curriculum(["sampled", "real", "synthetic"], [2, 3, 0])
    source = EpisodeSource(trace, 40, phases=phases, hi=300)
    rng = np.random.default_rng(1)
    drawn = [source.next(rng) for _ in range(8)]
    assert [e.phase for e in drawn] == ["sampled"] * 2 + ["real"] * 3 + ["synthetic"] * 3
    for e in drawn:
        assert len(e.jobs) == 40 and (np.diff(e.jobs.submit) >= 0).all()
        if e.phase == "real":
            assert 0 <= e.start <= 260
        else:  # re-timed jobsets are made of the training part's jobs only
            assert e.start == -1 and e.jobs.submit[0] == 0
            assert set(e.jobs.run.tolist()) <= set(trace.run[:300].tolist())


def test_filtered_phase_draws_only_its_starts_then_moves_on(trace):
    source = EpisodeSource(trace, 30, phases=(Phase("filtered", 4, starts=(5, 7)), Phase("real")))
    rng = np.random.default_rng(2)
    first = [source.next(rng) for _ in range(4)]
    assert {e.start for e in first} <= {5, 7} and {e.phase for e in first} == {"filtered"}
    assert source.next(rng).phase == "real"


def test_continue_training_ends_phases_where_they_would_have_and_salts_seeds(trace):
    phases = curriculum(["sampled", "real"], [10, 0])
    fresh = EpisodeSource(trace, 30, phases=phases)
    rng = fresh.continue_training(12, (7, 0), np.random.default_rng(5))
    assert fresh.phase().kind == "real" and fresh.episodes == 12
    assert fresh.reset_seed(3) != 3 and fresh.reset_seed(None) is None
    assert EpisodeSource(trace, 30).reset_seed(3) == 3  # nothing salted before a continue
    other = EpisodeSource(trace, 30, phases=phases).continue_training(12, (8, 0), np.random.default_rng(5))
    assert rng.integers(2**62) != other.integers(2**62)


@pytest.mark.parametrize("kwargs, message", [
    ({"phases": (Phase("real", 0), Phase("synthetic"))}, "only the last curriculum phase"),
    ({"lo": 500, "hi": 520}, "fewer than the sequence length"),
    ({"hi": 700}, "is not within"),
    ({"phases": (Phase("filtered", 2, starts=(590,)), Phase("real"))}, "leave the training range"),
])
def test_bad_sources_are_refused_with_a_reason(trace, kwargs, message):
    with pytest.raises(ValueError, match=message):
        EpisodeSource(trace, 50, **kwargs)


def test_unknown_phase_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown curriculum phase 'easy'; choose from real, filtered, sampled"):
        Phase("easy")
    with pytest.raises(ValueError, match="2 curriculum phases but 1 episode counts"):
        curriculum(["real", "sampled"], [3])


def test_curriculum_strings_parse_into_phases():
    assert parse_curriculum("sampled:200,real:50,synthetic") == (Phase("sampled", 200), Phase("real", 50),
                                                                 Phase("synthetic", 0))
    assert parse_curriculum("real") == (Phase("real", 0),)
    for bad, message in [("sampled,real", "needs a number of episodes"), ("real:x", "not a number"),
                         ("real,,synthetic", "kind\\[:episodes\\]"), ("harder:3,real", "unknown curriculum phase"),
                         ("filtered:3,real", "set by trajectory filtering")]:
        with pytest.raises(ValueError, match=message):
            parse_curriculum(bad)
