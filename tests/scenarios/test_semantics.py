"""One semantics per comparison (`schedrl.scenarios.semantics`): the shared exception changes no heuristic's numbers,
a policy trained first-fit keeps its choices under it, notes and checks say what differs, and a table scores the
data it names (issue 54)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from schedrl.heuristics import get_heuristic
from schedrl.metrics import summarize
from schedrl.scenarios.drawing import run_policy
from schedrl.scenarios.semantics import (FirstFit, check_rows, comparison_semantics, first_fit_where_trained,
                                         row_semantics, trained_note)
from schedrl.sim import SimConfig, Simulator
from schedrl.workload.sampling import sequence
from tests.cli_process import run_cli
from tests.eval.one_judge import write_trace

EASY = SimConfig(backfill="easy")
CHOOSING = replace(EASY, backfill_choice="policy")


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    from schedrl.scenarios.workload import WorkloadSpec

    return WorkloadSpec(str(write_trace(tmp_path_factory.mktemp("semantics") / "outrun.swf"))).load()


def _metrics(policy, workload, config, python=False):
    sim = Simulator(sequence(workload, 40, 120), config)
    return summarize(sim.run(policy) if python else run_policy(policy, sim)).to_dict()


@pytest.mark.parametrize("name", ["fcfs", "sjf", "f1", "wfp3"])
def test_a_heuristic_under_the_backfill_exception_keeps_its_numbers(workload, name):
    """Asked for every backfill choice, a heuristic starts the first candidate: first-fit's schedule, compiled or
    stepped in Python, to the digit (so the baselines share a backfill chooser's exception and keep their numbers)."""
    first_fit = _metrics(get_heuristic(name), workload, EASY)
    assert first_fit["backfilled_share"] > 0  # the window has backfilling to choose
    assert _metrics(get_heuristic(name), workload, CHOOSING) == first_fit
    assert _metrics(get_heuristic(name), workload, CHOOSING, python=True) == first_fit


class LastCandidate:
    """A trained policy with a `backfill` method of its own (it starts the last candidate) and F1's picks."""

    def __init__(self, trained: SimConfig):
        self.record = SimpleNamespace(agent="test", sim_config=trained)
        self.f1 = get_heuristic("f1")

    def pick(self, sim):
        return self.f1.pick(sim)

    def backfill(self, sim):
        return int(sim.candidates[-1])


def test_a_policy_trained_first_fit_keeps_first_fit_choices_under_the_exception(workload):
    trained_first_fit, chooser = LastCandidate(EASY), LastCandidate(CHOOSING)
    assert isinstance(first_fit_where_trained(trained_first_fit, CHOOSING), FirstFit)
    assert first_fit_where_trained(trained_first_fit, EASY) is trained_first_fit
    assert first_fit_where_trained(chooser, CHOOSING) is chooser
    f1 = _metrics(get_heuristic("f1"), workload, EASY)
    assert _metrics(trained_first_fit, workload, CHOOSING) == f1
    assert _metrics(chooser, workload, CHOOSING) != f1  # its own choices: the exception is real


def test_the_comparison_takes_the_exception_once_for_every_row():
    chooser, plain = LastCandidate(CHOOSING), LastCandidate(EASY)
    assert comparison_semantics(EASY, [get_heuristic("f1"), plain]) == EASY
    assert comparison_semantics(EASY, [get_heuristic("f1"), plain, chooser]) == CHOOSING
    assert row_semantics(CHOOSING, "none") == replace(CHOOSING, backfill="none")
    assert row_semantics(CHOOSING) is CHOOSING


def test_a_note_names_what_differs_from_training_and_nothing_else():
    trained = SimConfig.preset("rlscheduler")
    note = trained_note("inspector-x", LastCandidate(trained), SimConfig())
    assert note == ("note: inspector-x was trained under other semantics (event_order 'rlscheduler', here 'standard'; "
                    "kill_at_limit False, here True; allocation 'nodes', here 'procs'): it runs under this table's")
    assert trained_note("same", LastCandidate(EASY), CHOOSING) is None  # the shared exception is not a difference
    assert trained_note("F1", get_heuristic("f1"), SimConfig()) is None


def test_simconfig_describes_and_differs_on_every_field():
    sim = SimConfig.preset("rlscheduler", backfill="easy", window=5, discipline="list")
    assert sim.describe() == ("list (window 5), backfill easy, no kill, nodes allocation, rlscheduler event order")
    assert sim.describe(backfill=False) == "list (window 5), no kill, nodes allocation, rlscheduler event order"
    assert SimConfig().differences(SimConfig()) == []
    assert SimConfig().differences(replace(SimConfig(), window=3, allocation="nodes")) == [
        "allocation 'procs' vs 'nodes'", "window 0 vs 3"]


def test_rows_differing_past_a_declared_backfilling_are_refused():
    check_rows({"FCFS+EASY": EASY, "BinPacking": replace(EASY, backfill="none")})
    with pytest.raises(ValueError, match=r"^t: RL ran under other semantics than F1 \(event_order 'standard' vs "
                                         r"'rlscheduler'\); every row of a table must run under one$"):
        check_rows({"F1": EASY, "RL": replace(EASY, event_order="rlscheduler")}, "t")


def test_a_scenario_scores_every_row_under_one_semantics(tmp_path):
    from schedrl.scenarios import scoring
    from schedrl.scenarios.registry import get_scenario
    from tests.eval.one_judge import write_scenario

    scenario = get_scenario(str(write_scenario(tmp_path / "s.yaml", write_trace(tmp_path / "outrun.swf"))))
    scores = scoring.score(scenario, {"chooser": LastCandidate(CHOOSING), "plain": LastCandidate(SimConfig())})
    assert set(scores.semantics.values()) == {replace(SimConfig(), backfill_choice="policy")}
    assert scores.values()["plain"] == scores.values()["F1"]  # trained first-fit, no backfilling here: it is F1
    with pytest.raises(ValueError, match="asked to run under other semantics than the comparison's"):
        scoring.score(scenario, {"x": LastCandidate(SimConfig())}, policy_sims={"x": SimConfig(kill_at_limit=False)})


# ---------------------------------------------------------------- the data a table names (the commands)
def _bsld_row(result) -> list[str]:
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    return [lines[0], lines[-1]]


def test_compare_scenario_with_policies_scores_the_data_it_names(shared_lublin):
    """`compare --scenario lublin1 ... --policies ...` scored lublin_256 at lublin-heldout's positions: FCFS 1,596.58
    against 1,056.58 without --policies, under a title naming lublin_256. Now both are lublin-heldout's."""
    args = ("compare", "--scenario", "lublin1", "--sequences", "1", "--jobs", "128", "--seed", "2", "--no-progress")
    plain = _bsld_row(run_cli(*args))
    given = _bsld_row(run_cli(*args, "--policies", "fcfs,sjf,wfp3,unicep,f1"))
    assert plain == given
    assert plain[0].startswith("avg bsld on lublin-heldout:") and plain[1].split()[:2] == ["none", "1056.58"]
    # `tuned fit --scenario lublin1`'s next step: the rule fitted there is judged on lublin-heldout, beside F1
    fitted = _bsld_row(run_cli(*args, "--policies", "f1,zoo:tuned-lublin1-s0"))
    assert fitted[1].split()[1].rstrip("*") == "163.14"


def test_a_scenario_with_its_own_evaluation_trace_refuses_another_trace():
    for command in (("compare",), ("evaluate", "zoo:inspector-lublin1-s0")):
        result = run_cli(*command, "--scenario", "lublin1", "--trace", "SDSC-SP2")
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.count("\n") == 1
        assert "trace SDSC-SP2: scenario 'lublin1' evaluates on a trace of its own (lublin-heldout)" in result.stderr


@pytest.fixture
def shared_lublin():
    from tests.shared_traces import shared_trace

    return shared_trace("lublin_256.swf.gz")


def test_the_trace_has_jobs_that_outrun_their_request(workload):
    assert int(np.count_nonzero(workload.run > workload.time_req)) == 83
