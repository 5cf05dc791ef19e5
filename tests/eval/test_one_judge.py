"""One judge (issue 54): every row of a comparison runs under the one semantics its options name, whatever the kind of
policy, on every path that builds a table; a policy that never rejects reproduces its base rule's row to the digit.

`check_combination` runs one combination of options (`one_judge.OPTIONS`) through every table path: `evaluate` (its
compare table, with `--policies`, with `--metrics`, `--traces`, `--scenario`), `compare` (`--trace`, `--scenario`) and
the Python API with an outside policy. The fast tier runs two combinations that give each option each value; the integration tier all 64
(`tests/integration/test_one_judge_space.py`).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from schedrl.sim.config import SimConfig
from tests.cli_process import run_cli
from tests.eval.one_judge import (
    BACKFILLER, COMBINATIONS, JOBS, LIST_WINDOW, PLAN, SEQUENCES, Outside, check_table, expected, flags, json_of,
    trained, write_never_rejecting, write_rule, write_scenario, write_trace,
)

SCENARIO_SIM = SimConfig()
"""The test scenario's semantics (`write_scenario`: `sim: {}`)."""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("one-judge")
    trace = write_trace(root / "outrun.swf")
    return {"trace": trace, "checkpoint": write_never_rejecting(root / "never-rejects"),
            "checkpoint-list": write_never_rejecting(root / "never-rejects-w10", LIST_WINDOW),
            "rule": write_rule(root / "rule.json"), "scenario": write_scenario(root / "one-judge.yaml", trace)}


def _window() -> list[str]:
    return ["--jobs", str(JOBS), "--sequences", str(SEQUENCES)]


def _results(table: dict) -> tuple[dict, dict]:
    """(label -> semantics, label -> per-sequence values) of a `Comparison`'s or an `Evaluation`'s JSON."""
    rows = table["results"]
    return {r["policy"]: r["semantics"] for r in rows}, {r["policy"]: r["per_sequence"] for r in rows}


def check_combination(files: dict, options: dict) -> int:
    """Every table path under `options`; returns how many tables were checked."""
    trace, rule, scenario = (str(files[k]) for k in ("trace", "rule", "scenario"))
    listed = options["discipline"] == "list"  # with a 10-job window: the backfill chooser's tables
    ck = str(files["checkpoint-list" if listed else "checkpoint"])
    trained_under = trained(LIST_WINDOW if listed else 0)
    others = [f"tuned:{rule}", PLAN, *([BACKFILLER] if listed else [])]
    as_trained = expected(trained_under, options)
    tables = 0

    # evaluate CKPT: the agent's baselines as a compare table; the checkpoint is F1, row for row
    sems, values = _results(json_of(run_cli("evaluate", ck, "--trace", trace, *_window(), *flags(options), "--json")))
    check_table(sems, as_trained)
    assert values[f"checkpoint:{ck}"] == values["f1"]
    tables += 1

    # evaluate CKPT --policies: every kind in one table; the backfill chooser makes it every row's exception
    result = run_cli("evaluate", ck, "--trace", trace, *_window(), "--policies", ",".join(["f1", "fcfs", *others]),
                     *flags(options), "--json")
    sems, values = _results(json_of(result))
    check_table(sems, expected(trained_under, options, decides_backfill=listed))
    assert values[f"checkpoint:{ck}"] == values["f1"]
    # one note line where it was trained under other semantics than the table's
    assert ("note: RL was trained under other semantics" in result.stderr) == (as_trained != trained_under)
    tables += 1

    # evaluate CKPT --metrics: the methods table, every aggregate per sequence, kills included
    table = json_of(run_cli("evaluate", ck, "--trace", trace, *_window(), "--metrics", "bsld,wait", *flags(options),
                            "--json"))
    methods = table["methods"]
    check_table({k: v["semantics"] for k, v in methods.items()}, as_trained)
    inspector, f1 = methods[table["trained"][0]]["per_sequence"], methods["F1"]["per_sequence"]
    assert inspector == f1
    killed = sum(m["killed"] for m in f1)
    assert (killed > 0) == as_trained.kill_at_limit, killed  # the trace's jobs outrun their request
    tables += 1

    # evaluate CKPT --traces: RLScheduler Table VII's row
    (row,) = json_of(run_cli("evaluate", ck, "--traces", trace, *_window(), *flags(options), "--json"))
    check_table(row["semantics"], as_trained)
    assert row["per_sequence"]["RL"] == row["per_sequence"]["F1"]
    tables += 1

    # evaluate CKPT --scenario: the scenario's semantics under the options, the checkpoint included
    on_scenario = expected(SCENARIO_SIM, options, scenario=True)
    sems, values = _results(json_of(run_cli("evaluate", ck, "--scenario", scenario, *flags(options, scenario=True),
                                            "--json")))
    check_table(sems, on_scenario)
    f1 = "F1" if on_scenario.backfill == "none" else f"F1+{on_scenario.backfill.upper()}"
    assert values["RL"] == values[f1]
    tables += 1

    # compare --trace and --scenario: every kind of policy, the defaults' (or the preset's) semantics
    policies = ",".join(["f1", "fcfs", f"checkpoint:{ck}", *others])
    for where, base, scenario_flags in ((["--trace", trace, *_window()], SimConfig(), False),
                                        (["--scenario", scenario], SCENARIO_SIM, True)):
        sems, values = _results(json_of(run_cli("compare", *where, "--policies", policies, "--no-progress",
                                                *flags(options, scenario=scenario_flags), "--json")))
        check_table(sems, expected(base, options, decides_backfill=listed, scenario=scenario_flags))
        assert values[f"checkpoint:{ck}"] == values["f1"]
        tables += 1

    # the Python API: an outside policy object is one more row under the same semantics
    from schedrl.cli.options import load_workload
    from schedrl.eval.compare import compare
    from schedrl.workload.sampling import choose_starts

    class Args:
        preset, cleaning, augment, augment_seed = options["preset"], None, None, 0

    Args.trace = trace
    workload = load_workload(Args)
    config = expected(SimConfig(), options)
    result = compare(workload, ["f1", Outside(), f"checkpoint:{ck}", *([BACKFILLER] if listed else [])],
                     [config.backfill], choose_starts(workload, JOBS, SEQUENCES, 1), JOBS, "bsld", config,
                     progress=False)
    check_table({p: result.semantics[(config.backfill, p)].to_dict() for p in result.policies},
                expected(SimConfig(), options, decides_backfill=listed))
    assert result.values[(config.backfill, f"checkpoint:{ck}")] == result.values[(config.backfill, "f1")]
    return tables + 1


