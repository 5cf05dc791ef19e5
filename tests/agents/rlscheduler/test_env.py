"""RLScheduler-v0: Gymnasium conformance, determinism, masking, rewards, vector-env equivalence."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import schedrl.envs  # noqa: F401  (registers the env)
from schedrl.agents.rlscheduler.filtering import filter_starts
from schedrl.agents.rlscheduler import ENV_ID as RLSCHEDULER_ENV_ID
from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE, OBS_ACTION_MASK, OBS_JOBS
from schedrl.agents.rlscheduler.env import RLSchedulerEnv, sim_config_for
from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
from schedrl.agents.rlscheduler.vector_env import RLSchedulerVectorEnv
from schedrl.heuristics import get_heuristic
from schedrl.metrics import BSLD_TAU, job_metrics, summarize
from schedrl.sim import Simulator

SMALL = {"trace": "default", "sequence_length": 48}


def rollout(env, seed, steps, choose=lambda mask: int(np.flatnonzero(mask)[-1])):
    obs, _ = env.reset(seed=seed)
    trace = []
    for _ in range(steps):
        a = choose(obs[OBS_ACTION_MASK])
        obs, r, term, trunc, info = env.step(a)
        trace.append((obs[OBS_JOBS].copy(), r, term))
        if term:
            obs, _ = env.reset()
    return trace


def test_passes_gymnasium_env_checker():
    check_env(RLSchedulerEnv(SMALL), skip_render_check=True)


def test_registered_id_makes_the_env():
    env = gym.make(RLSCHEDULER_ENV_ID, config=SMALL)
    obs, info = env.reset(seed=0)
    assert obs[OBS_JOBS].shape == (MAX_OBSV_SIZE, 8)
    assert "start" in info


def test_same_seed_same_trajectory_and_different_seed_differs():
    a = rollout(RLSchedulerEnv(SMALL), 3, 150)
    b = rollout(RLSchedulerEnv(SMALL), 3, 150)
    c = rollout(RLSchedulerEnv(SMALL), 4, 150)
    assert all(np.array_equal(x[0], y[0]) and x[1] == y[1] for x, y in zip(a, b))
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(a, c))


def test_masked_action_raises():
    env = RLSchedulerEnv(SMALL)
    obs, _ = env.reset(seed=0)
    masked = int(np.flatnonzero(obs[OBS_ACTION_MASK] == 0)[0])
    with pytest.raises(ValueError, match="masked"):
        env.step(masked)
    with pytest.raises(ValueError, match="masked"):
        env.step(MAX_OBSV_SIZE + 5)


def test_observation_is_normalised_and_mask_matches_queue():
    env = RLSchedulerEnv(SMALL)
    obs, _ = env.reset(seed=1)
    for _ in range(40):
        jobs, mask = obs[OBS_JOBS], obs[OBS_ACTION_MASK]
        assert env.observation_space.contains(obs)
        k = min(len(env.sim.queue), MAX_OBSV_SIZE)
        assert mask.sum() == k and np.all(mask[:k] == 1)
        assert np.all(jobs[k:] == 0)
        obs, _, term, _, _ = env.step(env.action_space.sample())
        if term:
            break


def test_first_slot_policy_is_fcfs_and_final_reward_is_minus_avg_bsld():
    env = RLSchedulerEnv(SMALL)
    obs, info = env.reset(seed=5)
    reward, term = 0.0, False
    while not term:
        obs, reward, term, _, step_info = env.step(0)  # slot 0 is the oldest waiting job
    seq = env.workload[info["start"]:info["start"] + SMALL["sequence_length"]]
    fcfs = summarize(get_heuristic("fcfs").run(Simulator(seq, sim_config_for(env.config))))
    assert reward == pytest.approx(-fcfs.avg_bsld)
    assert step_info["metric_value"] == pytest.approx(fcfs.avg_bsld)


def test_utilization_objective_is_positive_reward():
    env = RLSchedulerEnv({**SMALL, "metric": "utilization"})
    env.reset(seed=0)
    term, reward = False, 0.0
    while not term:
        _, reward, term, _, _ = env.step(0)
    assert 0 < reward <= 1


def test_fixed_starts_cycle_in_order():
    env = RLSchedulerEnv({**SMALL, "starts": [5, 17]})
    assert [env.reset()[1]["start"] for _ in range(3)] == [5, 17, 5]


def test_unknown_config_key_is_rejected():
    with pytest.raises(ValueError, match="unknown RLScheduler env option.*colour"):
        RLSchedulerEnv({**SMALL, "colour": "red"})


def test_normalisation_from_config_is_used_on_another_trace():
    trained = RLSchedulerEnv(SMALL)
    norm = trained.norm.to_dict()
    assert norm["log_times"] is True
    other = RLSchedulerEnv({**SMALL, "norm": {**norm, "time_scale": norm["time_scale"] * 10}})
    o1, _ = trained.reset(seed=2)
    o2, _ = other.reset(seed=2)
    ratio = np.log1p(norm["time_scale"]) / np.log1p(norm["time_scale"] * 10)
    np.testing.assert_allclose(o2[OBS_JOBS][:, 1], o1[OBS_JOBS][:, 1] * ratio, rtol=1e-5)


def test_linear_time_features_as_in_the_paper():
    env = RLSchedulerEnv(SMALL)
    linear = RLSchedulerEnv({**SMALL, "norm": {**env.norm.to_dict(), "log_times": False}})
    obs, _ = linear.reset(seed=3)
    k = int(obs[OBS_ACTION_MASK].sum())
    est = linear.sim.state.est[linear.sim.queue[:k]]
    np.testing.assert_allclose(obs[OBS_JOBS][:k, 1], np.minimum(est / linear.norm.time_scale, 1.0), rtol=1e-6)


def test_vector_env_equals_single_envs_under_the_same_seeds():
    n = 3
    vec = RLSchedulerVectorEnv(num_envs=n, config=SMALL)
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(11).spawn(n)]
    singles = [RLSchedulerEnv(SMALL) for _ in range(n)]
    vobs, _ = vec.reset(seed=11)
    sobs = [e.reset(seed=s)[0] for e, s in zip(singles, seeds)]
    done = [False] * n
    for _ in range(200):
        actions = [int(np.flatnonzero(m)[-1]) if m.any() else 0 for m in vobs[OBS_ACTION_MASK]]
        vobs, vr, vterm, _, _ = vec.step(actions)
        for i, env in enumerate(singles):
            if done[i]:  # NEXT_STEP autoreset: this step reset sub-env i
                sobs[i], _ = env.reset()
                r, term = 0.0, False
            else:
                sobs[i], r, term, _, _ = env.step(actions[i])
            done[i] = term
            np.testing.assert_array_equal(vobs[OBS_JOBS][i], sobs[i][OBS_JOBS])
            assert vr[i] == r and vterm[i] == term


def test_trajectory_filtering_keeps_starts_in_median_to_twice_mean():
    env = RLSchedulerEnv(SMALL)
    result = filter_starts(env.workload, 48, sim_config_for(env.config), "bsld", stride=7)
    kept = result.scores[result.kept]
    assert np.all((kept > result.low) & (kept < result.high))
    assert result.low == pytest.approx(np.nanmedian(result.scores))
    filtered = RLSchedulerEnv({**SMALL, "train_starts": result.kept.tolist(), "filter_phase1_episodes": 5})
    starts = [filtered.reset(seed=i if i == 0 else None)[1]["start"] for i in range(8)]
    assert set(starts[:5]) <= set(result.kept.tolist())


def test_continued_env_draws_new_starts_and_leaves_phase_one_where_it_ended():
    kept = list(range(0, 300, 3))  # phase-1 starts: multiples of 3

    def starts(env, n):
        return [env.reset(seed=7 if i == 0 else None)[1]["start"] for i in range(n)]

    config = {**SMALL, "train_starts": kept, "filter_phase1_episodes": 10}
    fresh = starts(RLSchedulerEnv(config), 10)
    assert fresh == starts(RLSchedulerEnv(config), 10)  # same seed, same starts
    assert set(fresh) <= set(kept)
    # a rebuilt env that trained 4 episodes already: the same seed no longer replays them...
    continued = RLSchedulerEnv(config)
    continued.continue_training(4, salt=(1, 0))
    again = starts(continued, 10)
    assert again[:6] != fresh[:6]
    # ...and phase 1 has 6 episodes left, not 10
    assert set(again[:6]) <= set(kept) and not set(again[6:]) <= set(kept)
    # a salt is as deterministic as a seed
    twin = RLSchedulerEnv(config)
    twin.continue_training(4, salt=(1, 0))
    assert starts(twin, 10) == again
    # the vector env passes it on to every sub-env
    vector = RLSchedulerVectorEnv(2, config)
    vector.continue_training(4, salt=(1, 0))
    assert all(env.episodes.episodes == 4 and env.episodes.salt == (1, 0) for env in vector.envs)


def test_config_round_trips_through_a_dict():
    cfg = RLSchedulerEnvConfig(trace="default", starts=(1, 2), norm={"time_scale": 5.0})
    assert RLSchedulerEnvConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize("baseline", ["sjf", "f1"])
def test_baseline_reward_is_relative_to_the_heuristic_on_the_same_sequence(baseline):
    env = RLSchedulerEnv({**SMALL, "reward_baseline": baseline})
    obs, info = env.reset(seed=5)
    term = False
    while not term:
        obs, reward, term, _, step_info = env.step(0)
    seq = env.workload[info["start"]:info["start"] + SMALL["sequence_length"]]
    base = summarize(get_heuristic(baseline).run(Simulator(seq, sim_config_for(env.config)))).avg_bsld
    fcfs = step_info["metric_value"]
    assert reward == pytest.approx((base - fcfs) / base) and reward != 0.0
    with pytest.raises(ValueError, match="reward_baseline must be one of none, sjf, f1"):
        RLSchedulerEnv({**SMALL, "reward_baseline": "tetris"})


@pytest.mark.parametrize("metric,baseline", [("bsld", "none"), ("bsld", "f1"), ("wait", "none"), ("slowdown", "sjf")])
def test_dense_reward_pays_the_final_return_as_it_accrues(metric, baseline):
    """Same actions, same sequence: the dense rewards sum to the final reward, and they are paid along the way."""
    config = {**SMALL, "metric": metric, "reward_baseline": baseline}
    final, dense = RLSchedulerEnv(config), RLSchedulerEnv({**config, "dense_reward": True})
    rng = np.random.default_rng(7)
    obs_f, _ = final.reset(seed=1)  # a busy sequence: jobs wait under any order
    obs_d, _ = dense.reset(seed=1)
    rewards, term = [], False
    while not term:
        assert np.array_equal(obs_f[OBS_JOBS], obs_d[OBS_JOBS])  # the reward option changes no observation
        a = int(rng.choice(np.flatnonzero(obs_f[OBS_ACTION_MASK])))
        obs_f, r_final, term_f, _, _ = final.step(a)
        obs_d, r, term, _, info = dense.step(a)
        assert term == term_f
        rewards.append(r)
    assert sum(rewards) == pytest.approx(r_final, rel=1e-9, abs=1e-9)
    along = np.asarray(rewards[:-1])
    # costs, paid when a decision lets time pass with jobs waiting; most of the return before the last step
    assert (along <= 0.0).all() and (along < 0.0).sum() >= 5
    assert abs(sum(along)) > abs(rewards[-1]) if baseline == "none" else (along < 0.0).any()
    # what accrued by the end is the mean over jobs of weight x wait, from the schedule's own per-job metrics
    m = job_metrics(dense.sim.schedule())
    weight = {"bsld": 1.0 / np.maximum(m["run"], BSLD_TAU), "wait": 1.0, "slowdown": 1.0 / np.maximum(m["run"], 1.0)}[metric]
    scale = 1.0 if baseline == "none" else summarize(
        get_heuristic(baseline).run(Simulator(dense.sim.workload, dense.sim_config))).value(metric)
    assert dense._accrued_cost() == pytest.approx(np.mean(weight * m["wait"]) / scale, rel=1e-9)


def test_dense_reward_needs_a_per_job_waiting_metric():
    for metric in ("utilization", "fairness"):
        with pytest.raises(ValueError, match=f"dense_reward needs a metric .*'{metric}' is not"):
            RLSchedulerEnv({**SMALL, "metric": metric, "dense_reward": True})
