"""A tuned rule's trace protocol (`scenarios/fitting.py:trace_judge`) is the one a `schedrl train rlscheduler` run of
the same options has (`RLSchedulerAgent.judge`), which `schedrl tuned` once built an RLScheduler agent to borrow:
the same data, semantics, split, validation length and validation sequences."""

from __future__ import annotations

import pytest

from schedrl.agents import get_agent
from schedrl.scenarios.fitting import trace_judge
from schedrl.scenarios.split import Split, validation_seed

OPTIONS = [dict(cleaning="default", metric="bsld", backfill="none", train_fraction=0.7, validation_share=0.25),
           dict(cleaning="rlscheduler", metric="wait", backfill="easy", train_fraction=0.5, validation_share=0.4),
           dict(cleaning="none", metric="slowdown", backfill="conservative", train_fraction=1.0, validation_share=0.25)]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: f"{o['backfill']}-{o['train_fraction']}")
def test_the_trace_protocol_is_an_rlscheduler_runs(options):
    agent = get_agent("rlscheduler")
    theirs = agent.judge(agent.env_config_class(trace="default", **options))
    ours = trace_judge("default", **options)
    assert (ours.sim, ours.metric, ours.sequence_length, ours.validation_share, ours.long_validation) == \
        (theirs.sim, theirs.metric, theirs.sequence_length, theirs.validation_share, theirs.long_validation)
    data = ours.load()
    assert data.sha256 == theirs.load().sha256
    for n in (7, 1000, len(data)):
        assert ours.held_out_range(n) == theirs.held_out_range(n)
        assert ours.split_range(n, validation=True) == theirs.split_range(n, validation=True)
        assert ours.split_range(n) == theirs.split_range(n)
    length = ours.validation_length(data, 1024)
    assert length == theirs.validation_length(data, 1024)
    assert ours.evaluation_ids(data, 4, validation_seed(3), length, validation=True) == \
        theirs.evaluation_ids(data, 4, validation_seed(3), length, validation=True)


def test_the_split_record_is_the_judges_split():
    judge = trace_judge("default", train_fraction=0.7, validation_share=0.25)
    n = 40_000
    assert Split(0.7, 0.25).record(n) == {
        "train": [0, judge.held_out_range(n)[0]], "validation": list(judge.split_range(n, validation=True)),
        "evaluation": list(judge.split_range(n)), "train_fraction": 0.7, "validation_share": 0.25}


@pytest.mark.parametrize("bad, message", [(dict(metric="speed"), "metric must be one of"),
                                          (dict(backfill="later"), "backfill must be one of"),
                                          (dict(cleaning="tidy"), "cleaning"),
                                          (dict(train_fraction=1.5), r"train_fraction must be in \(0, 1\]"),
                                          (dict(validation_share=1.0), r"validation_share must be in \(0, 1\)")])
def test_bad_values_are_one_error_naming_the_option(bad, message):
    with pytest.raises(ValueError, match=message):
        trace_judge("default", **bad)
