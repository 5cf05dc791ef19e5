"""Every agent's fixture policy (fixture_modules.py) schedules its held-out sequences exactly as recorded.

A fixture is a tiny trained module of one agent; `expected/<agent>.json` holds the per-sequence aggregates
it scored when it was made. A change that moves any of them moved the simulator, an env's observation, a
network's forward pass or the scoring. Regenerate (`make_fixtures.py`) only for an intended numerical change.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from fixture_modules import AGENTS, EXPECTED, assert_same, load_fixture_policy


def evaluate(policy, record, ids, length: int) -> list:
    """The policy's per-sequence aggregates on sequences `ids` of `length` jobs: every `schedrl.metrics.Metrics`
    field on the event simulator, the agent's objective on the discrete-time cluster (what `schedrl evaluate`
    reports). The one place that calls the scoring API."""
    from schedrl.agents import get_agent

    agent = get_agent(record.agent)
    judge = agent.judge(agent.env_config_class.from_dict(dict(record.env_config)))
    workload = judge.load()
    if not judge.generated:
        return [asdict(m) for m in judge.policy_metrics(policy, workload, list(ids), length)]
    return list(judge.score_policy(policy, workload, list(ids), length))


@pytest.mark.parametrize("agent", AGENTS)
def test_fixture_policy_reproduces_its_evaluation(agent):
    expected = json.loads((EXPECTED / f"{agent}.json").read_text())
    policy = load_fixture_policy(agent)
    assert_same(evaluate(policy, policy.record, expected["ids"], expected["length"]), expected["per_sequence"], agent)
