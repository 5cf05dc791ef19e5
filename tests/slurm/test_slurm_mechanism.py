"""The nice bands (schedrl.slurm.mechanism): which slurm.conf they need, the order they make, and how few
changes keep it."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fake_slurm import CONFIG
from schedrl.slurm.mechanism import NICE_MAX, MechanismError, NiceBands, priority_spread


def test_the_bands_need_multifactor_and_bounded_factors():
    assert priority_spread(CONFIG) == 0
    weights = {**CONFIG, "PriorityWeightAge": "1000", "PriorityWeightFairShare": "10000",
               "PriorityWeightTRES": "CPU=1000,Mem=2000.5,GRES/gpu=3000"}
    assert priority_spread(weights) == 1000 + 10000 + 1000 + 2000.5 + 3000 + 0.5
    # strict bands (steps above the weights' sum) where --max-bonus leaves room for them ...
    assert NiceBands.for_config(weights, 32, max_bonus=10 ** 9).step == 17003
    # ... and by default a ceiling of the age, job-size, partition and TRES weights' sum: steps shrink to fit
    bounded = NiceBands.for_config(weights, 32)
    assert bounded.ceiling <= 1000 + 6000.5 + 0.5 and bounded.step == 7001 // (64 * 33)
    with pytest.raises(MechanismError, match="PriorityType is priority/basic: .* set PriorityType=priority/multifactor"):
        priority_spread({**CONFIG, "PriorityType": "priority/basic"})
    with pytest.raises(MechanismError, match="NO_NORMAL"):
        priority_spread({**CONFIG, "PriorityFlags": "NO_NORMAL_ALL"})
    with pytest.raises(MechanismError, match="PrioritySiteFactorPlugin"):
        priority_spread({**CONFIG, "PrioritySiteFactorPlugin": "site_factor/example"})
    with pytest.raises(MechanismError, match="past Slurm's Nice range"):
        NiceBands(1000, NICE_MAX // 1000)


def test_the_site_factor_handle_refuses_a_site_factor_plugin_and_scales_its_bonuses():
    with pytest.raises(MechanismError, match="PrioritySiteFactorPlugin=site_factor/example rewrites"):
        NiceBands.for_config({**CONFIG, "PrioritySiteFactorPlugin": "site_factor/example"}, 8, handle="site-factor")
    weights = {**CONFIG, "PriorityWeightAge": "1000", "PriorityWeightFairShare": "10000"}
    strict = NiceBands.for_config(weights, 32, handle="site-factor", max_bonus=10 ** 9)
    assert (strict.step, strict.ceiling, strict.field) == (11002, 64 * 33 * 11002, "SiteFactor")
    assert NiceBands.for_config(weights, 32, scale=0.1, handle="site-factor", max_bonus=10 ** 9).step == 1101
    # the default ceiling: the age weight alone (fair share is the site's say), at least 2 x 64 (K + 1)
    assert NiceBands.for_config(weights, 32, handle="site-factor").ceiling == 2 * 64 * 33
    with pytest.raises(ValueError, match="--bonus-scale"):
        NiceBands.for_config(weights, 32, scale=0.0)
    # own + bonus: a job's own site factor stays under the bonus, and is what a restore gives back
    bands = NiceBands(2, 5, 1000, "site-factor")
    changes = bands.plan([2, 1], {1: 0, 2: 300, 3: 40}, {3: 7})
    assert [(c.job, c.new - (c.own or 0) > 0, c.own) for c in changes[:2]] == [(2, True, 300), (1, True, 0)]
    assert changes[0].new - 300 > changes[1].new and changes[2] == type(changes[2])(3, 40, 7, "restore", 7)


def ordered(bands: NiceBands, order: list[int], bonus: dict[int, int]) -> bool:
    values = [bonus[j] for j in order]
    return (all(a - b >= bands.step for a, b in zip(values, values[1:])) and values[-1] >= bands.step
            and values[0] <= bands.ceiling)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.integers(1, 100_000), st.lists(st.integers(0, NICE_MAX // 2), max_size=40),
       st.randoms(use_true_random=False))
def test_bonuses_always_order_the_ranked_jobs_above_any_priority_spread(k, step, current, rnd):
    bands = NiceBands(k, step)
    order = list(range(k))
    rnd.shuffle(order)
    now = {job: value for job, value in zip(range(k), current)}
    assert ordered(bands, order, bands.bonuses(order, now))


def test_jobs_already_in_order_keep_their_bonuses_and_few_change_per_cycle():
    bands = NiceBands(32, 7)
    rng = random.Random(0)
    order = list(range(32))
    bonus = bands.bonuses(order, {})
    assert bands.bonuses(order[1:], bonus) == {j: bonus[j] for j in order[1:]}  # the head started: no change
    changed, nxt = 0, 32
    for _ in range(1000):
        order.pop(0 if rng.random() < 0.5 else rng.randrange(len(order)))
        order.insert(rng.randrange(len(order) + 1), nxt)
        nxt += 1
        new = bands.bonuses(order, bonus)
        assert ordered(bands, order, new)
        changed += sum(new[j] != bonus.get(j) for j in order)
        bonus = new
    assert changed / 1000 < 3  # one entry per cycle, and a fresh layout now and then


def test_a_plan_sets_ranked_jobs_restores_the_ones_that_left_and_names_the_guard():
    bands = NiceBands(3, 2)
    nice = {1: 0, 2: 0, 3: 0, 4: -100}
    changes = bands.plan([3, 1, 2], nice, {1: 0, 2: 0, 3: 0, 4: 5}, guard=frozenset({3}))
    assert [(c.job, c.why) for c in changes] == [(3, "guard"), (1, "rank 2"), (2, "rank 3"), (4, "restore")]
    assert changes[0].new < changes[1].new < changes[2].new < 0 and changes[3].new == 5
    after = {**nice, **{c.job: c.new for c in changes}}
    assert bands.plan([3, 1, 2], after, {1: 0, 2: 0, 3: 0}) == []
