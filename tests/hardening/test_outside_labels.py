"""Issue 47 class 3: an outside policy is never mistaken for a built-in one (`schedrl.eval.outside`).

Generated sets of outside policies (`--policies module:callable`) whose names shadow heuristics in any case, the
scenario's baselines, a zoo policy or each other, and whose code behaves well or badly (a valid pick, numpy integers,
`sys.exit()` while being built or while picking, an exception, picks of 3.5, 3.0, "0" or True) go on a small board of
the `default` scenario (three 256-job sequences) beside a zoo entrant. Every heuristic row is the heuristic's own,
every outside policy is one row or
one failed row under its own label, a bad pick or a `sys.exit()` is a failed row, and nothing is dropped.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedrl.eval import leaderboard as lb
from schedrl.heuristics import get_heuristic
from schedrl.scenarios import get_scenario

ZOO = lb.Entrant("linear-default-s0", "zoo", lambda s: get_heuristic("fcfs", 0))
"""A zoo entrant by its name (the network itself is not what this test is about)."""
NAMES = ["F1", "f1", "SJF", "fcfs", "make", "mine", "linear-default-s0", "F1+EASY"]
BEHAVIOURS = {
    "sjf": lambda s: get_heuristic("sjf", 0),
    "numpy-int": lambda s: Picker(lambda sim: np.int64(sim.queue[0])),
    "exit-make": lambda s: sys.exit(3),
    "exit-pick": lambda s: Picker(lambda sim: sys.exit(0)),
    "raise": lambda s: 1 / 0,
    "float-pick": lambda s: Picker(lambda sim: 3.5),
    "integral-float-pick": lambda s: Picker(lambda sim: float(sim.queue[0])),
    "str-pick": lambda s: Picker(lambda sim: "0"),
    "bool-pick": lambda s: Picker(lambda sim: True),
    "not-here": lambda s: None,
}
GOOD = {"sjf", "numpy-int"}


class Picker:
    def __init__(self, pick):
        self.pick = pick


@pytest.fixture(scope="module")
def scenario():
    return get_scenario("default").overridden(sequences=3, jobs=256)


@pytest.fixture(scope="module")
def alone(scenario):
    """The board without outside policies: each heuristic's and zoo policy's mean."""
    result = lb.leaderboard([scenario], [ZOO])
    return {r["method"]: (r["kind"], r["mean"]) for r in result["scenarios"][0]["rows"]}


def install(policies: list[tuple[str, str, str]]) -> list[str]:
    """Modules `outside_a`, `outside_b` holding each (module, name, behaviour); the --policies specs."""
    specs = []
    for module, name, behaviour in policies:
        mod = sys.modules.setdefault(f"outside_{module}", types.ModuleType(f"outside_{module}"))
        setattr(mod, name, BEHAVIOURS[behaviour])
        specs.append(f"outside_{module}:{name}")
    return specs


@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow,
                                                                                  HealthCheck.function_scoped_fixture])
@given(policies=st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from(NAMES), st.sampled_from(sorted(BEHAVIOURS))),
                         min_size=1, max_size=4, unique_by=lambda p: (p[0], p[1])))
def test_outside_policies_keep_their_own_rows_and_never_shadow(scenario, alone, policies):
    for module in "ab":
        sys.modules.pop(f"outside_{module}", None)
    specs = install(policies)
    result = lb.leaderboard([scenario], [ZOO] + [lb.outside(s) for s in specs])
    board = result["scenarios"][0]
    rows = {r["method"]: r for r in board["rows"]}
    failed = {f["method"]: f for f in board["failed"]}
    labels = [r["method"] for r in board["rows"]] + list(failed)
    assert len(labels) == len(set(labels))  # nothing shares a row
    for label, (kind, mean) in alone.items():  # every built-in row is the built-in method's own
        assert rows[label]["kind"] == kind and rows[label]["mean"] == mean, label
    outside = {label: r for label, r in rows.items() if r["kind"] == "outside"}
    shown = list(outside) + list(failed)
    for spec, (_module, name, behaviour) in zip(specs, policies):
        mine = [label for label in shown if label == name or label == f"{name} ({spec})"]
        event(f"{behaviour}: {'row' if mine and mine[0] in outside else 'failed' if mine else 'absent'}")
        if behaviour == "not-here":
            assert not mine
            continue
        assert len(mine) == 1, (spec, shown)
        if behaviour in GOOD:
            assert mine[0] in outside
            if behaviour == "sjf":
                assert outside[mine[0]]["mean"] == alone["SJF"][1]
        else:
            assert mine[0] in failed, (spec, behaviour)
            if "pick" in behaviour and behaviour != "exit-pick":
                assert "job index is an integer" in failed[mine[0]]["error"]
            if behaviour.startswith("exit"):
                assert "sys.exit" in failed[mine[0]]["error"]


def test_the_same_outside_policy_twice_is_refused_in_one_line(capsys):
    from schedrl.cli.main import main

    spec = install([("a", "twice", "sjf")])[0]
    assert main(["leaderboard", "--scenarios", "default", "--sequences", "2", "--no-entry-points",
                 "--policies", f"{spec},{spec}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "twice" in err[0] and spec in err[0]
