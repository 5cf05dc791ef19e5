"""Tuned rules in the zoo (`schedrl zoo add-rule`, `zoo:NAME` for a rule, the leaderboard's entrants): the shipped
ones against their files, adding one, and the errors a user meets (no scenario, a changed file, a rule given where a
trained network is needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shared_traces import shared_trace

from schedrl.cli.main import main
from schedrl.heuristics import keys
from schedrl.heuristics.tuned import TunedRule
from schedrl.zoo import manifest
from schedrl.zoo.store import ZooError, file_sha256


def rule_file(tmp_path, scenario: dict | None = None, name: str = "rule.json"):
    n = len(keys.LINEAR_TERMS)
    record = {"metric": "bsld", "budget_s": 120.0, "seed": 3, "validation": {"score": 1.5, "f1": 2.0, "starts": [0],
                                                                            "jobs": 64}}
    if scenario is not None:
        record["scenario"] = scenario
    rule = TunedRule(np.linspace(-1, 1, n), np.ones(n), {"name": "default", "sha256": None}, record)
    path = tmp_path / name
    rule.save(path)
    return path


def test_the_shipped_rules_match_their_files():
    for entry in manifest.rules():
        assert manifest.NAME_PATTERN.fullmatch(entry.name) and entry.fields["agent"] == "tuned"
        path = manifest.rule_file(entry.name)
        assert path.stat().st_size == entry.fields["bytes"] and file_sha256(path) == entry.fields["sha256"]
        data = json.loads(path.read_text())
        assert data["scenario"]["name"] == entry.fields["scenario"]["name"]
        assert data["scenario"]["sha256"] == entry.fields["scenario"]["sha256"]
    on_disk = {p.stem for p in (manifest.ZOO_DIR / "rules").glob("*.json")}
    assert on_disk == {e.name for e in manifest.rules()}  # no rule file left out of the manifest


def test_a_rule_is_added_listed_shown_and_resolved(tmp_path, monkeypatch, capsys):
    from schedrl.eval.policies import resolve_policy

    monkeypatch.setenv(manifest.ZOO_DIR_ENV, str(tmp_path / "zoo"))
    source = rule_file(tmp_path, {"name": "default", "sha256": "ab" * 32})
    assert main(["zoo", "add-rule", str(source), "--name", "my-rule"]) == 0
    out = capsys.readouterr().out
    assert "zoo:my-rule" in out and "schedrl tuned fit --scenario default --budget 2m --seed 3" in out
    (entry,) = manifest.rules()
    assert entry.fields["command"] == "schedrl tuned fit --scenario default --budget 2m --seed 3 --out rule.json"
    assert entry.fields["validation_score"] == 1.5 and entry.fields["budget"] == {"seconds": 120.0}
    policy = resolve_policy("zoo:my-rule")
    assert isinstance(policy, TunedRule) and np.allclose(policy.weights, np.linspace(-1, 1, len(keys.LINEAR_TERMS)))
    assert main(["zoo", "list"]) == 0
    assert "my-rule" in capsys.readouterr().out
    assert main(["zoo", "show", "my-rule"]) == 0
    shown = capsys.readouterr().out
    assert "fitted on scenario `default`" in shown and "| `log10(s)` |" in shown
    # the same name again is refused unless --replace; a name a user cannot type is refused
    assert main(["zoo", "add-rule", str(source), "--name", "my-rule"]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["zoo", "add-rule", str(source), "--name", "my-rule", "--replace", "--command", "by hand"]) == 0
    assert manifest.rules()[0].fields["command"] == "by hand"
    assert main(["zoo", "add-rule", str(source), "--name", "My Rule"]) == 2


def test_a_rule_without_a_scenario_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(manifest.ZOO_DIR_ENV, str(tmp_path / "zoo"))
    assert main(["zoo", "add-rule", str(rule_file(tmp_path)), "--name", "x"]) == 2
    err = capsys.readouterr().err
    assert "fitted without --scenario" in err and len(err.strip().splitlines()) == 1
    assert main(["zoo", "add-rule", str(tmp_path / "missing.json"), "--name", "x"]) == 2
    assert "no such tuned-rule file" in capsys.readouterr().err


def test_a_changed_rule_file_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    from schedrl.agents.checkpoint import CheckpointError
    from schedrl.eval.policies import resolve_policy

    monkeypatch.setenv(manifest.ZOO_DIR_ENV, str(tmp_path / "zoo"))
    manifest.add_rule(rule_file(tmp_path, {"name": "default", "sha256": None}), "r", "by hand")
    stored = tmp_path / "zoo" / "rules" / "r.json"
    stored.write_text(stored.read_text().replace('"seed": 3', '"seed": 4'))
    with pytest.raises(CheckpointError, match=r"r\.json: checksum mismatch"):
        resolve_policy("zoo:r")
    assert main(["zoo", "show", "r"]) == 2
    assert "checksum mismatch" in capsys.readouterr().err


def test_a_rule_where_a_trained_network_is_needed_says_what_to_do(tmp_path, monkeypatch):
    from schedrl.zoo.manifest import find

    monkeypatch.setenv(manifest.ZOO_DIR_ENV, str(tmp_path / "zoo"))
    manifest.add_rule(rule_file(tmp_path, {"name": "default", "sha256": None}), "tuned-default", "by hand")
    with pytest.raises(ZooError, match="is a tuned rule, not a trained network: .*compare --policies f1,zoo:tuned-default"):
        find("tuned-default")
    with pytest.raises(ZooError, match="did you mean tuned-default"):
        find("tuned-defualt")


def test_the_leaderboard_enters_each_rule_on_every_trace_scenario_marked_with_its_own(tmp_path, monkeypatch):
    from schedrl.eval.leaderboard import CannotRun, trained_here, zoo_entrants
    from schedrl.scenarios import standard

    monkeypatch.setenv(manifest.ZOO_DIR_ENV, str(tmp_path / "zoo"))
    manifest.add_rule(rule_file(tmp_path, {"name": "default", "sha256": None}), "tuned-default", "by hand")
    (entrant,) = zoo_entrants()
    assert entrant.label == "tuned-default" and entrant.kind == "tuned"
    assert isinstance(entrant.make(standard()["default"]), TunedRule) and trained_here(entrant, standard()["default"])
    moved = entrant.make(standard()["lublin1"])  # transfer: its fit's scales go with it
    assert isinstance(moved, TunedRule) and not moved.strict and not trained_here(entrant, standard()["lublin1"])
    with pytest.raises(CannotRun, match="generated on the discrete-time cluster"):
        entrant.make(standard()["rlschert-vasp"])


def test_a_zoo_rule_is_scored_on_the_board(tmp_path, monkeypatch):
    from schedrl.eval.leaderboard import board, zoo_entrants
    from schedrl.scenarios import standard

    monkeypatch.setenv(manifest.ZOO_DIR_ENV, str(tmp_path / "zoo"))
    n = len(keys.LINEAR_TERMS)
    f1_like = np.zeros(n)  # a rule that only orders by log10(s): its score is a number, not a failed row
    f1_like[list(keys.LINEAR_TERMS).index("log10(s)")] = 1.0
    path = tmp_path / "rule.json"
    TunedRule(f1_like, np.ones(n), {"name": "default", "sha256": None},
              {"metric": "bsld", "seed": 0, "scenario": {"name": "default", "sha256": None}}).save(path)
    manifest.add_rule(path, "tuned-default", "by hand")
    result = board(standard()["default"], zoo_entrants(), sequences=2)
    assert not result["failed"], result["failed"]
    row = next(r for r in result["rows"] if r["method"] == "tuned-default")
    assert row["kind"] == "tuned" and row["trained"] == "here" and np.isfinite(row["mean"])


def test_a_policy_trained_on_the_evaluation_jobs_is_marked_not_held_out():
    from schedrl.eval.leaderboard import _name, held_out
    from schedrl.eval.policies import resolve_policy
    from schedrl.scenarios import scoring, standard

    scenario = standard()["default"]
    data = scoring.load(scenario)
    seqs = scoring.sequences(scenario, data, "evaluation")
    assert not held_out(resolve_policy("zoo:linear-default-s0"), scenario, seqs, data)  # no training split
    assert held_out(resolve_policy("zoo:rlscheduler-default-s0"), scenario, seqs, data)  # trained on the first 70%
    assert held_out(resolve_policy("f1"), scenario, seqs, data)
    shared_trace("lublin_256.swf.gz")  # Lublin-1 is a real trace of ../shared: skip without it (a user's clone)
    lublin1 = standard()["lublin1"]  # evaluated on its own trace: held out from a policy trained on Lublin-1
    heldout = scoring.sequences(lublin1, scoring.load(lublin1), "evaluation")
    assert held_out(resolve_policy("zoo:rlscheduler-lublin1-s0"), lublin1, heldout, scoring.load(lublin1))
    assert _name({"method": "m", "held_out": False}) == "m (not held out)" and _name({"method": "m"}) == "m"
