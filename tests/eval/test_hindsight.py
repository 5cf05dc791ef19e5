"""The hindsight bounds (`schedrl.eval.hindsight`, `schedrl hindsight`): perfect-knowledge rollout policies of the
inspector's and learned backfilling's decision classes. Built cases where the best decision is known; never worse
than the base on any sequence (random small workloads and a window of the embedded trace, with the base's own option
simulated again at every decision and checked against the cached value); the scenario layer and the CLI; bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from schedrl.agents.rlbackfill.decisions import next_decision
from schedrl.cli.main import main
from schedrl.eval.hindsight import HindsightBackfill, HindsightInspector, check_decision, hindsight, to_markdown
from schedrl.heuristics import get_heuristic
from schedrl.metrics import summarize
from schedrl.scenarios import get_scenario
from schedrl.sim import SimConfig, Simulator
from schedrl.workload import Workload
from schedrl.workload.fields import FIELD_NAMES
from schedrl.workload.lublin import generate_lublin
from schedrl.workload.sampling import sequence

OFFSET = 1_000_000.0  # F1's 870 log10(submit) term is undefined at 0


def make_workload(submit, run, procs, max_procs) -> Workload:
    n = len(submit)
    columns = {field: np.full(n, -1) for field in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=np.asarray(submit, dtype=float), run=run, procs_req=procs,
                   procs_alloc=procs, time_req=run, status=np.ones(n))
    return Workload(columns, max_procs=max_procs, max_nodes=max_procs)


def block_then_burst() -> Workload:
    """The inspector's learning case: a whole-machine 5,000-s job is proposed to an idle 10-processor machine 60 s
    before eight 100-s one-processor jobs arrive; accepting it costs the eight ~4,940 s of wait each."""
    return make_workload([OFFSET] + [OFFSET + 60.0] * 8, [5000] + [100] * 8, [10] + [1] * 8, 10)


def long_before_short() -> Workload:
    """Learned backfilling's case: job 1 (whole machine) is reserved at t0+1,000; jobs 2 (900 s) and 3 (10 s), 5
    processors each, are both candidates for the 5 free processors; first fit starts job 2 (mean bsld 26.0),
    starting job 3 first gives about 3.5."""
    return make_workload([OFFSET, OFFSET + 1, OFFSET + 2, OFFSET + 2], [1000, 100, 900, 10], [5, 10, 5, 5], 10)


def base_value(jobs, config, metric, base="f1") -> float:
    return summarize(get_heuristic(base).run(Simulator(jobs, config))).value(metric)


INSPECTOR_CONFIGS = {"paw": SimConfig(), "rlscheduler": SimConfig.preset("rlscheduler"),
                     "paw-easy": SimConfig(backfill="easy"), "list-easy": SimConfig(discipline="list", window=4,
                                                                                    backfill="easy")}


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("name", INSPECTOR_CONFIGS)
def test_the_hindsight_inspector_rejects_the_blocking_job(name, depth):
    config = INSPECTOR_CONFIGS[name]
    jobs = block_then_burst()
    assert base_value(jobs, config, "bsld") == pytest.approx(44.91, abs=0.01)
    policy = HindsightInspector("f1", "bsld", verify=True, depth=depth)
    schedule = Simulator(jobs, config).run(policy)
    assert summarize(schedule).avg_bsld == pytest.approx(1.0036, abs=1e-3)
    assert schedule.start[0] > OFFSET + 60 and (schedule.start[1:] < schedule.start[0]).all()  # the eight first
    assert policy.changed >= 1 and policy.value == pytest.approx(summarize(schedule).avg_bsld)


def test_the_hindsight_inspector_accepts_where_rejecting_cannot_help():
    # one job alone: rejecting waits for nothing (no event), so the only point is masked and accepted
    jobs = make_workload([OFFSET], [100], [2], 4)
    policy = HindsightInspector("f1", "bsld")
    schedule = Simulator(jobs, SimConfig()).run(policy)
    assert schedule.start.tolist() == [OFFSET] and policy.inspections == 0 and policy.rollouts == 0
    # two jobs that both fit at once: a rejection only delays, so every inspection accepts
    jobs = make_workload([OFFSET, OFFSET + 5], [100, 100], [2, 2], 4)
    policy = HindsightInspector("f1", "bsld")
    schedule = Simulator(jobs, SimConfig()).run(policy)
    assert schedule.start.tolist() == [OFFSET, OFFSET + 5] and policy.changed == 0 and policy.inspections == 2


def test_the_hindsight_backfill_starts_the_short_candidate_first():
    jobs = long_before_short()
    base = SimConfig(backfill="easy")
    assert base_value(jobs, base, "bsld") == pytest.approx(26.0, abs=0.01)
    policy = HindsightBackfill("f1", "bsld", verify=True)
    schedule = policy.run(Simulator(jobs, HindsightBackfill.sim_config(base)))
    assert schedule.start.tolist() == [OFFSET, OFFSET + 1000, OFFSET + 12, OFFSET + 2]
    assert policy.decisions == 1 and policy.changed == 1
    assert summarize(schedule).avg_bsld == pytest.approx(3.5, abs=0.01)
    # limited to the first candidate, the choice is first fit's
    policy = HindsightBackfill("f1", "bsld", candidates=1)
    schedule = policy.run(Simulator(jobs, HindsightBackfill.sim_config(base)))
    assert schedule.start.tolist() == [OFFSET, OFFSET + 1000, OFFSET + 2, OFFSET + 902] and policy.changed == 0


def test_the_backfill_class_needs_easy_style_backfilling():
    with pytest.raises(ValueError, match="EASY-style backfilling"):
        HindsightBackfill.sim_config(SimConfig())
    with pytest.raises(ValueError, match="backfill_choice='policy'"):
        HindsightBackfill("f1").run(Simulator(long_before_short(), SimConfig(backfill="easy")))


def _lublin(seed: int, n: int = 80) -> Workload:
    return generate_lublin(n, nodes=32, seed=seed)


@pytest.mark.parametrize("metric, depth", [("bsld", 1), ("wait", 1), ("bsld", 3)])
@pytest.mark.parametrize("name", INSPECTOR_CONFIGS)
def test_the_hindsight_inspector_is_never_worse_than_its_base(name, metric, depth):
    config = INSPECTOR_CONFIGS[name]
    gains = []
    for seed in range(4):
        jobs = _lublin(seed)
        base = base_value(jobs, config, metric)
        # the cached value of the chosen continuation is simulated again and checked at every point
        policy = HindsightInspector("f1", metric, verify=True, depth=depth)
        value = summarize(Simulator(jobs, config).run(policy)).value(metric)
        assert value <= base * (1 + 1e-12), (seed, value, base)
        assert policy.value == pytest.approx(value, rel=1e-12)
        gains.append(base - value)
    assert max(gains) > 0  # not vacuous: some rejection pays on these loaded machines


@pytest.mark.parametrize("config", [SimConfig(backfill="easy"), SimConfig.preset("rlscheduler", backfill="rlscheduler"),
                                    SimConfig(discipline="list", window=4, backfill="easy")],
                         ids=["paw-easy", "rlscheduler", "list-easy"])
def test_the_hindsight_backfill_is_never_worse_than_first_fit(config):
    gains, decisions = [], 0
    for seed in range(4):
        jobs = _lublin(seed)
        base = base_value(jobs, config, "bsld")
        for skip in (False, True):
            policy = HindsightBackfill("f1", "bsld", skip=skip, verify=True)
            schedule = policy.run(Simulator(jobs, HindsightBackfill.sim_config(config)))
            value = summarize(schedule).avg_bsld
            assert value <= base * (1 + 1e-12), (seed, skip, value, base)
            gains.append(base - value)
            decisions += policy.decisions
        # its decision points are learned backfilling's: replaying its choices at the agent's points (compiled
        # picks and forced single candidates in between) gives the same schedule
        chosen = []
        policy = HindsightBackfill("f1", "bsld")
        choose = policy._choose
        policy._choose = lambda sim, cands: chosen.append(choose(sim, cands)) or chosen[-1]
        schedule = policy.run(Simulator(jobs, HindsightBackfill.sim_config(config)))
        replay = Simulator(jobs, HindsightBackfill.sim_config(config))
        f1, points = get_heuristic("f1"), 0
        while next_decision(replay, f1, False, len(jobs)) is not None:
            replay.backfill(chosen[points])
            points += 1
        assert points == len(chosen) == policy.decisions
        np.testing.assert_array_equal(replay.schedule().start, schedule.start)
    assert decisions > 0 and max(gains) > 0


def test_on_a_window_of_the_embedded_trace():
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.cleaning import CleaningRules

    jobs = sequence(load_trace("default", CleaningRules.preset("default")), 36_000, 160)
    for config in (SimConfig(), SimConfig(discipline="list", window=10, backfill="easy")):
        base = base_value(jobs, config, "bsld")
        inspector = HindsightInspector("f1", "bsld", verify=True)
        assert summarize(Simulator(jobs, config).run(inspector)).avg_bsld <= base * (1 + 1e-12)
        assert inspector.inspections > 50
    config = SimConfig(discipline="list", window=10, backfill="easy")
    backfill = HindsightBackfill("f1", "wait", verify=True)
    value = summarize(backfill.run(Simulator(jobs, HindsightBackfill.sim_config(config)))).avg_wait
    assert value <= base_value(jobs, config, "wait") * (1 + 1e-12)


def small_scenario(tmp_path, backfill="none", name="tiny"):
    """The `default` scenario (embedded trace) with 3 evaluation sequences of 96 jobs, as a scenario file."""
    scenario = get_scenario("default").overridden(sequences=3, jobs=96, backfill=backfill)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({**scenario.to_dict(), "name": name}))
    return path


def test_hindsight_on_a_scenario(tmp_path):
    path = small_scenario(tmp_path)
    result = hindsight(str(path), "inspector", sequences=2, verify=True)
    assert [r["start"] for r in result["rows"]] == result["sequences"]["starts"] and len(result["rows"]) == 2
    scenario = get_scenario(str(path))
    from schedrl.scenarios import scoring

    scores = scoring.score(scenario)  # the scenario's own F1 column: the base values are its
    assert [r["base"] for r in result["rows"]] == scores.values()["F1"][:2]
    assert result["base_label"] == "F1" and result["metric"] == "bsld"
    assert all(r["hindsight"] <= r["base"] for r in result["rows"])
    c = result["comparison"]
    assert c["baseline"] == "F1" and c["sequences"] == 2
    assert c["verdict"] in ("the same", "too few windows for a verdict")  # 2 sequences: no verdict
    text = to_markdown(result)
    assert "hindsight inspector over F1" in text and "paired vs F1" in text and str(result["rows"][0]["start"]) in text


def test_the_cli_prints_the_table_and_json(tmp_path, capsys):
    path = small_scenario(tmp_path, backfill="easy", name="tiny-easy")
    assert main(["hindsight", "--scenario", str(path), "--decision", "backfill", "--sequences", "2", "--skip"]) == 0
    out, err = capsys.readouterr()
    assert "hindsight backfill over F1+EASY" in out and "| start |" in out and "paired vs F1+EASY" in out
    assert "sequence 1/2" in err and "sequence 2/2" in err  # progress on stderr
    assert main(["hindsight", "--scenario", str(path), "--decision", "inspector", "--sequences", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["decision"] == "inspector" and result["rows"][0]["hindsight"] <= result["rows"][0]["base"]


@pytest.mark.parametrize("argv, message", [
    (["--scenario", "no-such-scenario", "--decision", "inspector"], "unknown scenario 'no-such-scenario'"),
    (["--scenario", "default", "--decision", "backfill"], "backfills with 'none': the backfill decision class"),
    (["--scenario", "default", "--decision", "kill"], "--decision 'kill' is not a decision class"),
    (["--scenario", "default", "--decision", "inspector", "--base", "nope"], "--base: unknown base heuristic 'nope'"),
    (["--scenario", "default", "--decision", "inspector", "--base", "tuned:/no/such/rule.json"], "no such tuned-rule"),
    (["--scenario", "rlschert-vasp", "--decision", "inspector"], "runs on the discrete-time cluster"),
    (["--scenario", "default", "--decision", "inspector", "--sequences", "0"], "--sequences must be >= 1"),
    (["--scenario", "default", "--decision", "inspector", "--skip"], "options of --decision backfill"),
    (["--scenario", "dras-sdsc-sp2", "--decision", "backfill", "--depth", "2"],
     "--depth is an option of --decision inspector"),
    (["--scenario", "default", "--decision", "inspector", "--depth", "0"], "--depth must be >= 1"),
])
def test_bad_input_is_one_error_line(argv, message, capsys):
    assert main(["hindsight", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("schedrl hindsight: error: ") and message in err[0], err


def test_check_decision():
    check_decision(get_scenario("dras-sdsc-sp2"), "backfill")
    check_decision(get_scenario("lublin1-bf"), "backfill")
    with pytest.raises(ValueError, match="unknown decision class"):
        check_decision(get_scenario("default"), "reorder")


def test_the_experiment_log_commands_parse():
    """Every `schedrl hindsight` command of docs/experiments/hindsight.md is one today's parser takes."""
    import re
    import shlex
    from pathlib import Path

    from schedrl.cli.main import build_parser

    text = (Path(__file__).resolve().parents[2] / "docs/experiments/hindsight.md").read_text()
    code = "\n".join(text.split("```")[1::2]) + "\n" + "\n".join(re.findall(r"^#### `([^`]*)`", text, re.M))
    commands = [line.split(" #")[0].strip().split("schedrl ", 1)[1] for line in code.replace("\\\n", " ").splitlines()
                if "schedrl hindsight" in line]
    assert len(commands) >= 8
    for command in commands:
        args = build_parser("hindsight").parse_args(shlex.split(command))
        assert args.command == "hindsight" and args.decision in ("inspector", "backfill")


