"""Scenarios: definitions, files, precedence, sequences, scoring, and the CLI's `scenarios` and `--scenario`."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from schedrl.cli.main import build_parser, explicit_dests, main
from schedrl.scenarios import Scenario, get_scenario, scoring, standard
from schedrl.scenarios.standard import STANDARD
from shared_traces import SHARED_DATA, SHARED_TRACES, shared_trace

NEEDS = {"lublin_256": "lublin_256.swf.gz", "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz",
         "HPC2N": "HPC2N-2002-2.2-cln.swf.gz", "SDSC-BLUE": "SDSC-BLUE-2000-4.2-cln.swf.gz"}


def cli(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def need_data(s: Scenario) -> None:
    """Skip (never under CI=true) when the scenario's real data is not beside the repository."""
    if s.generated:
        shared_trace("vasp", SHARED_DATA) if not list(SHARED_DATA.glob("*vasp*")) else None
    elif s.workload.trace == "theta-cqgym":
        shared_trace("theta-cqgym", SHARED_DATA)
    elif s.workload.trace in NEEDS:
        shared_trace(NEEDS[s.workload.trace], SHARED_TRACES)


def test_the_standard_scenarios_cover_the_paper_setups_the_docs_report():
    names = set(standard())
    assert {"default", "lublin1", "lublin1-bf", "sdsc-sp2", "hpc2n", "dras-sdsc-sp2", "dras-theta", "dras-sdsc-blue",
            "mrsch-s4", "mrsch-s5", "mrsch-s9", "rlschert-vasp"} <= names
    assert len(names) == len(STANDARD)


@pytest.mark.parametrize("name", [d["name"] for d in STANDARD])
def test_a_definition_round_trips_with_the_same_hash(name):
    s = standard()[name]
    again = Scenario.from_dict(json.loads(json.dumps(s.to_dict())))
    assert again == s and again.sha256() == s.sha256()
    via_yaml = Scenario.from_dict(yaml.safe_load(yaml.safe_dump(s.to_dict())))
    assert via_yaml.sha256() == s.sha256()
    assert s.record() == {"name": name, "sha256": s.sha256(), "definition": s.to_dict()}


def test_the_hash_changes_with_the_definition_and_not_with_key_order():
    s = standard()["lublin1"]
    d = s.to_dict()
    shuffled = dict(reversed(list(d.items())))
    assert Scenario.from_dict(shuffled).sha256() == s.sha256()
    assert s.overridden(seed=1).sha256() != s.sha256()


@pytest.mark.parametrize("change, message", [
    ({"colour": 1}, r"unknown key\(s\) colour"),
    ({"reference": "LJF"}, r"reference 'LJF' is not one of its baselines"),
    ({"baselines": ["fcfs", "nope"]}, r"baseline 'nope' is not a heuristic"),
    ({"baselines": ["fcfs", "fcfs"], "reference": "FCFS"}, r"share a label"),
    ({"workload": {"cleaning": "x"}}, r"`trace` is required"),
    ({"workload": {"trace": "default", "cleaning": "x"}}, r"workload.cleaning 'x' is not a cleaning preset"),
    ({"sim": {"backfil": "easy"}}, r"sim: unknown SimConfig field"),
    ({"metric": "speed"}, r"metric"),
    ({"evaluation": {"count": 0}}, r"evaluation.count must be an integer >= 1"),
    ({"split": {"train_fraction": 1.5}}, r"split.train_fraction must be a number in \(0, 1\]"),
    ({"cluster": {"job_rate": 0.5}}, r"either `workload`"),
])
def test_a_bad_definition_is_one_error_naming_the_source_and_the_key(change, message):
    d = {**standard()["default"].to_dict(), **change}
    with pytest.raises(ValueError, match=message) as e:
        Scenario.from_dict(d, "my.yaml")
    assert str(e.value).startswith("my.yaml: ")


