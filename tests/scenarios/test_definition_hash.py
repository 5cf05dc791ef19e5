"""A scenario's hash covers what a policy is trained and judged on, not its prose or its list of agents."""

from dataclasses import replace

from schedrl.scenarios.registry import get_scenario
from schedrl.scenarios.scenario import definition_sha256, recorded_sha256


def test_agents_and_prose_leave_the_hash_alone():
    s = get_scenario("default")
    for changed in (replace(s, agents=s.agents + ("someone-new",)), replace(s, description="reworded"),
                    replace(s, paper="another paper")):
        assert changed.sha256() == s.sha256()


def test_what_judges_changes_the_hash():
    s = get_scenario("default")
    assert replace(s, metric="wait").sha256() != s.sha256()
    assert s.overridden(sequences=3).sha256() != s.sha256()
    assert s.overridden(backfill="easy").sha256() != s.sha256()
    assert replace(s, name="default-copy").sha256() != s.sha256()


def test_a_record_written_under_the_old_rule_hashes_by_todays():
    s = get_scenario("lublin1")
    old_style = {"name": s.name, "sha256": "0" * 64, "definition": s.to_dict()}
    assert recorded_sha256(old_style) == s.sha256() == definition_sha256(s.to_dict())
    assert recorded_sha256({"name": s.name, "sha256": "abc"}) == "abc"
    assert recorded_sha256(None) is None
