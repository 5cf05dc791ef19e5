"""`schedrl train --scenario` resolves the scenario once and passes the object down (issue 50 stage 2): the spec
holds the `Scenario` itself, its final table and validation are the scenario's fixed sequences (as a sweep file's
`scenario:`), and explicit options still win."""

from __future__ import annotations

import contextlib
import io

from schedrl.agents import get_agent
from schedrl.cli.main import build_parser, explicit_dests
from schedrl.cli.train import build_spec
from schedrl.scenarios import scoring, standard
from schedrl.scenarios.protocol import RunProtocol


def spec_of(*argv: str):
    argv = ["train", "rlscheduler", "--out", "x", "--iterations", "1", *argv]
    parser = build_parser("train")
    args = parser.parse_args(argv)
    args.argv, args.explicit = argv[1:], explicit_dests(parser, argv)
    with contextlib.redirect_stderr(io.StringIO()) as err:
        return build_spec(args), err.getvalue()


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
