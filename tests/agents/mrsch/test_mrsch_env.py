"""The MRSch env: configuration, state length, masks, capacities, the idle-power rule."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from mrsch_helpers import make_workload, running_totals_within_capacity
from schedrl.agents.mrsch.config import MRSchEnvConfig
from schedrl.agents.mrsch.env import MRSchEnv
from schedrl.agents.mrsch.keys import OBS_ACTION_MASK, OBS_GOAL, OBS_MEASUREMENTS, OBS_STATE
from schedrl.agents.mrsch.observation import state_length
from schedrl.agents.mrsch.workload import job_nodes, load_workload, prepare_workload, with_idle_power
from schedrl.workload.augment import MRSCH_PRESETS
from schedrl.workload.lublin import generate_lublin

BASE = generate_lublin(1500, 64, seed=3)


def env_for(preset: str = "S4", **config) -> MRSchEnv:
    cfg = MRSchEnvConfig(augment=preset, **{"sequence_length": 128, **config})
    return MRSchEnv(cfg, workload=prepare_workload(BASE, preset, 0)[0])


def test_config_round_trips_and_rejects_unknown_keys():
    cfg = MRSchEnvConfig(augment="S9", window=5, offsets=(1, 3), offset_weights=(0.5, 1.0), norm={"time_scale": 10.0})
    assert MRSchEnvConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown MRSch env option.*colour"):
        MRSchEnvConfig.from_dict({"colour": 1})
    with pytest.raises(ValueError, match="offset_weights has 2 entries for 3 offsets"):
        MRSchEnvConfig(offsets=(1, 2, 4), offset_weights=(1.0, 1.0))
    with pytest.raises(ValueError, match="augment must be one of"):
        MRSchEnvConfig(augment="S11")


@pytest.mark.parametrize("preset, window", [("S4", 10), ("S2", 4), ("S9", 10)])
def test_state_length_is_derived_from_the_configuration(preset, window):
    env = env_for(preset, window=window)
    spec = MRSCH_PRESETS[preset].for_machine(64)
    n_bb = int(np.ceil(spec.bb_capacity_gb / 1000.0))  # one-TB units
    if preset == "S9":  # nodes, bb, power: (3 + 2) W + 2 N1 + 2 N2 + 2 * 100 power units
        assert env.builder.length == 5 * window + 2 * 64 + 2 * n_bb + 2 * 100
    else:  # MRSch's 4W + 2N1 + 2N2
        assert env.builder.length == 4 * window + 2 * 64 + 2 * n_bb
    assert env.builder.length == state_length(window, env.builder.counts)
    obs, _ = env.reset(seed=0)
    assert obs[OBS_STATE].shape == (env.builder.length,)


def test_masks_follow_the_window_and_a_masked_action_raises():
    env = env_for(window=10)
    obs, _ = env.reset(seed=1)
    k = len(env.sim.window)
    assert obs[OBS_ACTION_MASK].tolist() == [1.0] * min(k, 10) + [0.0] * (10 - min(k, 10))
    assert env.action_masks().tolist() == (obs[OBS_ACTION_MASK] > 0).tolist()
    if k < 10:
        with pytest.raises(ValueError, match="masked"):
            env.step(9)
    # slot 0 always holds the oldest waiting job
    assert int(env.sim.window[0]) == int(env.sim.queue[0])


@pytest.mark.parametrize("preset", ["S4", "S5", "S9"])
def test_random_valid_actions_run_to_completion_within_every_capacity(preset):
    env = env_for(preset)
    obs, info = env.reset(seed=4)
    rng = np.random.default_rng(0)
    steps = 0
    done = False
    while not done:
        s = env.sim.state
        used = s.req[env.sim.running()].sum(axis=0)
        assert np.all(used <= env.sim.capacity * (1 + 1e-9))
        assert np.allclose(obs[OBS_MEASUREMENTS], used / env.sim.capacity, atol=1e-6)
        assert obs[OBS_GOAL].sum() == pytest.approx(1.0, abs=1e-5)
        valid = np.flatnonzero(obs[OBS_ACTION_MASK])
        obs, reward, done, truncated, info = env.step(int(rng.choice(valid)))
        steps += 1
    assert not truncated and reward == 0.0 and info["metric_value"] >= 0
    schedule = env.sim.schedule()
    assert (schedule.end >= 0).all() and running_totals_within_capacity(schedule)
    # every job not started by backfilling was picked (at least once: a reserved job is picked again)
    assert steps >= int(np.count_nonzero(schedule.mode != 3))


def test_gymnasium_env_checker_and_same_seed_determinism():
    env = env_for()
    check_env(env, skip_render_check=True)

    def rollout(seed):
        e = env_for()
        obs, _ = e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        trace, done, info = [], False, {}
        while not done:
            a = int(rng.choice(np.flatnonzero(obs[OBS_ACTION_MASK])))
            obs, _, done, _, info = e.step(a)
            trace.append((a, float(obs[OBS_STATE].sum()), tuple(obs[OBS_GOAL])))
        return e.start, trace, info["metric_value"]

    assert rollout(7) == rollout(7)
    assert rollout(7)[0] != rollout(8)[0]


def test_scalar_reward_is_the_weighted_utilisation():
    env = env_for(reward="utilization")
    env.reset(seed=2)
    obs, reward, *_ = env.step(0)
    assert reward == pytest.approx(0.5 * obs[OBS_MEASUREMENTS][0] + 0.5 * obs[OBS_MEASUREMENTS][1])


def test_idle_power_folds_into_the_power_resource():
    # 4 nodes, budget 1,000 W, 60 W per idle node: headroom 1000 - 240 = 760 W
    wl = make_workload(submit=[0, 0, 0], run=[10, 10, 10], time_req=[10, 10, 10], procs=[2, 1, 4], max_procs=4,
                       resources={"power": np.array([400.0, 210.0, 4 * 215.0])}, capacity={"power": 1000.0})
    out, notes = with_idle_power(wl, 60.0)
    # job 2 draws 4 x (215 - 60) = 620 W <= 760: kept; 2 x (200 - 60) = 280, 1 x 150
    assert out.capacity["power"] == 760.0 and out.resources["power"].tolist() == [280.0, 150.0, 620.0]
    assert notes == []
    # a job whose draw above idle exceeds the headroom can never start: dropped with a report line
    big = wl.with_resources({"power": np.array([400.0, 210.0, 4 * 260.0])}, {"power": 1000.0})
    out, notes = with_idle_power(big, 60.0)
    assert len(out) == 2 and "dropped 1 job" in notes[0]
    with pytest.raises(ValueError, match="not above the idle draw"):
        with_idle_power(wl.with_resources({"power": wl.resources["power"]}, {"power": 200.0}), 60.0)


def test_power_draw_with_idle_nodes_stays_within_the_budget():
    env = env_for("S9")
    spec = MRSCH_PRESETS["S9"].for_machine(64)
    augmented = prepare_workload(BASE, "S9", 0)[0]
    env.reset(seed=3)
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(env.action_space.sample()))
    schedule = env.sim.schedule()
    seq = env.sim.workload
    nodes = job_nodes(seq).astype(float)
    # per-job draw of its nodes, from the rewritten column: n (p - idle) + n idle
    draw = np.asarray(seq.resources["power"]) + spec.idle_node_power_w * nodes
    for t in np.unique(schedule.start):
        run = (schedule.start <= t) & (schedule.end > t)
        total = draw[run].sum() + spec.idle_node_power_w * (64 - nodes[run].sum())
        assert total <= spec.power_budget_w * (1 + 1e-9)
    assert "power" in augmented.resources


def test_bad_augmentation_input_is_refused():
    with_bb = prepare_workload(BASE, "S1", 0)[0]
    with pytest.raises(ValueError, match="already has resource columns"):
        prepare_workload(with_bb, "S2", 0)
    with pytest.raises(ValueError, match="no extra resources"):
        prepare_workload(BASE, "none", 0)


def test_the_default_trace_loads_augmented():
    wl = load_workload(MRSchEnvConfig(trace="default", augment="S5"))
    assert set(wl.resources) == {"bb"} and wl.name.endswith("+S5")


def test_queue_goal_adds_the_queue_measurement_and_its_negative_weight():
    """`queue_weight` (ours): one more measurement q/(q + queue_scale) for the q waiting jobs, the goal's last
    entry -queue_weight; the resource entries are unchanged, and the policy observes what the env does."""
    from schedrl.agents.mrsch.observation import StateNorm
    from schedrl.agents.mrsch.policy import ObservationPolicy
    from schedrl.sim.state import QUEUED

    plain, queued = env_for(), env_for(queue_weight=3.0, queue_scale=20.0)
    assert plain.observation_space[OBS_MEASUREMENTS].shape == (2,)
    assert queued.observation_space[OBS_MEASUREMENTS].shape == (3,)
    assert queued.observation_space[OBS_GOAL].low.min() == -3.0
    check_env(queued, skip_render_check=True)
    a, _ = plain.reset(seed=4)
    b, _ = queued.reset(seed=4)
    record = queued.config.to_dict() | {"norm": StateNorm.from_trace(queued.workload).to_dict()}
    observer = ObservationPolicy(None, record, "probe")
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(60):
        q = int(np.count_nonzero(queued.sim.state.status == QUEUED))
        seen.add(q)
        assert b[OBS_MEASUREMENTS][-1] == pytest.approx(q / (q + 20.0))
        assert b[OBS_GOAL][-1] == -3.0
        np.testing.assert_array_equal(b[OBS_MEASUREMENTS][:2], a[OBS_MEASUREMENTS])
        np.testing.assert_allclose(b[OBS_GOAL][:2], a[OBS_GOAL], rtol=1e-6)
        mine, _ = observer.observe(queued.sim)
        for key in (OBS_MEASUREMENTS, OBS_GOAL, OBS_STATE):
            np.testing.assert_array_equal(mine[key], b[key])
        act = int(rng.choice(np.flatnonzero(b[OBS_ACTION_MASK])))
        a, _, done_a, *_ = plain.step(act)
        b, _, done_b, *_ = queued.step(act)
        assert done_a == done_b
        if done_b:
            break
    assert len(seen) >= 3  # the queue grew and shrank over the decisions checked
    with pytest.raises(ValueError, match="queue_weight must be >= 0"):
        MRSchEnvConfig(queue_weight=-1.0)
    with pytest.raises(ValueError, match="queue_scale > 0"):
        MRSchEnvConfig(queue_weight=1.0, queue_scale=0.0)


def test_fit_first_masks_jobs_that_do_not_fit_while_one_does():
    """`fit_first` (ours): while a window job fits every resource now, only such jobs are valid; when none fits,
    every window job is (one of them gets reserved). A masked pick raises; the policy's mask is the env's."""
    from schedrl.agents.mrsch.observation import StateNorm
    from schedrl.agents.mrsch.policy import ObservationPolicy

    env = env_for("S5", fit_first=True)
    plain = env_for("S5")
    obs, _ = env.reset(seed=1)
    plain_obs, _ = plain.reset(seed=1)
    observer = ObservationPolicy(None, env.config.to_dict() | {"norm": StateNorm.from_trace(env.workload).to_dict()}, "probe")
    rng = np.random.default_rng(1)
    narrowed = blocked = 0
    done = False
    while not done:
        window = env.sim.window[:env.config.window]
        fits = env.sim.fits(window)
        mask = obs[OBS_ACTION_MASK][:len(window)]
        if not plain.sim.done:  # the paper's mask: every window job
            assert plain_obs[OBS_ACTION_MASK].sum() == len(plain.sim.window[:plain.config.window])
        if fits.any():
            np.testing.assert_array_equal(mask, fits.astype(np.float32))
            narrowed += bool((~fits).any())
            if (~fits).any():
                with pytest.raises(ValueError, match="fit_first"):
                    env.step(int(np.flatnonzero(~fits)[0]))
        else:
            np.testing.assert_array_equal(mask, 1.0)
            blocked += 1
        np.testing.assert_array_equal(observer.observe(env.sim)[0][OBS_ACTION_MASK], obs[OBS_ACTION_MASK])
        action = int(rng.choice(np.flatnonzero(obs[OBS_ACTION_MASK])))
        obs, _, done, _, _ = env.step(action)
        if not plain.sim.done:
            plain_obs, *_ = plain.step(int(rng.choice(np.flatnonzero(plain_obs[OBS_ACTION_MASK]))))
    assert narrowed > 0 and blocked > 0  # both cases were met on this sequence