FAST = [COMBINATIONS[21], COMBINATIONS[42]]
"""Two combinations that between them give every option each of its values (bits 010101 and 101010)."""


@pytest.mark.parametrize("options", FAST, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items() if v) or "defaults")
def test_every_row_runs_under_the_comparisons_semantics(files, options):
    assert check_combination(files, options) == 8


def test_the_issues_case_the_preset_reaches_the_checkpoint(files):
    """`evaluate CKPT --preset rlscheduler --metrics bsld` on a checkpoint trained with kills: before, its rows killed
    jobs and the heuristics' did not; now every row runs without kills and a note says how it was trained."""
    result = run_cli("evaluate", str(files["checkpoint"]), "--trace", str(files["trace"]), *_window(), "--preset",
                     "rlscheduler", "--metrics", "bsld", "--json")
    table = json_of(result)
    assert all(m["killed"] == 0 for ms in table["methods"].values() for m in ms["per_sequence"])
    (note,) = [line for line in result.stderr.splitlines() if "was trained under other semantics" in line]
    assert "kill_at_limit True, here False" in note and note.endswith("it runs under this table's")


def test_rows_that_differ_are_an_error_not_a_table():
    from schedrl.scenarios.semantics import check_rows

    same = SimConfig()
    check_rows({"F1": same, "BinPacking": replace(same, backfill="easy")})  # a declared backfilling
    with pytest.raises(ValueError, match=r"RL ran under other semantics than F1 \(kill_at_limit True vs False\)"):
        check_rows({"F1": same, "RL": replace(same, kill_at_limit=False)})


def test_a_preset_with_a_scenario_is_one_error_line(files):
    result = run_cli("compare", "--scenario", str(files["scenario"]), "--preset", "rlscheduler")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--preset rlscheduler does not apply with --scenario" in result.stderr


def test_a_sim_option_on_a_discrete_time_checkpoint_is_one_error_line():
    result = run_cli("evaluate", "zoo:rlschert-rlschert-vasp-kill-s0", "--no-kill")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--no-kill does not apply to zoo:rlschert" in result.stderr


def test_the_board_scores_every_row_under_a_choosers_exception(files, tmp_path):
    """Entrants are scored one by one; where one chooses the backfilled job itself, the baselines and the others are
    scored again under that exception, and their numbers stay (a heuristic, a policy trained first-fit)."""
    import yaml

    from schedrl.eval.leaderboard import Entrant, board
    from schedrl.scenarios import get_scenario
    from tests.scenarios.test_semantics import CHOOSING, EASY, LastCandidate

    definition = yaml.safe_load(files["scenario"].read_text())
    path = tmp_path / "easy.yaml"
    path.write_text(yaml.safe_dump({**definition, "name": "easy", "sim": {"backfill": "easy"}, "reference": "F1+EASY"}))
    scenario = get_scenario(str(path))

    def entrant(label, trained):
        return Entrant(label, "outside", lambda s, t=trained: LastCandidate(t))

    alone = board(scenario, [entrant("plain", EASY)])
    shared = board(scenario, [entrant("plain", EASY), entrant("chooser", CHOOSING)])
    assert not shared["failed"], shared["failed"]
    semantics = {r["method"]: r["semantics"] for r in shared["rows"]}
    assert {s["backfill_choice"] for s in semantics.values()} == {"policy"} and len(semantics) == 4
    assert {r["method"]: r["per_sequence"] for r in alone["rows"]} == \
        {r["method"]: r["per_sequence"] for r in shared["rows"] if r["method"] != "chooser"}
    assert {r["semantics"]["backfill_choice"] for r in alone["rows"]} == {"first-fit"}
