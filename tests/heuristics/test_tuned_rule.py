"""The tuned linear rule: F1's and SJF's weights schedule as F1 and SJF do, fitting improves on a bad start
without touching held-out jobs, the JSON file round-trips, and bad files or traces are one clear error."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from schedrl.heuristics import get_heuristic
from schedrl.heuristics.keys import LINEAR_TERMS
from schedrl.heuristics.tuned import STARTS, FitSettings, RuleError, TunedRule, fit, load_rule, normalisation, scores
from schedrl.sim import SimConfig, Simulator
from schedrl.workload import CleaningRules, Workload, read_swf
from schedrl.workload.catalog import load_trace
from schedrl.workload.fields import FIELD_NAMES
from schedrl.workload.sampling import sequence
from shared_traces import shared_trace
from cli_process import cli

STARTS_DEFAULT = [0, 5_000, 20_000, 31_000]


@pytest.fixture(scope="module")
def default() -> Workload:
    """The embedded `default` trace (40,000 Lublin-model jobs), as the CLI cleans it."""
    return load_trace("default", CleaningRules.preset("default"))


def rule_of(name: str, workload: Workload, end: int = 28_000) -> TunedRule:
    """The linear rule with a named heuristic's raw coefficients (`STARTS`), normalised on jobs [0, end)."""
    trace = {"name": workload.name, "sha256": workload.sha256}
    return TunedRule.from_coefficients(STARTS[name], normalisation(workload, end), trace)


def starts_of(policy, workload: Workload, start: int, jobs: int, backfill: str, stepwise: bool = False) -> np.ndarray:
    sim = Simulator(sequence(workload, start, jobs), SimConfig(backfill=backfill))
    return (sim.run(policy) if stepwise else policy.run(sim)).start


@pytest.mark.parametrize("backfill", ["none", "easy"])
@pytest.mark.parametrize("name", ["f1", "sjf"])
def test_named_weights_schedule_exactly_as_the_heuristic(default, name, backfill):
    rule, heuristic = rule_of(name, default), get_heuristic(name)
    for start in STARTS_DEFAULT:
        expected = starts_of(heuristic, default, start, 1024, backfill)
        assert np.array_equal(starts_of(rule, default, start, 1024, backfill), expected), (name, start)
        # the step-by-step `pick` path and the compiled loop agree
        assert np.array_equal(starts_of(rule, default, start, 1024, backfill, stepwise=True), expected)


def test_f1_weights_schedule_as_f1_on_lublin_1():
    lublin = read_swf(shared_trace("lublin_256.swf.gz"), CleaningRules.preset("default"))
    rule = rule_of("f1", lublin, 7_000)
    for start in (0, 3_000, 7_750, 8_976):
        assert np.array_equal(starts_of(rule, lublin, start, 1024, "none"),
                              starts_of(get_heuristic("f1"), lublin, start, 1024, "none"))


def test_scales_are_powers_of_two_so_raw_coefficients_are_exact(default):
    scales = normalisation(default, 28_000)
    assert len(scales) == len(LINEAR_TERMS)
    assert np.array_equal(np.exp2(np.round(np.log2(scales))), scales)
    assert np.array_equal(rule_of("f1", default).coefficients, np.array(STARTS["f1"]))


def crowded(n: int = 600, held_out: int = 0, seed: int = 0) -> Workload:
    """`n` jobs on 16 processors arriving faster than they run: long and short, narrow and wide ones mixed, so the
    order matters (LJF is bad for bounded slowdown). The last `held_out` jobs are wider than the machine: simulating
    any of them fails."""
    rng = np.random.default_rng(seed)
    run = np.where(rng.random(n) < 0.3, rng.integers(2_000, 8_000, n), rng.integers(10, 300, n)).astype(float)
    procs = rng.integers(1, 9, n)
    procs[n - held_out:] = 99
    columns = {name: np.full(n, -1) for name in FIELD_NAMES}
    columns.update(job_id=np.arange(1, n + 1), submit=np.cumsum(rng.integers(0, 200, n)), run=run, time_req=run,
                   procs_req=procs, procs_alloc=procs, status=np.ones(n), user=np.ones(n))
    return Workload(columns, max_procs=16, max_nodes=16, name="crowded")


def test_fitting_improves_over_a_bad_start_without_simulating_held_out_jobs():
    workload = crowded(held_out=100)  # jobs 500..599 would fail: the fit must never simulate them
    validation = [400, 420, 440]
    settings = FitSettings(budget_s=3.0, seed=0, window_jobs=100, windows=4, start="ljf", report_every_s=0.5)
    lines = []
    rule = fit(workload, SimConfig(), settings, 400, validation, 60, log=lines.append)
    ljf = scores(workload, SimConfig(), "bsld", validation, 60, rule_of("ljf", workload, 400).coefficients).mean()
    tuned = scores(workload, SimConfig(), "bsld", validation, 60, rule.coefficients).mean()
    assert rule.record["validation"]["candidates"][0][1] == pytest.approx(ljf)  # the start is kept as a candidate
    assert tuned == pytest.approx(rule.record["validation"]["score"]) and tuned < 0.8 * ljf
    assert rule.record["fitting"]["generations"] > 0 and rule.record["history"]
    assert lines[0].startswith("fitting a linear rule on crowded") and lines[-1].startswith("kept the rule")
    assert all(" x F1 " in line and " s / 3 s" in line for line in lines[1:-1])


