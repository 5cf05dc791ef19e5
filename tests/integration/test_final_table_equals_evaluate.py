"""Issue 47 class 6: the final table `schedrl train` prints scores the kept policy as `schedrl evaluate` does.

For every agent on the event simulator, its zoo policy (the trained network of a `train --scenario` run, as
`evaluate` loads it) is scored on its scenario's evaluation sequences twice: by the final table's route
(`training/report.py` through `scenarios/protocol.py:RunProtocol`: the agent's judge, the scenario's starts, the
policy's judge) and by `evaluate`'s
(`eval/evaluate.py:on_scenario`). The two rows must be equal on every sequence. Decima-PG's were not (its judge ran
it without the EASY backfilling the scenario gives it: 28,872 against 17,533 for the same checkpoint).
(The discrete-time agents, DeepRM and RLSchert, are scored by their judge on both routes.)
"""

from __future__ import annotations

import pytest

from schedrl.zoo import manifest

SEQUENCES = 2
POLICIES = {e.fields["agent"]: e for e in manifest.entries()}


@pytest.mark.integration
@pytest.mark.parametrize("agent", sorted(POLICIES))
def test_the_final_tables_policy_row_is_evaluates(agent):
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import load_policy
    from schedrl.eval.evaluate import on_scenario
    from schedrl.scenarios import get_scenario
    from schedrl.scenarios.protocol import RunProtocol
    from schedrl.training.sweep import EvaluateSpec
    from schedrl.workload.errors import TraceError

    entry = POLICIES[agent]
    policy = load_policy(f"zoo:{entry.name}")
    impl = get_agent(policy.record.agent)
    judge = impl.judge(impl.env_config_class.from_dict(dict(policy.record.env_config)))
    if judge.sim is None:
        pytest.skip(f"{agent} runs on the discrete-time cluster: both routes are its judge's")
    scenario = get_scenario(entry.fields["scenario"]["name"]).overridden(sequences=SEQUENCES)
    evaluate = EvaluateSpec(from_scenario=True)
    protocol = RunProtocol(judge, scenario)
    try:
        workload = protocol.evaluation_data(evaluate)
    except TraceError as e:
        pytest.skip(f"{e} (the real traces: ../shared or $SCHEDRL_TRACE_PATH)")
    length, starts = protocol.evaluation_sequences(workload, evaluate, getattr(policy.record.settings, "seed", 0))
    final = protocol.policy_judge(policy).score_policy(policy, workload, starts, length)
    table = on_scenario([policy], ["zoo"], scenario)
    evaluated = next(v for (backfill, label), v in table.values.items() if label == "RL")
    assert list(table.starts) == list(starts)
    assert final == pytest.approx(evaluated, rel=1e-12), (agent, final, evaluated)
