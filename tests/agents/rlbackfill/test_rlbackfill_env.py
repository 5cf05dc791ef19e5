"""Learned backfilling's env: always starting the first candidate reproduces the base with EASY exactly (real traces,
three semantics), a chosen candidate never delays the reservation, the decisions of a hand-computed case, "start
none" with `skip`, the reward relative to the base's cached value; bad input is one clear error."""

from __future__ import annotations

import numpy as np
import pytest

import base_rule_cases
from base_rule_cases import OFFSET, long_before_short, write_swf
from schedrl.agents.rlbackfill.config import RLBackfillEnvConfig, make_base
from schedrl.agents.rlbackfill.decisions import apply, choices, forced, next_decision
from schedrl.agents.rlbackfill.env import RLBackfillEnv, relative
from schedrl.agents.rlbackfill.observation import CONTEXT_FEATURES, JOB_FEATURES
from schedrl.cli.main import main
from schedrl.sim import Simulator
from shared_traces import shared_trace

SEMANTICS = {
    # DRAS's SDSC-SP2 setup (scenario dras-sdsc-sp2): list scheduling from a 10-job window, EASY, average wait
    "dras-sdsc-sp2": ("SDSC-SP2-1998-4.2-cln.swf.gz", dict(window=10, metric="wait")),
    "sdsc-sp2-easy": ("SDSC-SP2-1998-4.2-cln.swf.gz", dict(window=0, metric="bsld")),
    # scenario lublin1-bf: SchedGym's semantics and RLScheduler's backfilling variant
    "lublin1-bf": ("lublin_256.swf.gz", dict(preset="rlscheduler", cleaning="rlscheduler", backfill="rlscheduler")),
}


def env_on(workload, **config) -> RLBackfillEnv:
    return base_rule_cases.env_on(RLBackfillEnv, workload, **config)


def real_env(name: str, length: int = 1024, base: str = "f1") -> RLBackfillEnv:
    trace, config = SEMANTICS[name]
    return RLBackfillEnv(RLBackfillEnvConfig(trace=str(shared_trace(trace)), base=base, sequence_length=length,
                                             **config))


class FirstFit:
    """The base's picks and, at every backfill decision, the first candidate (EASY's choice), through the policy's
    decision points."""

    def __init__(self, base: str):
        self.base = make_base(base)

    def pick(self, sim):
        return self.base.pick(sim)

    def backfill(self, sim):
        cands = choices(sim, 32)
        return forced(cands, False) if len(cands) == 1 else int(cands[0])


@pytest.mark.parametrize("name", list(SEMANTICS))
@pytest.mark.parametrize("base", ["f1", "sjf", "fcfs"])
def test_always_the_first_candidate_reproduces_the_base_with_easy_exactly(name, base):
    env = real_env(name, base=base)
    start = int(0.8 * len(env.workload))
    obs, _ = env.reset(options={"start": start})
    done, steps = False, 0
    while not done:
        assert env.observation_space.contains(obs)
        obs, reward, done, _, info = env.step(0)
        steps += 1
    expected = make_base(base).run(Simulator(env.jobs, env.config.base_sim_config()))
    np.testing.assert_array_equal(env.sim.schedule().start, expected.start)
    np.testing.assert_array_equal(env.sim.schedule().mode, expected.mode)
    assert steps > 5 and reward == 0.0 and info["metric_value"] == info["base_value"]
    # the same through Simulator.run under the policy's semantics
    again = Simulator(env.jobs, env.config.sim_config()).run(FirstFit(base))
    np.testing.assert_array_equal(again.start, expected.start)


@pytest.mark.parametrize("name", list(SEMANTICS))
def test_a_chosen_candidate_never_delays_the_reservation(name):
    env = real_env(name)
    rng = np.random.default_rng(1)
    obs, _ = env.reset(options={"start": int(0.75 * len(env.workload))})
    shadows: dict[int, list[float]] = {}
    done = False
    chosen_later = 0
    while not done:
        shadow, _ = env.sim.reservation
        shadows.setdefault(env.sim.blocked, []).append(shadow)
        valid = np.flatnonzero(obs["action_mask"])
        action = int(rng.choice(valid))
        chosen_later += action > 0
        obs, reward, done, _, info = env.step(action)
    start = env.sim.schedule().start
    for job, times in shadows.items():
        assert start[job] <= min(times) + 1e-9, (job, start[job], times)
    assert chosen_later > 3 and info["metric_value"] != info["base_value"]


@pytest.mark.parametrize("base", ["f1", "random", "wfp3"])
@pytest.mark.parametrize("skip", [False, True])
def test_the_compiled_picks_between_choices_are_the_bases_picks(base, skip):
    env = real_env("dras-sdsc-sp2", length=1024, base=base)
    jobs = env.episodes.for_reset(np.random.default_rng(0), {"start": 40000}).jobs
    schedules, seen = [], []
    for compiled in (True, False):
        sim, rng, points = Simulator(jobs, env.sim_config), np.random.default_rng(3), []
        while (cands := next_decision(sim, make_base(base), skip, 8, compiled=compiled)) is not None:
            points.append((sim.now, cands.tolist()))
            action = int(rng.integers(len(cands) + skip))
            apply(sim, cands, 8 if action == len(cands) else action, 8)  # with skip: sometimes start none
        schedules.append(sim.schedule().start)
        seen.append(points)
    assert seen[0] == seen[1] and len(seen[0]) > 10
    np.testing.assert_array_equal(schedules[0], schedules[1])