def test_the_file_round_trips(default, tmp_path):
    rule = rule_of("f1", default)
    rule = TunedRule(rule.weights * 0.75 + 0.01, rule.scales, {**rule.trace, "cleaning": "default"},
                     {"metric": "bsld", "backfill": "none", "budget_s": 5.0, "seed": 3, "history": [{"generation": 1}]})
    path = tmp_path / "rule.json"
    rule.save(path)
    loaded = load_rule(path)
    assert np.array_equal(loaded.weights, rule.weights) and np.array_equal(loaded.scales, rule.scales)
    assert loaded.trace == rule.trace and loaded.record == rule.record and loaded.source == str(path)
    assert json.loads(path.read_text())["features"] == list(LINEAR_TERMS)
    for start in STARTS_DEFAULT[:2]:
        assert np.array_equal(starts_of(loaded, default, start, 512, "none"),
                              starts_of(rule, default, start, 512, "none"))


def write(tmp_path, data, name: str = "rule.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


@pytest.mark.parametrize("change, message", [
    (lambda d: "{not json", r"rule\.json:1: not a tuned-rule file: invalid JSON"),
    (lambda d: [1, 2], r"rule\.json: not a tuned-rule file"),
    (lambda d: {**d, "version": 9}, r"rule\.json: tuned-rule file version 9"),
    (lambda d: {**d, "weights": [1.0, 2.0]}, r"rule\.json: weights must be a list of 8 finite numbers"),
    (lambda d: {**d, "weights": [1.0] * 7 + ["x"]}, r"rule\.json: weights must be a list of 8"),
    (lambda d: {**d, "features": ["log10(r)", "log10(s)"]}, r"rule\.json: its features .* are not this schedrl's"),
    (lambda d: {**d, "normalisation": {"scales": [3.0] * 8}},
     r"rule\.json: normalisation\.scales must be positive powers of two"),
    (lambda d: {**d, "normalisation": {}}, r"rule\.json: normalisation\.scales must be a list of 8"),
    (lambda d: {k: v for k, v in d.items() if k != "trace"}, r"rule\.json: \"trace\" must hold"),
])
def test_a_malformed_file_is_one_error_naming_it(default, tmp_path, change, message):
    path = write(tmp_path, change(rule_of("f1", default).to_dict()))
    with pytest.raises(RuleError, match=message):
        load_rule(path)


def test_a_rule_of_another_trace_is_refused(default, tmp_path):
    data = rule_of("f1", default).to_dict()
    data["trace"] = {"name": "SDSC-SP2", "sha256": "2bb635f4b5793f52bd49ccb8fd913d95f9c5be6346925162cadcaf0117e28cf2"}
    rule = load_rule(write(tmp_path, data))
    with pytest.raises(RuleError, match=r"rule\.json: fitted on trace SDSC-SP2 \(sha256 2bb635f4b579\), not "
                                        r"default .*its feature normalisation is that trace's"):
        rule.run(Simulator(sequence(default, 0, 64)))


def assert_one_error(status: int, err: str, pattern: str) -> None:
    assert status == 2 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error: " in lines[0], err
    assert re.search(pattern, lines[0]), lines[0]


def test_cli_errors_are_one_line(default, tmp_path, capsys):
    bad = write(tmp_path, "{not json")
    status, _, err = cli(capsys, "simulate", "--trace", "default", "--jobs", "64", "--policy", f"tuned:{bad}")
    assert_one_error(status, err, r"^schedrl simulate: error: .*rule\.json:1: not a tuned-rule file")
    status, _, err = cli(capsys, "compare", "--trace", "default", "--jobs", "64", "--sequences", "2",
                         "--policies", f"f1,tuned:{tmp_path / 'missing.json'}")
    assert_one_error(status, err, r"^schedrl compare: error: .*missing\.json: no such tuned-rule file")
    data = rule_of("f1", default).to_dict()
    data["trace"] = {"name": "other", "sha256": "0" * 64}
    other = write(tmp_path, data, "other.json")
    for command in (["simulate", "--policy", f"tuned:{other}"],
                    ["compare", "--sequences", "2", "--policies", f"tuned:{other}"]):
        status, _, err = cli(capsys, *command, "--trace", "default", "--jobs", "64")
        assert_one_error(status, err, rf"^schedrl {command[0]}: error: .*other\.json: fitted on trace other")
    status, _, err = cli(capsys, "tuned", "fit", "--trace", "default", "--budget", "5", "--out", str(tmp_path / "x"))
    assert_one_error(status, err, r"^schedrl tuned: error: --budget 5 has no unit")
    status, _, err = cli(capsys, "tuned", "evaluate", bad)
    assert_one_error(status, err, r"^schedrl tuned: error: .*rule\.json:1: not a tuned-rule file")


@pytest.mark.integration  # starts a subprocess
def test_cli_fits_evaluates_and_compares(default, tmp_path, capsys):
    out = tmp_path / "rule.json"
    fitted = subprocess.run([sys.executable, "-m", "schedrl", "tuned", "fit", "--trace", "default", "--budget", "2s",
                             "--window-jobs", "256", "--windows", "2", "--validation-sequences", "2", "--seed", "1",
                             "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert fitted.returncode == 0, fitted.stderr
    assert "kept the rule of generation" in fitted.stdout and "rule written to" in fitted.stdout
    rule = load_rule(out)
    assert rule.trace["name"] == "default" and rule.trace["sha256"] == default.sha256
    assert rule.record["split"] == {"train": [0, 28_000], "validation": [28_000, 31_000],
                                    "evaluation": [31_000, 40_000], "train_fraction": 0.7, "validation_share": 0.25}
    assert all(28_000 <= s <= 31_000 - 1024 for s in rule.record["validation"]["starts"])
    assert {"budget_s", "seed", "metric", "backfill", "history", "fitting"} <= set(rule.record)
    status, text, err = cli(capsys, "tuned", "evaluate", str(out), "--sequences", "2", "--jobs", "256", "--json")
    assert status == 0, err
    result = json.loads(text)
    assert all(31_000 <= s <= 40_000 - 256 for s in result["starts"])
    assert result["versus_f1"][0]["baseline"] == "F1" and result["versus_f1"][0]["policy"] == "TUNED"
    assert "independent" not in result["versus_f1"][0]  # two 256-job windows fit side by side
    status, text, err = cli(capsys, "tuned", "evaluate", str(out), "--sequences", "12", "--jobs", "1024", "--json")
    assert status == 0, err  # twelve 1,024-job windows in a 9,000-job zone overlap: 8 disjoint ones fit
    assert json.loads(text)["versus_f1"][0]["independent"] == 8
    status, text, err = cli(capsys, "compare", "--trace", "default", "--jobs", "256", "--starts", "31000,32000",
                            "--policies", f"f1,tuned:{out}", "--json")
    assert status == 0, err
    means = {r["policy"]: r["mean"] for r in json.loads(text)["results"]}
    tuned = [r for r in result["results"] if r["policy"] == "TUNED"][0]
    assert means[f"tuned:{out}"] == pytest.approx(np.mean(scores(default, SimConfig(), "bsld", [31_000, 32_000], 256,
                                                                 rule.coefficients)))
    assert tuned["mean"] == pytest.approx(np.mean(scores(default, SimConfig(), "bsld", result["starts"], 256,
                                                         rule.coefficients)))


def test_cli_fits_on_a_scenario_under_its_semantics_and_validation_sequences(default, tmp_path, capsys):
    """`tuned fit --scenario`: the scenario's semantics (here a 10-job list window with EASY, average wait), its
    training zone and its validation sequences; the rule then scores on the scenario like any policy."""
    import yaml

    from schedrl.scenarios import get_scenario, scoring, standard

    d = standard()["default"].to_dict()
    d.pop("name")
    d.update(metric="wait", reference="F1+EASY", baselines=[{"policy": "f1", "label": "F1+EASY"}],
             validation={"count": 2, "jobs": 256, "seed": 0}, evaluation={"count": 2, "jobs": 256, "seed": 0},
             sim={"discipline": "list", "window": 10, "backfill": "easy"})
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(d))
    scenario = get_scenario(str(path))
    out = tmp_path / "rule.json"
    status, text, err = cli(capsys, "tuned", "fit", "--scenario", str(path), "--budget", "2s", "--window-jobs",
                            "256", "--windows", "2", "--out", str(out))
    assert status == 0, err
    assert "kept the rule of generation" in text and f"compare --scenario site --policies f1+easy,tuned:{out}" in text
    rule = load_rule(out)
    assert SimConfig.from_dict(rule.record["sim_config"]) == scenario.sim
    assert rule.record["metric"] == "wait" and rule.record["scenario"]["name"] == "site"
    validation = scoring.sequences(scenario, scoring.load(scenario), "validation")
    assert rule.record["validation"]["starts"] == validation.ids and rule.record["validation"]["jobs"] == 256
    assert rule.record["split"]["train"] == [0, 24_000]  # the default scenario trains on its first 60%
    status, _, err = cli(capsys, "tuned", "fit", "--scenario", str(path), "--validation-share", "0.5", "--out",
                         str(out))
    assert_one_error(status, err, r"^schedrl tuned: error: --scenario cannot be given with --validation-share: a scenario "
                                  r"fixes the split")
    status, _, err = cli(capsys, "tuned", "fit", "--scenario", "rlschert-vasp", "--out", str(out))
    assert_one_error(status, err, r"^schedrl tuned: error: scenario 'rlschert-vasp' runs on the discrete-time")
    status, _, err = cli(capsys, "tuned", "fit", "--out", str(out))
    assert_one_error(status, err, r"^schedrl tuned: error: give --trace .* or --scenario")
