"""The DRAS env: config checks, masks, the reservation invariant, complete and consistent schedules."""

from __future__ import annotations

import numpy as np
import pytest
from dras_workloads import make_workload
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedrl.agents.dras.config import DRASEnvConfig
from schedrl.agents.dras.decisions import LEVEL_BACKFILL, LEVEL_PICK
from schedrl.agents.dras.env import DRASEnv
from schedrl.agents.dras.keys import INFO_METRIC, INFO_METRICS, OBS_ACTION_MASK, OBS_LEVEL, OBS_STATE
from schedrl.heuristics import get_heuristic
from schedrl.sim import SimConfig, Simulator
from schedrl.sim.state import MODE_BACKFILLED, MODE_READY, MODE_RESERVED, RESERVED, SHADOW


def random_jobs(draw_machine: int, rng: np.random.Generator, n: int) -> list[tuple[float, int, float, float]]:
    submit = np.cumsum(rng.integers(0, 30, size=n)).astype(float)
    jobs = []
    for t in submit:
        req = float(rng.integers(10, 200))
        run = float(rng.integers(1, int(req) + 1))
        jobs.append((t, int(rng.integers(1, draw_machine + 1)), run, req))
    return jobs


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="w2 must be >= 0"):
        DRASEnvConfig(w2=-0.1)
    with pytest.raises(ValueError, match="unknown DRAS env option.*bogus"):
        DRASEnvConfig.from_dict({"bogus": 1})
    with pytest.raises(ValueError, match="reward must be one of"):
        DRASEnvConfig(reward="throughput")
    with pytest.raises(ValueError, match="window must be"):
        DRASEnvConfig(window=0)
    config = DRASEnvConfig(window=7, starts=(3, 4), norm={"time_scale": 10.0, "wait_scale": 5.0})
    assert DRASEnvConfig.from_dict(config.to_dict()) == config


def test_window_larger_than_a_sequence_is_refused():
    wl = make_workload(random_jobs(8, np.random.default_rng(0), 20), 8)
    with pytest.raises(ValueError, match="window=30 is larger than a sequence"):
        DRASEnv({"window": 30, "sequence_length": 20}, workload=wl)


@pytest.mark.parametrize("two_level", [True, False])
def test_passes_the_gymnasium_env_checker(two_level):
    env = DRASEnv({"trace": "default", "sequence_length": 64, "two_level": two_level})
    check_env(env, skip_render_check=True)


def test_same_seed_same_rollout():
    def rollout(seed):
        env = DRASEnv({"trace": "default", "sequence_length": 64})
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        trace = []
        done = False
        while not done:
            a = env.action_space.sample()
            obs, r, done, _, info = env.step(a)
            trace.append((int(a), r))
        return env.start, trace, info[INFO_METRIC]

    assert rollout(3) == rollout(3)


def run_random(env: DRASEnv, rng: np.random.Generator, check=None):
    obs, _ = env.reset(seed=int(rng.integers(1 << 30)))
    done, info = False, {}
    while not done:
        mask = obs[OBS_ACTION_MASK]
        assert mask.sum() >= 1 and np.array_equal(env.action_masks(), mask > 0)
        if check is not None:
            check(env, obs)
        for bad in np.flatnonzero(mask == 0)[:2]:
            with pytest.raises(ValueError, match="is masked"):
                env.step(int(bad))
        obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert np.isfinite(reward)
    return info


def assert_consistent(schedule, machine: int):
    """Every job ran after its submit, for its run time (or until killed), never over the machine."""
    assert (schedule.start >= schedule.submit).all()
    assert (schedule.end >= schedule.start).all()
    events = sorted([(t, 1, p) for t, p in zip(schedule.end, schedule.req[:, 0])]
                    + [(t, 2, p) for t, p in zip(schedule.start, schedule.req[:, 0])])
    used = 0.0
    for _, kind, procs in events:  # ends before starts at the same instant
        used += procs if kind == 2 else -procs
        assert used <= machine + 1e-9


@pytest.mark.parametrize("two_level, backfill_rule", [(True, "easy"), (True, "holes"), (False, "easy")])
def test_random_valid_actions_finish_with_a_consistent_schedule(two_level, backfill_rule):
    wl = make_workload(random_jobs(16, np.random.default_rng(1), 300), 16)
    env = DRASEnv({"window": 4, "sequence_length": 120, "two_level": two_level, "backfill_rule": backfill_rule},
                  workload=wl)
    rng = np.random.default_rng(2)

    def check(env, obs):
        # the valid slots hold exactly what the level allows
        jobs = env.slots[obs[OBS_ACTION_MASK][: len(env.slots)] > 0]
        if env.level == LEVEL_PICK:
            assert obs[OBS_LEVEL][0] == 0.0
            assert set(jobs) <= set(env.sim.window.tolist())
            if not two_level:
                assert env.sim.fits(jobs).all()
        else:
            assert two_level and obs[OBS_LEVEL][0] == 1.0
            assert set(jobs) <= set(env.sim.candidates.tolist()) and env.sim.fits(jobs).all()
            if backfill_rule == "holes":
                s = env.sim.state
                assert (env.sim.now + s.est[jobs] <= s.fv[SHADOW]).all()
        assert obs[OBS_STATE].shape == (2 * 4 + 16, 2)

    for _ in range(2):
        info = run_random(env, rng, check)
        schedule = env.sim.schedule()
        assert (schedule.end >= 0).all()
        assert_consistent(schedule, 16)
        assert info[INFO_METRIC] == pytest.approx(float(np.mean(schedule.wait)))
        assert info[INFO_METRICS]["jobs"] == 120
        modes = set(schedule.mode.tolist())
        assert modes <= ({MODE_READY, MODE_RESERVED, MODE_BACKFILLED} if two_level else {MODE_READY, MODE_RESERVED})


