"""Invariants of the discrete-time cluster over random valid action sequences (hypothesis)."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedrl.dtsim import DTSim, DTSimConfig, sample_sequence, synthetic_jobs

TABLE = synthetic_jobs(400, seed=11)
# a short horizon and low job_len so estimates overrun and ready jobs get re-placed often
CONFIG = DTSimConfig(res_slot=10, time_horizon=40, job_len=30, num_nw=3, num_kill=4, backlog=6,
                     job_rate=0.9, simu_len=25, max_seq=300)


def check_invariants(sim: DTSim) -> None:
    running = [j for j in sim.slots if j >= 0 and sim.running(j)]
    assert sum(sim.units[j] for j in running) <= CONFIG.res_slot
    assert all(sim.units[j] <= CONFIG.res_slot for j in running)
    assert sim.free.min() >= 0 and sim.free.max() <= CONFIG.res_slot
    held = [j for j in sim.slots if j >= 0]
    assert len(set(held)) == len(held) and not set(held) & set(sim.queue)
    assert all(sim.finish[j] < 0 for j in held + sim.queue)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), picks=st.lists(st.floats(0, 1, exclude_max=True), min_size=50, max_size=400),
       estimates=st.sampled_from(["running", "prerun"]))
def test_random_valid_actions_never_overallocate_and_masks_are_exact(seed, picks, estimates):
    config = DTSimConfig(**{**CONFIG.__dict__, "estimates": estimates})
    sim = DTSim(TABLE, sample_sequence(TABLE, config, np.random.default_rng(seed)), config)
    for n, pick in enumerate(picks):
        if sim.done:
            break
        mask = sim.valid_actions()
        assert mask[config.void_action]
        if n % 7 == 0:  # every masked action raises; every allowed one does not
            for action in range(config.n_actions):
                trial = copy.deepcopy(sim)
                if mask[action]:
                    trial.step(action)
                else:
                    try:
                        trial.step(action)
                    except ValueError:
                        continue
                    raise AssertionError(f"masked action {action} was accepted")
        valid = np.flatnonzero(mask)
        action = int(valid[int(pick * len(valid))])
        killed = sim.slots[action - config.num_nw - 1] if action > config.num_nw else -1
        was_running = killed >= 0 and sim.running(killed)
        sim.step(action)
        if killed >= 0:
            assert sim.queue[-1] == killed and sim.start[killed] == -1 and sim.elapsed[killed] == 0
            if was_running:
                assert sim.kills[killed] >= 1
        check_invariants(sim)
    records = sim.records()
    done = records.finish >= 0
    assert np.array_equal(records.finish[done] - records.start[done], records.real[done])
    assert np.all(records.finish[done] - records.arrival[done] >= records.real[done])