def test_a_user_scenario_file_loads_by_path_and_from_the_search_path(tmp_path, monkeypatch):
    d = standard()["default"].to_dict()
    d.pop("name")
    d["description"] = "site copy"
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(d))
    s = get_scenario(str(path))
    assert s.name == "site" and s.description == "site copy"
    monkeypatch.setenv("SCHEDRL_SCENARIO_PATH", str(tmp_path))
    assert get_scenario("site") == s


def test_bad_scenario_files_and_names_say_where(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmetric: [bsld\n")
    with pytest.raises(ValueError, match=r"bad.yaml:\d+: not valid YAML"):
        get_scenario(str(bad))
    with pytest.raises(ValueError, match=r"did you mean 'lublin1'"):
        get_scenario("lubin1")
    with pytest.raises(ValueError, match="does not exist"):
        get_scenario(str(tmp_path / "absent.yaml"))


def test_overriding_the_backfilling_relabels_the_baselines_and_keeps_the_reference_rule():
    s = standard()["default"].overridden(backfill="easy", sequences=3, jobs=256, seed=4)
    assert s.labels() == ["FCFS+EASY", "SJF+EASY", "WFP3+EASY", "UNICEP+EASY", "F1+EASY"]
    assert s.reference == "F1+EASY" and (s.evaluation.count, s.evaluation.jobs, s.evaluation.seed) == (3, 256, 4)
    with pytest.raises(ValueError, match="generated on the discrete-time cluster"):
        standard()["rlschert-vasp"].overridden(trace="default")


def test_explicit_options_are_told_apart_from_defaults_abbreviations_included():
    parser = build_parser("compare")
    given = explicit_dests(parser, ["compare", "--scenario", "default", "--seq=3", "--back", "easy", "--no-progress"])
    assert given == {"scenario", "sequences", "backfill", "no_progress"}
    parser = build_parser("train")
    given = explicit_dests(parser, ["train", "rlscheduler", "--out", "d", "--runner-resource", "a=1"])
    assert given == {"out", "runner_resource"}


def test_evaluation_sequences_come_from_the_evaluation_zone_with_the_scenarios_seed():
    s = standard()["default"]
    workload = scoring.load(s)
    seqs = scoring.sequences(s, workload, "evaluation")
    val = scoring.sequences(s, workload, "validation")
    lo, hi = s.split.zone(len(workload))
    assert (lo, hi) == seqs.zone == (28000, 40000) and len(set(seqs.ids)) == 11 == seqs.independent
    assert all(lo <= i and i + 1024 <= hi for i in seqs.ids)
    assert all(b - a >= 1024 for a, b in zip(seqs.ids, seqs.ids[1:]))  # disjoint: side by side
    assert all(24000 <= i and i + 1024 <= 28000 for i in val.ids) and len(val.ids) == 3
    assert seqs.ids == scoring.sequences(s, workload, "evaluation").ids  # fixed by the definition
    assert scoring.sequences(s.overridden(seed=1), workload, "evaluation").ids != seqs.ids


@pytest.mark.parametrize("name", [d["name"] for d in STANDARD])
def test_every_standard_scenario_holds_ten_disjoint_windows_or_says_it_is_underpowered(name):
    s = standard()[name]
    need_data(s)
    seqs = scoring.sequences(s, None if s.generated else scoring.load(s), "evaluation")
    if s.generated:
        assert len(seqs.ids) >= 10 and seqs.independent == len(seqs.ids)
        return
    if seqs.independent < 10:  # only where no held-out source exists, and the definition says so
        assert s.evaluation.placement == "overlapping" and "underpowered" in s.description
        return
    assert s.evaluation.placement == "disjoint" and not seqs.overlapping and seqs.independent == len(seqs.ids)
    assert all(b - a >= seqs.length for a, b in zip(seqs.ids, seqs.ids[1:]))
    lo, hi = seqs.zone
    assert len(seqs.ids) == (hi - lo) // seqs.length  # as many as the zone holds
    val = scoring.sequences(s, scoring.load(s), "validation")
    if val.zone[0] != 0:
        assert len(val.ids) == min(10, (val.zone[1] - val.zone[0]) // val.length)


def test_lublin1_is_evaluated_on_an_independent_draw_and_the_paper_split_stays_a_variant():
    s, paper = standard()["lublin1"], standard()["lublin1-paper"]
    need_data(s)
    seqs = scoring.sequences(s, scoring.load(s), "evaluation")
    assert seqs.source == "lublin-heldout" and seqs.data.name != scoring.load(s).name
    assert len(seqs.ids) == 20 and seqs.zone == (0, len(seqs.data)) and len(seqs.data) == 20500
    old = scoring.sequences(paper, scoring.load(paper), "evaluation")
    assert old.overlapping and old.independent == 2 and old.zone == (7750, 10000)
    assert s.final_evaluation(set()) == {}  # training keeps its own split
    scores = scoring.score(s.overridden(sequences=2), baselines=True)
    assert set(scores.values()) == set(s.labels())


def test_windows_a_zone_cannot_hold_are_refused_with_the_numbers():
    s = standard()["default"]
    workload = scoring.load(s)
    with pytest.raises(ValueError, match=r"12 disjoint windows of 1,024 jobs need 12,288 jobs; it holds 12,000 "
                                         r"\(positions 28000\.\.39999\), room for 11"):
        scoring.sequences(s.overridden(sequences=12), workload, "evaluation")
    random = Scenario.from_dict({**s.to_dict(), "evaluation": {"count": 12, "jobs": 1024, "seed": 0}})
    with pytest.raises(ValueError, match=r"need 12,288 jobs; it holds 12,000"):
        scoring.sequences(random, workload, "evaluation")
    said = Scenario.from_dict({**s.to_dict(), "evaluation": {"count": 12, "jobs": 1024, "placement": "overlapping"}})
    seqs = scoring.sequences(said, workload, "evaluation")
    assert seqs.overlapping and seqs.independent == 11
    with pytest.raises(ValueError, match=r"placement must be one of random, disjoint, overlapping"):
        Scenario.from_dict({**s.to_dict(), "evaluation": {"count": 2, "placement": "tiled"}})
    with pytest.raises(ValueError, match=r"validation.trace: only the evaluation"):
        Scenario.from_dict({**s.to_dict(), "validation": {"count": 2, "trace": "default"}})


def test_compare_with_a_scenario_equals_compare_on_its_trace_and_starts(capsys):
    s = standard()["default"].overridden(sequences=3, jobs=256)
    starts = scoring.sequences(s, scoring.load(s), "evaluation").ids
    rc, out, err = cli(capsys, "compare", "--scenario", "default", "--sequences", "3", "--jobs", "256", "--json")
    assert rc == 0 and "scenario default" in err
    by_scenario = {r["policy"]: r["per_sequence"] for r in json.loads(out)["results"]}
    rc, out, _ = cli(capsys, "compare", "--trace", "default", "--starts", ",".join(map(str, starts)), "--jobs", "256",
                     "--json", "--policies", "fcfs,sjf,wfp3,unicep,f1", "--seed", "0")
    classic = {r["policy"].upper(): r["per_sequence"] for r in json.loads(out)["results"]}
    assert by_scenario == classic


def test_compare_scenario_precedence_explicit_options_win(capsys):
    rc, out, _ = cli(capsys, "compare", "--scenario", "default", "--sequences", "2", "--jobs", "128",
                     "--backfill", "easy", "--metric", "wait", "--json")
    data = json.loads(out)
    assert rc == 0 and data["metric"] == "wait" and data["jobs"] == 128 and len(data["starts"]) == 2
    assert {r["policy"] for r in data["results"]} == {"FCFS+EASY", "SJF+EASY", "WFP3+EASY", "UNICEP+EASY", "F1+EASY"}
    rc, _, err = cli(capsys, "compare", "--scenario", "default", "--starts", "5")
    assert rc == 2 and "a scenario fixes its sequences" in err
    rc, _, err = cli(capsys, "compare", "--scenario", "nope")
    assert rc == 2 and err.count("error:") == 1 and "unknown scenario 'nope'" in err


def test_scenarios_list_and_show(capsys, tmp_path):
    rc, out, _ = cli(capsys, "scenarios", "list")
    assert rc == 0 and all(d["name"] in out for d in STANDARD)
    rc, out, _ = cli(capsys, "scenarios", "show", "dras-sdsc-sp2")
    assert rc == 0 and "window 10" in out and "F1+EASY" in out and standard()["dras-sdsc-sp2"].sha256() in out
    rc, out, _ = cli(capsys, "scenarios", "show", "mrsch-s4", "--yaml")
    path = tmp_path / "copy.yaml"
    path.write_text(out)
    assert get_scenario(str(path)).sha256() == standard()["mrsch-s4"].sha256()
    rc, out, _ = cli(capsys, "scenarios", "show", "default", "--sequences")
    assert rc == 0 and "evaluation starts" in out


@pytest.mark.parametrize("name", [d["name"] for d in STANDARD])
def test_each_reference_is_the_best_baseline_on_the_validation_sequences(name):
    s = standard()[name]
    need_data(s)
    best, _ = scoring.best_baseline(scoring.score(s, part="validation"))
    assert best == s.reference


def test_generated_scenarios_score_on_the_discrete_time_cluster_like_the_rlschert_agent():
    from schedrl.agents import get_agent

    s = Scenario.from_dict({**standard()["rlschert-vasp"].to_dict(),
                            "cluster": {"jobs": "synthetic", "job_rate": 0.7, "res_slot": 20, "simu_len": 50},
                            "validation": {"count": 2, "seed": 0}})
    scores = scoring.score(s, part="validation")
    agent = get_agent("rlschert")
    env = agent.env_config_class(jobs="synthetic", job_rate=0.7, res_slot=20, simu_len=50)
    by_agent = agent.judge(env).score_baselines(None, scores.sequences.ids, 0)
    ours = scores.values()
    for label in ("TETRIS", "SAF", "SJF+KILL"):
        assert np.allclose(ours[label], by_agent[label], rtol=0, atol=1e-12)


def test_simulate_with_a_scenario_runs_its_first_evaluation_sequence_under_its_semantics(capsys):
    s = standard()["default"]
    first = scoring.sequences(s, scoring.load(s), "evaluation").ids[0]
    rc, out, err = cli(capsys, "simulate", "--scenario", "default", "--policy", "f1", "--json")
    by_scenario = json.loads(out)
    rc2, out, _ = cli(capsys, "simulate", "--trace", "default", "--policy", "f1", "--start", str(first), "--jobs",
                      "1024", "--json")
    classic = json.loads(out)
    assert rc == rc2 == 0 and "scenario default" in err
    assert by_scenario["start"] == first and by_scenario["avg_bsld"] == classic["avg_bsld"]
    s = standard()["lublin1"]  # its evaluation's own trace: the first window of lublin-heldout
    need_data(s)
    seqs = scoring.sequences(s, scoring.load(s), "evaluation")
    rc, out, _ = cli(capsys, "simulate", "--scenario", "lublin1", "--policy", "f1", "--json")
    rc2, classic, _ = cli(capsys, "simulate", "--trace", "lublin-heldout", "--cleaning", "rlscheduler", "--preset",
                          "rlscheduler", "--policy", "f1", "--start", str(seqs.ids[0]), "--jobs", "1024", "--json")
    assert rc == rc2 == 0 and json.loads(out)["avg_bsld"] == json.loads(classic)["avg_bsld"]
    rc, out, _ = cli(capsys, "simulate", "--scenario", "default", "--policy", "f1", "--backfill", "easy", "--json")
    assert json.loads(out)["config"]["backfill"] == "easy"