def test_a_tuned_rule_as_the_base(tmp_path, capsys):
    """`--base tuned:FILE`: a rule with F1's weights, fitted on the embedded trace, is F1 to the bit (the same base
    values and bound as `--base f1`); the same rule labelled as another trace's is one error line."""
    from schedrl.heuristics.tuned import STARTS, TunedRule, normalisation
    from schedrl.workload.catalog import load_trace
    from schedrl.workload.cleaning import CleaningRules

    trace = load_trace("default", CleaningRules.preset("default"))
    rule = TunedRule.from_coefficients(STARTS["f1"], normalisation(trace, 28_000),
                                       {"name": trace.name, "sha256": trace.sha256})
    rule.save(tmp_path / "f1-weights.json")
    path = small_scenario(tmp_path)
    tuned = hindsight(str(path), "inspector", f"tuned:{tmp_path / 'f1-weights.json'}", sequences=1)
    f1 = hindsight(str(path), "inspector", "f1", sequences=1)
    assert tuned["rows"][0]["base"] == f1["rows"][0]["base"]
    assert tuned["rows"][0]["hindsight"] == f1["rows"][0]["hindsight"]
    assert tuned["base_label"] == "TUNED"
    data = json.loads((tmp_path / "f1-weights.json").read_text())
    data["trace"] = {"name": "SDSC-SP2", "sha256": "2bb635f4b5793f52bd49ccb8fd913d95f9c5be6346925162cadcaf0117e28cf2"}
    (tmp_path / "other.json").write_text(json.dumps(data))
    assert main(["hindsight", "--scenario", str(path), "--decision", "inspector", "--sequences", "1",
                 "--base", f"tuned:{tmp_path / 'other.json'}"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(err) == 1 and "fitted on trace SDSC-SP2" in err[0], err
    assert err[0].startswith("schedrl hindsight: error: "), err