def test_the_decision_of_the_hand_computed_case():
    jobs = long_before_short()
    env = env_on(jobs)
    obs, _ = env.reset()
    sim = env.sim
    assert sim.now == OFFSET + 2 and sim.blocked == 1 and env.candidates.tolist() == [2, 3]
    assert list(obs["action_mask"][:3]) == [1.0, 1.0, 0.0] and obs["action_mask"][-1] == 0.0  # no skip
    rows = {name: obs["jobs"][:2, i].tolist() for i, name in enumerate(JOB_FEATURES)}
    context = dict(zip(CONTEXT_FEATURES, obs["context"]))
    assert rows["requested_share"] == [0.5, 0.5] and rows["ends_by_shadow"] == [1.0, 1.0]
    assert rows["share_of_free"] == [1.0, 1.0] and obs["jobs"][-1, JOB_FEATURES.index("is_skip")] == 1.0
    assert context["free_share"] == 0.5 and context["blocked_share"] == 1.0 and context["spare_share"] == 0.0
    _, reward, done, _, info = env.step(1)  # job 3 (10 s) first; job 2 then starts, forced, when it ends
    assert done and info["decisions"] == 1
    schedule = sim.schedule()
    assert schedule.start.tolist() == [OFFSET, OFFSET + 1000, OFFSET + 12, OFFSET + 2]
    assert info["base_value"] == pytest.approx(26.0, abs=0.01) and info["metric_value"] == pytest.approx(3.5, abs=0.01)
    assert reward == pytest.approx((26.0 - 3.5) / 26.0, abs=0.01)
    # first fit: job 2 first, job 3 waits until job 2 ends
    env.reset()
    env.step(0)
    assert env.sim.schedule().start.tolist() == [OFFSET, OFFSET + 1000, OFFSET + 2, OFFSET + 902]


def test_start_none_waits_for_the_next_event_where_skip_is_allowed():
    env = env_on(long_before_short(), skip=True)
    obs, _ = env.reset()
    assert obs["action_mask"][-1] == 1.0
    # start none: nothing is backfilled; at job 0's end (t0+1,000) job 1 starts on the whole machine, then F1
    # starts jobs 2 and 3 once it ends: no backfill decision is left
    _, reward, done, _, info = env.step(env.config.slots)
    start = env.sim.schedule().start
    assert done and info["skips"] == 1 and start[1] == OFFSET + 1000 and min(start[2:]) == OFFSET + 1100
    assert reward < 0


def test_the_base_value_is_computed_once_per_sequence(monkeypatch):
    env = env_on(long_before_short())
    calls = []
    original = env.base_value.__func__

    def counted(self, start, jobs):
        calls.append(start)
        return original(self, start, jobs)

    monkeypatch.setattr(RLBackfillEnv, "base_value", counted)
    for _ in range(3):
        env.reset()
        env.step(0)
    assert len(env._base_values) == 1 and len(calls) == 3
    assert relative(10.0, 0.0, "wait") == pytest.approx(-10.0 / 60.0)  # a quiet sequence: the floor, not 1e9
    assert relative(100.0, 1.0, "bsld") == -5.0  # clipped


@pytest.mark.parametrize("change, message", [
    (dict(backfill="none"), "needs|backfill must be one of easy, rlscheduler, got 'none'"),
    (dict(backfill="conservative"), "reserves every waiting job"),
    (dict(base="nope"), "unknown base heuristic 'nope'"),
    (dict(slots=0), "slots must be >= 1"),
    (dict(metric="speed"), "metric must be one of"),
])
def test_bad_env_options_are_one_clear_error(change, message):
    with pytest.raises(ValueError, match=message):
        RLBackfillEnvConfig(**change)
    with pytest.raises(ValueError, match="unknown rl-backfill env option"):
        RLBackfillEnvConfig.from_dict({"slot": 3})


@pytest.mark.parametrize("argv, message", [
    (["--backfill", "none"], "backfill must be one of easy, rlscheduler, got 'none'"),
    (["--base", "nope"], "unknown base heuristic 'nope'"),
    (["--scenario", "lublin1"], "scenario 'lublin1' is defined for"),
    (["--hidden", "32,x"], "--hidden takes comma-separated widths"),
])
def test_bad_command_lines_are_one_error_line(argv, message, tmp_path, capsys):
    trace = write_swf(long_before_short(), tmp_path / "case.swf")
    extra = [] if "--scenario" in argv else ["--trace", str(trace), "--cleaning", "none"]
    code = main(["train", "rl-backfill", *extra, *argv, "--iterations", "1", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and message.split("|")[-1] in err[-1] and err[-1].startswith(("error:", "schedrl train")), err
    assert "Traceback" not in "\n".join(err)
