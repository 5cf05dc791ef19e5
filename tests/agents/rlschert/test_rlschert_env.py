"""The RLSchert env: state layout against a hand-built case, masks, kill-and-requeue, rewards, determinism, bad input."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from rlschert_cases import all_at_zero, small_config, small_table, table_of, write_jobs_csv

from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.env import RLSchertEnv
from schedrl.agents.rlschert.observation import image_shape

# A: 2 units, predicted 3 steps, runs 6, re-estimated at 12 after its first step (a kill-rule case)
A = (6, 3, 20, [12, 12, 12, 12, 12])
B = (2, 2, 10, [2])
C = (4, 4, 10, [4, 4, 4])
D = (1, 1, 10, [])
E = (3, 3, 10, [3, 3])


def hand_env(**over) -> RLSchertEnv:
    env = RLSchertEnv(small_config(**over), table=table_of([A, B, C, D, E]))
    env.reset(seed=0, options={"sequence": all_at_zero(5)})
    return env


def test_state_layout_matches_the_hand_built_case():
    env = hand_env()
    obs, *_ = env.step(0)          # allocate A at offset 0
    obs, reward, *_ = env.step(2)  # void: one step passes
    cfg = env.config
    assert image_shape(cfg) == (24, 10) and obs["image"].shape == (24, 10)
    expected = np.zeros((24, 10), np.float32)
    expected[:11, 0:2] = 1      # canvas: A holds 2 units for its estimated remaining 12 - 1 = 11 steps
    expected[:2, 4] = 1         # visible job 0 = B: 2 steps x 1 unit in columns 4-5
    expected[:4, 6] = 1         # visible job 1 = C: 4 steps x 1 unit in columns 6-7
    expected[0, 8] = 1          # backlog: D and E, first backlog column, rows 0 and 1
    expected[1, 8] = 1
    np.testing.assert_array_equal(obs["image"], expected)
    running = np.zeros((2, 7), np.float32)
    running[0] = [3 / 20, 1 / 20, (12 - 3) / 3, 12 / 20, 1 / 24, 2 / 4, 1.0]
    np.testing.assert_allclose(obs["running"], running, rtol=1e-6)
    np.testing.assert_allclose(obs["extra"], [1 / 24])
    # allocate B, allocate C, void, kill A (slot 0); slot 1 is empty
    np.testing.assert_array_equal(obs["action_mask"], [1, 1, 1, 1, 0])
    # the kill rule: elapsed 1 < len_param 3 < 10 < re-estimate 12, error 9 > 1: kill slot 0 (action 3)
    assert obs["teacher"].argmax() == 3 and obs["teacher"].sum() == 1
    # Eq. 9 for the step passed: A (estimate 3 at elapsed 0) and B, C, D, E waiting
    assert reward == pytest.approx(-(1 / 3 + 1 / 2 + 1 / 4 + 1 / 1 + 1 / 3))


def test_completion_reward_counts_jobs_in_the_system():
    env = hand_env(reward="completion")
    env.step(0)
    _, reward, *_ = env.step(2)
    assert reward == -5.0
    _, reward, *_ = env.step(0)  # allocations pay nothing
    assert reward == 0.0


def test_kill_returns_the_job_to_the_queue_and_restarts_it_from_zero():
    env = hand_env()
    env.step(0)                       # A starts at step 0
    env.step(2)
    env.step(2)                       # A has run 2 steps
    sim = env.sim
    a = 0
    assert sim.elapsed[a] == 2 and sim.running(a)
    env.step(3)                       # kill slot 0
    assert sim.queue[-1] == a and not sim.running(a) and sim.elapsed[a] == 0 and sim.kills[a] == 1
    assert a not in sim.slots
    assert sim.len_param[a] == 12     # requeued with its latest re-estimate
    steps = 0
    while sim.visible and a not in sim.visible[:1]:
        # run the others first with SAF's choices, moving time when nothing fits
        action = int(np.flatnonzero(env.action_masks()[:2])[0]) if env.action_masks()[:2].any() else 2
        env.step(action)
        steps += 1
        assert steps < 200
    while sim.start[a] < 0:
        env.step(0 if env.action_masks()[0] and sim.visible[0] == a else 2)
    restart = sim.start[a]
    assert restart > 2
    while not sim.done:
        env.step(2 if not env.action_masks()[:2].any() else int(np.flatnonzero(env.action_masks()[:2])[0]))
    # a restart runs the full real length again: the first 2 steps were lost
    assert sim.finish[a] == restart + A[0]


def test_a_job_cannot_be_killed_at_the_step_it_was_allocated():
    env = hand_env()
    obs, *_ = env.step(0)
    assert obs["action_mask"][3] == 0
    with pytest.raises(ValueError, match="allocated at this step"):
        env.step(3)


def test_masks_forbid_every_invalid_action_and_allow_every_valid_one():
    config = small_config(kill=True)
    env = RLSchertEnv(config, table=small_table(200, seed=3))
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    checked = 0
    for _ in range(300):
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, obs["action_mask"] > 0)
        for action in range(config.n_actions):
            trial = copy.deepcopy(env)
            if mask[action]:
                trial.step(action)
            else:
                with pytest.raises(ValueError):
                    trial.step(action)
            checked += 1
        obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            obs, _ = env.reset()
    assert checked == 300 * config.n_actions


@pytest.mark.parametrize("kill", [True, False])
def test_work_conserving_masks_void_exactly_while_a_visible_job_can_start_now(kill):
    """Ours (`work_conserving`): void is valid iff no visible job has earliest-fit offset 0; everything else is the
    paper's mask. A policy that always prefers void then runs every sequence to its end, where without the option
    it idles to the step cap (the greedy void loop of docs/experiments/rlschert.md)."""
    base, config = small_config(kill=kill), small_config(kill=kill, work_conserving=True)
    table = small_table(200, seed=3)
    env, plain = RLSchertEnv(config, table=table), RLSchertEnv(base, table=table)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    plain.reset(seed=1)
    void, masked = config.num_nw, 0
    for _ in range(300):
        sim = env.view.sim
        mask, paper = env.action_masks(), plain.action_masks()
        can_start = 0 in sim.start_offsets()
        assert mask[void] == (not can_start)
        masked += can_start
        np.testing.assert_array_equal(np.delete(mask, void), np.delete(paper, void))
        if can_start:
            with pytest.raises(ValueError, match="work_conserving forbids idling"):
                copy.deepcopy(env).step(void)
        action = int(rng.choice(np.flatnonzero(mask)))
        obs, _, term, trunc, _ = env.step(action)
        plain.step(action)
        if term or trunc:
            obs, _ = env.reset()
            plain.reset()
    assert masked > 20

    def void_first(e):
        while True:
            m = e.action_masks()
            _, _, term, trunc, info = e.step(void if m[void] else int(np.flatnonzero(m)[0]))
            if term or trunc:
                return trunc, info["metric_value"]

    env.reset(seed=2)
    plain.reset(seed=2)
    assert void_first(env)[0] is False and void_first(plain)[0] is True


def test_without_kills_the_action_space_is_discrete_6():
    env = RLSchertEnv(RLSchertEnvConfig(kill=False, jobs="synthetic"))
    obs, _ = env.reset(seed=0)
    assert env.action_space.n == 6 and obs["action_mask"].shape == (6,)


def test_env_checker_determinism_and_final_metric():
    config = small_config()
    table = small_table(200, seed=1)
    check_env(RLSchertEnv(config, table=table), skip_render_check=True)

    def rollout():
        env = RLSchertEnv(config, table=table)
        obs, info = env.reset(seed=7)
        trace = []
        while True:
            obs, reward, term, trunc, info = env.step(info["teacher_action"])
            trace.append((reward, obs["image"].sum(), obs["running"].sum()))
            if term or trunc:
                return trace, info, env.sim

    first, info, sim = rollout()
    second, _, _ = rollout()
    assert first == second
    r = sim.records()
    expected = np.mean((r.finish - r.arrival) / r.real)
    assert info["metric_value"] == pytest.approx(expected)
    assert info["summary"]["finished"] == len(r.arrival)


def test_bad_input_is_one_clear_value_error(tmp_path):
    with pytest.raises(ValueError, match=r"job_rate must be in \(0, 1\]"):
        RLSchertEnvConfig(job_rate=0.0)
    with pytest.raises(ValueError, match=r"job_rate must be in \(0, 1\]"):
        RLSchertEnvConfig.from_dict({"job_rate": 1.2})
    jobs = write_jobs_csv(tmp_path / "big.csv", [(3, 3, 90, [3, 3]), (2, 2, 10, [2])])
    with pytest.raises(ValueError, match=r"res_slot=8 is smaller than the largest job .* \(9 units\)"):
        RLSchertEnv({"jobs": str(jobs), "res_slot": 8, "job_width": 8})
    with pytest.raises(ValueError, match="unknown RLSchert env option"):
        RLSchertEnvConfig.from_dict({"rate": 0.5})


def test_missing_vasp_file_falls_back_to_synthetic_with_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("schedrl.dtsim.jobs.shared_data_dir", lambda: tmp_path)
    monkeypatch.setenv("SCHEDRL_DATA_PATH", str(tmp_path))
    table = RLSchertEnvConfig().job_table()
    assert table.source.startswith("synthetic_jobs")
    assert "using the synthetic job table" in capsys.readouterr().err
    write_jobs_csv(tmp_path / "rlschert-vasp-jobs.csv.gz", [(3, 3, 20, [3, 3])])
    assert RLSchertEnvConfig().jobs_path() == (tmp_path / "rlschert-vasp-jobs.csv.gz").resolve()


def test_prepare_hands_the_trials_a_relative_jobs_file_as_an_absolute_path(tmp_path, monkeypatch):
    """`--jobs data/x.csv` names a file from where the command runs; Tune's trials run in their trial directories, so
    the env config they get holds the absolute path. A name found in $SCHEDRL_DATA_PATH, `""` and `synthetic` stay
    as given (each process looks them up)."""
    from schedrl.agents import get_agent

    (tmp_path / "data").mkdir()
    jobs = write_jobs_csv(tmp_path / "data" / "x.csv", [(3, 3, 20, [3, 3]), (2, 2, 10, [2])])
    monkeypatch.chdir(tmp_path)
    agent = get_agent("rlschert")
    env = agent.env_config(jobs="data/x.csv", res_slot=10, job_width=10)
    prepared = agent.prepare(env, agent.settings_class(), {}, log=lambda line: None)
    assert prepared.env_config.jobs == str(jobs.resolve())
    (tmp_path / "trial").mkdir()
    monkeypatch.chdir(tmp_path / "trial")  # where a trial runs: the relative name finds nothing here
    with pytest.raises(FileNotFoundError, match="job file data/x.csv not found"):
        env.jobs_path()
    assert RLSchertEnvConfig.from_dict(prepared.env_config.to_dict()).jobs_path() == jobs.resolve()
    monkeypatch.setenv("SCHEDRL_DATA_PATH", str(tmp_path / "data"))
    for kept in ("x.csv", "", "synthetic", str(jobs)):
        assert RLSchertEnvConfig(jobs=kept).portable().jobs == kept