def test_state_rows_follow_the_documented_layout():
    # 4 processors; job 0 (2 procs, requested 100) starts at 0; job 1 (4 procs) waits
    wl = make_workload([(0, 2, 100, 100), (0, 4, 50, 200), (10, 1, 5, 40)], 4)
    env = DRASEnv({"window": 2, "sequence_length": 3, "norm": {"time_scale": 200.0, "wait_scale": 10.0},
                   "priority_fraction": 0.9}, workload=wl)
    obs, _ = env.reset(seed=0)
    state = obs[OBS_STATE]
    np.testing.assert_allclose(state[:4], [[0.5, 0.5], [0, 0], [1.0, 1.0], [1, 0]])  # job 1 is high priority
    np.testing.assert_allclose(state[4:], [[1, 0]] * 4)  # all nodes free
    obs, *_ = env.step(0)  # job 0 starts; the window is now [job 1]
    np.testing.assert_allclose(obs[OBS_STATE][4:], [[1, 0], [1, 0], [0, 0.5], [0, 0.5]])
    np.testing.assert_array_equal(obs[OBS_ACTION_MASK], [1, 0])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), machine=st.integers(2, 12), window=st.integers(1, 5),
       rule=st.sampled_from(["easy", "holes"]))
def test_level2_choices_never_delay_the_reservation(seed, machine, window, rule):
    rng = np.random.default_rng(seed)
    wl = make_workload(random_jobs(machine, rng, 40), machine)
    env = DRASEnv({"window": window, "sequence_length": 40, "backfill_rule": rule}, workload=wl)
    promised: dict[int, float] = {}

    def record(env, obs):
        if env.level == LEVEL_BACKFILL:
            s = env.sim.state
            j = int(s.iv[RESERVED])
            promised[j] = min(promised.get(j, np.inf), float(s.fv[SHADOW]))

    run_random(env, rng, record)
    schedule = env.sim.schedule()
    for j, shadow in promised.items():
        # estimates are requested times and jobs are killed at them, so the promise is an upper bound
        assert schedule.start[j] <= shadow + 1e-9
        assert schedule.mode[j] == MODE_RESERVED


def test_capacity_reward_is_minus_mean_inverse_requested_hours():
    wl = make_workload([(0, 4, 100, 3600), (0, 4, 100, 7200), (0, 4, 100, 1800)], 4)
    env = DRASEnv({"window": 3, "sequence_length": 3, "reward": "capacity"}, workload=wl)
    env.reset(seed=0)
    _, reward, *_ = env.step(0)  # job 0 starts; jobs 1 (2 h) and 2 (0.5 h) wait
    assert reward == pytest.approx(-(1 / 2 + 1 / 0.5) / 2)


def test_capability_reward_eq1():
    wl = make_workload([(0, 1, 100, 100), (50, 3, 100, 100)], 4)
    env = DRASEnv({"window": 2, "sequence_length": 2, "w1": 0.5, "w2": 0.25, "w3": 0.25, "min_tmax": 10.0},
                  workload=wl)
    env.reset(seed=0)
    _, r0, *_ = env.step(0)  # at t=0: wait 0, size 1/4, util 1/4
    assert r0 == pytest.approx(0.25 * 0.25 + 0.25 * 0.25)
    _, r1, done, *_ = env.step(0)  # at t=50: wait 0 of max(0, 10), size 3/4, util 1.0
    assert r1 == pytest.approx(0.25 * 0.75 + 0.25 * 1.0) and done


def _newest_first(env: DRASEnv, limit: float | None = None) -> tuple[float, list[float]]:
    """Run one episode always taking the last valid slot (the newest job: it passes over the oldest ones);
    returns the max wait and, at each level-1 decision the agent was asked, the oldest waiting job's wait."""
    obs, _ = env.reset(seed=0)
    done, asked = False, []
    while not done:
        if env.level == LEVEL_PICK:
            asked.append(float(env.sim.now - env.sim.state.submit[env.sim.window[0]]))
        obs, _, done, _, _ = env.step(int(np.flatnonzero(obs[OBS_ACTION_MASK])[-1]))
    schedule = env.sim.schedule()
    assert_consistent(schedule, 8)
    return float(schedule.wait.max()), asked


def test_starvation_guard_picks_the_oldest_job_for_the_agent_once_it_waited_the_limit():
    wl = make_workload(random_jobs(8, np.random.default_rng(3), 400), 8)
    base = {"window": 6, "sequence_length": 400}
    unguarded, asked = _newest_first(DRASEnv(base, workload=wl))
    limit = 600.0
    assert max(asked) > 3 * limit  # without the guard the newest-first agent lets old jobs wait far longer
    guarded, asked = _newest_first(DRASEnv({**base, "starvation_wait": limit}, workload=wl))
    # never asked while the oldest job is past the limit: that pick was taken for it (start or reserve)
    assert max(asked) < limit
    # on this overloaded machine FCFS+EASY's max wait is 6,329 s; newest-first alone nearly doubles it, the
    # guard brings it back to FCFS+EASY's level
    fcfs = float(get_heuristic("fcfs").run(Simulator(wl, SimConfig(backfill="easy"))).wait.max())
    assert unguarded > 1.5 * fcfs and guarded < 1.1 * fcfs, (unguarded, guarded, fcfs)
    with pytest.raises(ValueError, match="starvation_wait must be >= 0"):
        DRASEnvConfig(starvation_wait=-1.0)
