"""The size of the Agent contract, the simulator branches above the scenario layer, and each agent's runner defaults.

The counts are measured here (`contract_members`, `simulator_branches`) so the numbers the docs and closing notes
give are reproducible: `python -m tests.agents.test_contract` prints them.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "schedrl"

MEMBERS_BEFORE = 42
"""Public members every agent class inherited from `schedrl/agents/base.py` before issue 33's stage 3 (at 0eef690)."""
MEMBERS_NOW = 21
BRANCHES_BEFORE = {"event_simulator": 14, "generated": 14}
"""Simulator questions in `schedrl/` outside the agent packages and the scenario layer, at 0eef690: reads of an agent's
`event_simulator`, and of a scenario's (since stage 3 also a judge's) `generated`."""
BRANCHES_NOW = {"event_simulator": 0, "generated": 1}
"""Before issue 33's last stage there were 22 `generated` reads (14 a scenario's, 8 a judge's); what they decided is
now the scenario layer's (`Scenario.trace_only`, `describe`, `data_summary`, `id_kind`, `semantics_for`,
`applicable_overrides`, `final_evaluation`, `check_cluster`; `Judge.trace_only`, `check_shares_table`,
`runs_baselines`, `check_sequences`, `decisions_note`, `independent`; `scoring.pinned_starts`, since replaced by
`final_evaluation`). `BRANCHES_LEFT` says
where the one left is and why."""
BRANCHES_LEFT = {"generated": {"eval/evaluate.py": "`schedrl evaluate`'s two tables differ in options and layout "
                               "(trace windows: the run record's trace options, a compare or methods table; generated "
                               "seeds: one column per checkpoint): `_seeded(judge)` chooses once"}}


def contract_members() -> list[str]:
    """Public names an agent class inherits from `schedrl.agents.base`: every attribute, method and annotated class
    attribute of `Agent` and of any base class or mixin defined there (not `object`'s or `ABC`'s)."""
    import schedrl.agents.base as base

    names: set[str] = set()
    for cls in base.Agent.__mro__:
        if cls.__module__ != base.__name__:
            continue
        names |= {n for n in vars(cls) if not n.startswith("_")}
        names |= {n for n in getattr(cls, "__annotations__", {}) if not n.startswith("_")}
    return sorted(names)


