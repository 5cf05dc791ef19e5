"""`schedrl train --scenario` resolves the scenario once and passes the object down (issue 50 stage 2): the spec
holds the `Scenario` itself, its final table and validation are the scenario's fixed sequences (as a sweep file's
`scenario:`), and explicit options still win."""

from __future__ import annotations

import contextlib
import io

from schedrl.agents import get_agent
from schedrl.cli.main import build_parser, explicit_dests
from schedrl.cli.train import build_plan, build_spec
from schedrl.scenarios import scoring, standard
from schedrl.scenarios.protocol import RunProtocol


def spec_of(*argv: str):
    argv = ["train", "rlscheduler", "--out", "x", "--iterations", "1", *argv]
    parser = build_parser("train")
    args = parser.parse_args(argv)
    args.argv, args.explicit = argv[1:], explicit_dests(parser, argv)
    with contextlib.redirect_stderr(io.StringIO()) as err:
        return build_spec(args), err.getvalue()


def plan_of(*argv: str):
    """The plan (spec, and the lines `schedrl train` prints first) of `train rlscheduler ARGV`."""
    argv = ["train", "rlscheduler", "--out", "x", "--iterations", "1", *argv]
    parser = build_parser("train")
    args = parser.parse_args(argv)
    args.argv, args.explicit = argv[1:], explicit_dests(parser, argv)
    with contextlib.redirect_stderr(io.StringIO()):
        plan = build_plan(args)
    return plan.spec, "\n".join(plan.notes)


def test_the_spec_holds_the_scenario_and_its_final_table_is_the_scenarios_evaluation_sequences():
    s = standard()["default"]
    spec, err = spec_of("--scenario", "default")
    assert spec.scenario == s and spec.to_data()["scenario"] == s.record()
    assert f"scenario default (definition {s.sha256()[:12]})" in err
    assert spec.evaluate.from_scenario and not spec.evaluate.starts and spec.training.validation_from_scenario
    protocol = RunProtocol(get_agent("rlscheduler").judge(spec.env), spec.scenario)
    workload = protocol.evaluation_data(spec.evaluate)
    fixed = scoring.sequences(s, scoring.load(s), "evaluation")
    assert protocol.evaluation_sequences(workload, spec.evaluate, 0) == (fixed.length, fixed.ids)
    # validation: the scenario's fixed sequences, the same for every seed
    validation = scoring.sequences(s, scoring.load(s), "validation")
    assert protocol.validation(workload, 5, 3, fixed=True) == (validation.ids, validation.length)


def test_explicit_starts_and_validation_options_win_over_the_scenario():
    spec, _ = spec_of("--scenario", "default", "--eval-starts", "10,20", "--validation-sequences", "2")
    assert spec.evaluate.starts == (10, 20) and not spec.evaluate.from_scenario
    assert not spec.training.validation_from_scenario and spec.training.validation_sequences == 2


def test_without_a_scenario_the_spec_has_none():
    spec, err = spec_of()
    assert spec.scenario is None and not spec.evaluate.from_scenario and "scenario" not in err


# ------------------------------------------------------------------ the scenario owns the split
# (a scenario owns what a policy is trained and judged on: an agent's machine-sized defaults never replace a value it
# sets, and a run whose split differs from its scenario's is refused)

def test_rlscheduler_on_the_default_scenario_trains_on_its_first_60_percent(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)  # the machine defaults say --train-fraction 0.7
    spec, err = plan_of("--scenario", "default")
    assert standard()["default"].split.train_fraction == 0.6
    assert (spec.env.train_fraction, spec.env.validation_share) == (0.6, 0.25)
    assert "settings for this machine" in err and "--train-fraction" not in err
    # without a scenario the machine default still applies, and says so
    plain, err = plan_of()
    assert plain.env.train_fraction == 0.7 and "--train-fraction 0.7" in err


def test_a_scenarios_own_agent_option_is_not_replaced_by_a_machine_default(monkeypatch, tmp_path):
    from schedrl.scenarios.scenario import Scenario
    import json

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    data = standard()["default"].to_dict()
    data = {**data, "name": "mine", "options": {"rlscheduler": {"batch_size": 4096, "validate_every": 2}}}
    Scenario.from_dict(data)  # a valid definition
    path = tmp_path / "mine.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    spec, err = plan_of("--scenario", str(path))
    assert spec.settings.train_batch_size_per_learner == 4096 and spec.training.validate_every == 2
    assert "--batch-size" not in err and "--validate-every" not in err and "--epochs 2" in err


def test_an_explicit_split_that_contradicts_the_scenario_is_refused():
    import pytest

    with pytest.raises(ValueError) as e:
        spec_of("--scenario", "default", "--train-fraction", "0.7")
    message = str(e.value)
    assert "\n" not in message
    assert message == ("rlscheduler with these options does not train on scenario 'default': train_fraction 0.7 (the "
                       "scenario's: 0.6)")
    with pytest.raises(ValueError, match=r"does not train on scenario 'default': validation_share 0\.5 \(the "
                                         r"scenario's: 0\.25\)$"):
        spec_of("--scenario", "default", "--validation-share", "0.5")
    # the scenario's own values given explicitly are no contradiction
    spec, _ = spec_of("--scenario", "default", "--train-fraction", "0.6", "--validation-share", "0.25")
    assert spec.env.train_fraction == 0.6


def test_every_trace_agent_of_a_standard_scenario_trains_on_its_split():
    """`RunProtocol.checked` compares the split for every agent: each trace agent under each standard trace scenario
    it is written for (on the embedded `default` trace: the others need ../shared) trains on the scenario's first
    part, and the linear example, which used to train on the whole trace, now follows it too."""
    from schedrl.training.single import agent_options

    s = standard()["default"]
    for name in s.agents:
        argv = ["train", name, "--out", "x", "--scenario", "default"]
        parser = build_parser("train")
        args = parser.parse_args(argv)
        args.explicit = explicit_dests(parser, argv)
        agent = get_agent(name)
        env, _ = agent.configure(agent_options(args, s))
        RunProtocol.checked(name, agent.judge(env), s)  # no ValueError
        assert env.train_fraction == 0.6, name