def simulator_branches(attribute: str = "event_simulator") -> list[str]:
    """`file:line` of every read of an attribute named `attribute` in `schedrl/` outside the scenario layer and the
    agent packages (`schedrl/agents/<name>/`), found by parsing the source."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] == "scenarios" or (rel.parts[0] == "agents" and len(rel.parts) > 2):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Load):
                out.append(f"{rel}:{node.lineno}")
    return out


def test_the_contract_is_no_larger_than_recorded():
    members = contract_members()
    assert len(members) <= MEMBERS_NOW, members


@pytest.mark.parametrize("attribute", sorted(BRANCHES_NOW))
def test_no_new_simulator_branches_above_the_scenario_layer(attribute):
    branches = simulator_branches(attribute)
    assert len(branches) <= BRANCHES_NOW[attribute], branches
    assert {b.split(":")[0] for b in branches} <= set(BRANCHES_LEFT.get(attribute, {})), branches


def test_the_scenario_layer_answers_what_the_branches_asked():
    """The questions the removed branches asked, answered by the scenario layer for both kinds of scenario."""
    from schedrl.scenarios import get_scenario

    trace, generated = get_scenario("lublin1-paper"), get_scenario("rlschert-vasp")
    assert (trace.id_kind, generated.id_kind) == ("starts", "seeds")
    trace.trace_only("not raised")
    with pytest.raises(ValueError, match="^refused$"):
        generated.trace_only("refused")
    assert generated.applicable_overrides({"trace": "x", "sequences": 3, "jobs": 9}) == {"sequences": 3}
    assert trace.applicable_overrides({"trace": trace.workload.trace, "sequences": 3}) == {"sequences": 3}
    assert trace.final_evaluation(set()) == {"from_scenario": True, "jobs": trace.evaluation.jobs,
                                             "sequences": trace.evaluation.count}
    assert trace.final_evaluation({"starts"}) == {} and generated.final_evaluation({"sequences"}) == {}
    assert get_scenario("lublin1").final_evaluation(set()) == {}  # its evaluation has a trace of its own
    assert generated.final_evaluation(set()) == {"sequences": generated.evaluation.count}
    assert "generated sequences" in generated.describe() and "split:" in trace.describe()


RUNNER_FIELDS = ("num_env_runners", "num_envs_per_env_runner", "num_gpus_per_learner", "seed", "env_runner_resources",
                 "restart_failed_env_runners", "max_env_runner_restarts")


def _runners(runners: int, envs: int, restarts: int = 10, resources=None) -> dict:
    return dict(num_env_runners=runners, num_envs_per_env_runner=envs, num_gpus_per_learner=0.0, seed=0,
                env_runner_resources=resources, restart_failed_env_runners=True, max_env_runner_restarts=restarts)


RUNNER_DEFAULTS = {
    "rlscheduler": _runners(1, 4),
    **{name: _runners(0, 1) for name in ("dras-pg", "dras-dql", "decima-pg")},
    # MRSch had no restart_failed_env_runners field: its configs set True; the linear example had no restart fields:
    # RLlib's defaults (True, 1000) applied. Those values are now their declared defaults.
    **{name: _runners(0, 1, restarts=3, resources={}) for name in ("mrsch", "mrsch-scalar")},
    "linear": _runners(0, 4, restarts=1000),
    **{name: _runners(0, 4) for name in ("rlschert", "deeprm")},
    # the inspector built its runner settings by hand and set no fault tolerance (RLlib's True, 1000 applied); since
    # it is on RunnerSettings it restarts a runner at most 10 times, as every other agent; learned backfilling was
    # already on RunnerSettings, left out of this table until now
    **{name: _runners(0, 4) for name in ("inspector", "rl-backfill")},
}
"""Each agent's settings-class runner defaults as they were before the runner settings were shared (0eef690), and
what its RLlib config got."""

TRAIN_DEFAULTS = {
    "rlscheduler": dict(num_env_runners=1, num_envs_per_env_runner=64, max_env_runner_restarts=10),
    **{name: dict(num_env_runners=0, num_envs_per_env_runner=4, max_env_runner_restarts=10)
       for name in ("dras-pg", "dras-dql", "decima-pg", "rlschert", "deeprm")},
    "mrsch": dict(num_env_runners=0, num_envs_per_env_runner=4, max_env_runner_restarts=3),
    "mrsch-scalar": dict(num_env_runners=0, num_envs_per_env_runner=4, max_env_runner_restarts=3),
    "linear": dict(num_env_runners=0, num_envs_per_env_runner=4),
    **{name: dict(num_env_runners=0, num_envs_per_env_runner=4, max_env_runner_restarts=10)
       for name in ("inspector", "rl-backfill")},
}
"""What `schedrl train AGENT` (no runner options, on a 2-core machine) configured before the change (0eef690)."""


def test_registry_matches_the_recorded_agents():
    """Every registered agent is in the runner tables (a new agent must say its defaults here)."""
    from schedrl.agents import AGENTS

    assert set(AGENTS) == set(RUNNER_DEFAULTS) == set(TRAIN_DEFAULTS)


@pytest.mark.parametrize("name", sorted(RUNNER_DEFAULTS))
def test_runner_defaults_are_unchanged(name):
    from schedrl.agents import get_agent

    cls = get_agent(name).settings_class
    fields = {f.name: f for f in dataclasses.fields(cls)}
    got = {}
    for key in RUNNER_FIELDS:
        if key in fields:
            f = fields[key]
            got[key] = f.default if f.default is not dataclasses.MISSING else f.default_factory()
    assert got == RUNNER_DEFAULTS[name]


@pytest.mark.parametrize("name", sorted(RUNNER_DEFAULTS))
def test_the_rllib_config_gets_the_runner_defaults(name):
    """What RLlib is given (`schedrl.agents.runners.with_runners`): the recorded defaults, whatever the agent's
    algorithm."""
    from schedrl.agents import get_agent

    agent = get_agent(name)
    expected = RUNNER_DEFAULTS[name]
    config = agent.algorithm_config(agent.env_config_class(), agent.settings_class())
    got = {"num_env_runners": config.num_env_runners, "num_envs_per_env_runner": config.num_envs_per_env_runner,
           "num_gpus_per_learner": config.num_gpus_per_learner, "seed": config.seed,
           "env_runner_resources": dict(config.custom_resources_per_env_runner),
           "restart_failed_env_runners": config.restart_failed_env_runners,
           "max_env_runner_restarts": config.max_num_env_runner_restarts}
    assert got == {**expected, "env_runner_resources": dict(expected["env_runner_resources"] or {})}


@pytest.mark.parametrize("name", sorted(TRAIN_DEFAULTS))
def test_train_runner_defaults_are_unchanged(name, monkeypatch):
    from schedrl.agents import get_agent
    from schedrl.cli.main import build_parser

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", "")
    from schedrl.training.single import agent_options

    _, settings = get_agent(name).configure(agent_options(build_parser("train").parse_args(["train", name, "--out", "x"])))
    got = {k: getattr(settings, k) for k in TRAIN_DEFAULTS[name]}
    assert got == TRAIN_DEFAULTS[name]


if __name__ == "__main__":
    members = contract_members()
    print(f"Agent contract: {len(members)} public members inherited from schedrl/agents/base.py")
    print("  " + ", ".join(members))
    for attribute in BRANCHES_NOW:
        branches = simulator_branches(attribute)
        print(f"`.{attribute}` reads outside the scenario layer and the agent packages: {len(branches)}")
        for b in branches:
            print("  " + b)
