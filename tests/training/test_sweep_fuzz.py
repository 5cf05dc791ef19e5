"""Generated sweep files through the reader: every document is a validated `SweepSpec` or one `SweepError` naming
the file (for `schedrl tune FILE --dry-run`: one `error:` line, exit status 2), never another exception.

Documents are built for every agent from its own env and settings classes: each field's default, values near
it and names such fields take, mixed with values out of range, of the wrong type, unknown keys and nested
nonsense. Search spaces come in every kind the reader takes (grid, choice, uniform, loguniform, randint) and some
it does not, from empty to grids of hundreds of values, inline or under `param_space`. A document that validates
must also give what a dry run prints: its trial count, its environments, its JSON record and, for small sweeps,
the trials themselves. YAML text (cut, garbled, nested deep) and `--set` overrides go through `load_sweep`.
"""

from __future__ import annotations

import functools
import json
import math
import tempfile
import types
import typing
from dataclasses import MISSING, fields
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cli_process import run_cli
from schedrl.agents import AGENTS, get_agent
from schedrl.scenarios import standard as standard_scenarios
from schedrl.training.driver import check_traces
from schedrl.training.sweep import SweepSpec, expand_trials
from schedrl.training.sweep_file import MAX_ENVIRONMENTS, MAX_TRIALS, load_sweep, sweep_from_dict
from schedrl.training.yaml_reader import SEARCH_KINDS, SweepError
from schedrl.workload.errors import TraceError

SETTINGS = settings(max_examples=100, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
SOURCE = "fuzz.yaml"
EXPANDED = 64
"""Sweeps up to this many trials are expanded as a dry run expands them (Ray's variant generator)."""

STRINGS = ["default", "none", "easy", "conservative", "rlscheduler", "standard", "kernel", "mlp", "cnn", "scaled",
           "small", "fcfs", "sjf", "f1", "auto", "saf", "bsld", "wait", "utilization", "slowdown", "real", "S4",
           "synthetic", "lublin_256", "30m", "1.5h", "90s", "5", "1e-3", "nan", ".inf", "", "a\nb", "\u00e9",
           "../x", "ppo.lr", "grid", "min", "max", "schedrl/validation", "training_iteration"]
NUMBERS = st.one_of(
    st.integers(-3, 70),
    st.sampled_from([0, 1, -1, 2**31, 2**63, -2**63 - 1, 10**20, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1e-4, 3e-4, 0.5, 0.99, 1.0, 1.5, -0.5, 1e308, -1e308, float("inf"), float("nan")]),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.sampled_from(STRINGS), st.text(max_size=8))
SCENARIOS = sorted(standard_scenarios())
JUNK_KEYS = st.one_of(st.sampled_from(["lr", "grid", "type", "ppo", "env", "trace", "x", "", "name", "model"]),
                      st.text(max_size=6), st.integers(-2, 2), st.none(), st.booleans())
NONSENSE = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(JUNK_KEYS, inner, max_size=3), max_leaves=12)


def _default(f):
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else None


@functools.cache
def section_fields(cls) -> dict[str, tuple]:
    """field name -> (type hint, default) of a sweep section's dataclass."""
    hints = typing.get_type_hints(cls)
    return {f.name: (hints[f.name], _default(f)) for f in fields(cls) if f.init}


def plausible(hint, default) -> st.SearchStrategy:
    """Values of the field's own type, around its default (in range or just out of it)."""
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    arms = [a for a in typing.get_args(hint) if a is not type(None)] if union else [hint]
    base = typing.get_origin(arms[0]) or arms[0]
    out = [st.just(default)]
    if base is bool:
        out.append(st.booleans())
    elif base is int:
        scale = max(4, 4 * abs(default or 0))
        out += [st.integers(-2, scale), st.sampled_from([0, 1, 2, 10**20])]
    elif base is float:
        top = default if isinstance(default, float) and default == default and abs(default) != float("inf") else 1.0
        out += [st.floats(-1.0, max(2.0, 4 * abs(top))), st.sampled_from([0.0, 1e-4, 0.5, 1.0, float("inf"), 10**400])]
    elif base is str:
        out.append(st.sampled_from(STRINGS + ([default] if isinstance(default, str) else [])))
    elif base is tuple:
        out.append(st.lists(st.one_of(st.integers(-1, 40), st.floats(0, 1), st.sampled_from(STRINGS[:12])), max_size=7))
    else:  # a mapping
        out.append(st.dictionaries(st.sampled_from(["cpu", "run", "req", "x"]), st.floats(0, 4), max_size=2))
    if union and type(None) in typing.get_args(hint):
        out.append(st.none())
    return st.one_of(*out)


def values(hint, default, wild: bool) -> st.SearchStrategy:
    """A field's value: plausible, or (wild) sometimes anything."""
    if not wild:
        return plausible(hint, default)
    return st.one_of(plausible(hint, default), plausible(hint, default), NONSENSE)


def large_list(default) -> st.SearchStrategy:
    """A large grid of valid-looking values of the field's type."""
    def make(n: int) -> list:
        if isinstance(default, bool):
            return [i % 2 == 0 for i in range(n)]
        if isinstance(default, int):
            return [default + i for i in range(n)]
        if isinstance(default, float) and 0 < default < float("inf"):
            return [default * (1 + i / n) for i in range(n)]
        if isinstance(default, float):
            return [0.5 + i / (4 * n) for i in range(n)]
        return [default] * n
    return st.integers(40, 400).map(make)


def search_space(hint, default, wild: bool) -> st.SearchStrategy:
    """`{kind: args}` of every kind the reader takes, with plausible arguments or (wild) bad ones and other kinds."""
    candidates = st.one_of(st.lists(plausible(hint, default), min_size=1, max_size=6), large_list(default))
    bounds = st.lists(st.one_of(plausible(hint, default), NUMBERS), min_size=2, max_size=2)
    if wild:
        candidates = st.one_of(candidates, st.lists(values(hint, default, wild), max_size=6), NONSENSE)
        bounds = st.one_of(bounds, st.lists(NUMBERS, max_size=4), NONSENSE)
    spaces = [st.builds(lambda k, a: {k: a}, st.sampled_from(["grid", "choice"]), candidates)]
    if wild or isinstance(default, (int, float)) and not isinstance(default, bool):
        spaces.append(st.builds(lambda k, a: {k: a}, st.sampled_from(["uniform", "loguniform", "randint"]), bounds))
    if wild:
        spaces += [st.builds(lambda k, a: {k: a}, st.sampled_from(["normal", "grid_search", "Grid", "qrandint"]),
                             NONSENSE),
                   st.dictionaries(st.sampled_from(SEARCH_KINDS), NONSENSE, min_size=2, max_size=3)]
    return st.one_of(*spaces)


def with_junk(strategy: st.SearchStrategy, keys: st.SearchStrategy = JUNK_KEYS) -> st.SearchStrategy:
    """`strategy`'s mappings with an unknown key or two added, or nonsense instead."""
    return st.one_of(strategy, strategy, strategy, NONSENSE,
                     st.builds(lambda a, b: {**a, **b}, strategy, st.dictionaries(keys, NONSENSE, min_size=1, max_size=2)))


def section(cls, searchable: bool, wild: bool) -> st.SearchStrategy:
    """A section of `cls`'s fields: values or, where searchable, search spaces."""
    info = section_fields(cls)
    if searchable:
        def value(h, d):
            return st.one_of(values(h, d, wild), values(h, d, wild), search_space(h, d, wild))
    else:
        def value(h, d):
            return values(h, d, wild)
    known = st.fixed_dictionaries({}, optional={name: value(h, d) for name, (h, d) in info.items()})
    return with_junk(known) if wild else known


def param_space(agent, wild: bool) -> st.SearchStrategy:
    S = agent.settings_section
    settings_info, env_info = section_fields(agent.settings_class), section_fields(agent.env_config_class)
    spaces = {f"{S}.{name}": search_space(*settings_info[name], wild) for name in agent.searchable()}
    spaces |= {f"env.{name}": search_space(*env_info[name], wild) for name in agent.env_searchable}
    spaces["model"] = search_space(str, agent.models[0] if agent.models else "", wild)
    searched = st.fixed_dictionaries({}, optional=spaces)
    if not wild:
        return searched
    # fields that cannot be searched, and keys that name nothing
    others = {f"{S}.{name}": search_space(h, d, wild) for name, (h, d) in settings_info.items() if name not in spaces}
    others |= {f"env.{name}": search_space(h, d, wild) for name, (h, d) in env_info.items()
               if f"env.{name}" not in spaces}
    return st.one_of(with_junk(searched, st.one_of(JUNK_KEYS, st.sampled_from([f"{S}.nope", "env.", "model.x",
                                                                               "env.trace.x", S]))),
                     st.builds(lambda a, b: {**a, **b}, searched, st.fixed_dictionaries({}, optional=others)))


def scheduler(agent, wild: bool) -> st.SearchStrategy:
    from schedrl.training.sweep import AshaOptions, PBTOptions

    S = agent.settings_section
    settings_info = section_fields(agent.settings_class)
    mutations = st.fixed_dictionaries({}, optional={f"{S}.{n}": search_space(*settings_info[n], wild)
                                                    for n in agent.searchable()})
    asha = st.fixed_dictionaries({}, optional={n: values(h, d, wild) for n, (h, d) in section_fields(AshaOptions).items()})
    pbt = st.fixed_dictionaries({}, optional={n: values(h, d, wild) for n, (h, d) in section_fields(PBTOptions).items()
                                              if n != "hyperparam_mutations"} | {"hyperparam_mutations": mutations})
    typed = st.one_of(st.builds(lambda o: {"type": "asha", **o}, asha), st.builds(lambda o: {"type": "pbt", **o}, pbt))
    plain = st.one_of(st.none(), st.sampled_from(["none", "asha", "pbt"]), typed)
    if not wild:
        return plain
    return st.one_of(plain, st.sampled_from(["ASHA", "hyperband"]), with_junk(typed),
                     st.builds(lambda t, o: {"type": t, **o}, NONSENSE, asha))


@functools.cache
def agent_documents(name: str, wild: bool) -> st.SearchStrategy:
    """Sweep documents for agent `name`: plausible ones, or (wild) with bad names, unknown keys and nonsense."""
    from schedrl.training.sweep import EvaluateSpec, ResourceSpec, StopSpec, TrainingOptions

    agent = get_agent(name)
    S = agent.settings_section
    optional = {
        "scenario": st.sampled_from([n for n, sc in standard_scenarios().items() if name in sc.agents] or SCENARIOS),
        "env": section(agent.env_config_class, True, wild),
        S: section(agent.settings_class, True, wild),
        "model": st.one_of(st.sampled_from([*agent.models, ""]), search_space(str, "kernel", wild)),
        "param_space": param_space(agent, wild),
        "scheduler": scheduler(agent, wild),
        "stop": section(StopSpec, False, wild),
        "resources": section(ResourceSpec, False, wild),
        "training": section(TrainingOptions, False, wild),
        "evaluate": section(EvaluateSpec, False, wild),
        "num_samples": st.integers(1, 4),
        "mode": st.sampled_from(["min", "max"]),
    }
    unknown = st.just({})
    agent_value = st.just(name)
    if wild:
        optional |= {
            "name": st.one_of(st.sampled_from(["fuzz", "a.b-c_1", "../x", "", "a b"]), NONSENSE),
            "scenario": st.one_of(st.sampled_from(SCENARIOS + ["nope", "", "x" * 300, "/", "/dev/null", "../x.yaml"]),
                                  NONSENSE),
            "model": st.one_of(optional["model"], st.just("resnet"), NONSENSE),
            "num_samples": st.one_of(st.integers(-1, 4), st.sampled_from([10**6, 10**30]), NONSENSE),
            "metric": st.one_of(st.sampled_from(["schedrl/validation", "env_runners/episode_return_mean"]), NONSENSE),
            "mode": st.one_of(st.sampled_from(["min", "max", "MIN"]), NONSENSE),
        }
        unknown = st.dictionaries(st.one_of(JUNK_KEYS, st.sampled_from(["ppo", "dqn", "params", "search"])),
                                  NONSENSE, max_size=1)
        agent_value = st.one_of(agent_value, agent_value, agent_value, NONSENSE)
    if not wild:  # every plausible sweep stops
        optional["stop"] = optional["stop"].map(lambda stop: {"iterations": 1, **stop})
    return st.builds(lambda a, chosen, extra: {"agent": a, "stop": {"iterations": 1}, **chosen, **extra},
                     agent_value, st.fixed_dictionaries({}, optional=optional), unknown)


def documents() -> st.SearchStrategy:
    """A sweep document for any agent: two plausible ones for each wild one."""
    return st.tuples(st.sampled_from(sorted(AGENTS)), st.sampled_from([False, False, True])).flatmap(
        lambda a: agent_documents(*a))


def assert_validated_or_one_error(read, source: str) -> SweepSpec | None:
    """`read()` gives a spec that a dry run can list, or raises one `SweepError` line naming `source` (or the
    `--set` option at fault)."""
    try:
        spec = read()
    except SweepError as e:
        message = str(e)
        assert message.startswith((source, "--set ")), message
        assert "\n" not in message and "Traceback" not in message, message
        event("SweepError")
        return None
    event("validated")
    assert isinstance(spec, SweepSpec)
    trials = spec.num_trials()
    assert 1 <= trials <= MAX_TRIALS
    env_spaces = [space.values for key, space in spec.param_space.items() if key.startswith("env.")]
    assert len(spec.env_variants()) == math.prod(map(len, env_spaces)) <= MAX_ENVIRONMENTS
    json.dumps(spec.to_data())
    for key, space in spec.param_space.items():
        assert space.values, key
        str(space)
    if trials <= EXPANDED:
        expanded = expand_trials(spec)
        assert len(expanded) == trials
        assert all(set(t) == set(spec.param_space) for t in expanded)
    try:  # the dry run's trace check: warnings, or one line the CLI prints (TraceError)
        assert all("\n" not in w for w in check_traces(spec, strict=False))
    except TraceError as e:
        assert "\n" not in str(e)
    return spec


@pytest.fixture(scope="module", autouse=True)
def variant_generator():
    """Ray's variant generator is imported once, before the examples and their deadline."""
    import ray.tune.search.variant_generator  # noqa: F401


@SETTINGS
@given(document=documents())
def test_generated_sweeps_validate_or_fail_in_one_line(document):
    before = repr(document)
    assert_validated_or_one_error(lambda: sweep_from_dict(document, source=SOURCE), SOURCE)
    assert repr(document) == before  # the reader never changes its input


YAML_EDITS = st.one_of(
    st.just(lambda text, n: text),
    st.just(lambda text, n: text[: n % (len(text) + 1)]),  # cut short
    st.just(lambda text, n: text[: n % (len(text) + 1)] + ":{[\t\"" + text[n % (len(text) + 1):]),  # garbled
    st.just(lambda text, n: "env: " + "[" * (n * 5) + "]" * (n * 5)),  # nested up to and past the parser's stack
    st.just(lambda text, n: "ppo:\n  lr: " + "9" * (n * 90) + "\nstop: {iterations: 1}\n"),  # integers of n*90 digits
    st.just(lambda text, n: text + "\nenv: &a {trace: *a}\n"),  # a value holding itself
    st.just(lambda text, n: text + "\nname: 2001-13-%02d\n" % (n % 40)),  # a date, real or not
)
OVERRIDES = st.lists(st.one_of(
    st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["ppo.lr", "stop.time_budget", "env.backfill", "ppo", "name.x",
                                                        "param_space.ppo.lr", "a..b", "", "stop"]),
              st.sampled_from(["1e-3", "15m", "{grid: [1, 2]}", "[[[", "easy", "", "{uniform: [0, .inf]}", "null"])),
    st.text(max_size=10)), max_size=3)


@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents(), edit=YAML_EDITS, n=st.integers(0, 120), overrides=OVERRIDES)
def test_generated_sweep_files_load_or_fail_in_one_line(document, edit, n, overrides):
    text = edit(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), n)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        path.write_text(text, encoding="utf-8")
        assert_validated_or_one_error(lambda: load_sweep(path, overrides), str(path))


# ---------------------------------------------------------------- crashes the fuzzer found, through the CLI

FOUND = {
    # the settings grid is past 4,096 combinations, so each value is probed alone: its label named the others
    "grid_past_probing_limit": "ppo:\n  lr: {grid: [%s]}\n  seed: {grid: [%s]}\nstop: {iterations: 1}\n" % (
        ", ".join(["3.0e-4"] * 64 + ["-1.0"]), ", ".join(str(i) for i in range(64))),
    # an integer too large for a float field
    "integer_for_a_float": "ppo:\n  lr: 1%s\nstop: {iterations: 1}\n" % ("0" * 400),
    # an unbounded range validated, then failed in Ray's sampler during the dry run
    "infinite_range": "param_space:\n  ppo.lr: {uniform: [1.0e-4, .inf]}\nstop: {iterations: 1}\n",
    # nesting past the YAML parser's stack
    "nested_too_deep": "env: %s%s\n" % ("[" * 700, "]" * 700),
}


@pytest.mark.parametrize("case", sorted(FOUND))
def test_found_cases_are_one_error_line_in_tune_dry_run(case, tmp_path):
    path = tmp_path / f"{case}.yaml"
    path.write_text(FOUND[case])
    proc = run_cli("tune", str(path), "--dry-run")
    assert proc.returncode == 2, proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.strip()] == [
        next(line for line in proc.stderr.splitlines() if "error:" in line)], proc.stderr
    assert proc.stderr.count("error:") == 1 and "Traceback" not in proc.stderr
    assert str(path) in proc.stderr


def test_a_valid_grid_past_the_probing_limit_is_a_sweep():
    """65 x 64 learning rates and seeds: each probed alone (past 4,096 combinations), all 4,160 trials kept."""
    spec = sweep_from_dict(yaml.safe_load(FOUND["grid_past_probing_limit"].replace("-1.0", "1.0e-3")), source=SOURCE)
    assert spec.num_trials() == 65 * 64


@pytest.mark.parametrize("document, message", [
    ({"ppo": {"lr": 10**400}}, r"'ppo\.lr' must be float; got 1000000000\d+\.\.\.$"),
    ({"ppo": {"lr": float("nan")}}, r"'ppo\.lr' must be float; got nan"),
    ({"param_space": {"ppo.lr": {"grid": [1e-3, float("nan")]}}}, r"'param_space\.ppo\.lr\.grid' must be float; got nan"),
    ({"param_space": {"ppo.lr": {"loguniform": [1e-4, float("inf")]}}}, r"'param_space\.ppo\.lr\.loguniform' must be float; got inf"),
    ({"param_space": {"ppo.lr": {"uniform": [-1e308, 1e308]}}}, r"'param_space\.ppo\.lr': uniform needs finite bounds"),
    ({"param_space": {"ppo.seed": {"randint": [0, 2**64]}}}, r"'param_space\.ppo\.seed': randint bounds must lie in"),
    ({"num_samples": 10**30}, r"'num_samples' 1,000,000,\S+ x a param_space grid of 1 is .* trials; a sweep holds at most"),
    ({"param_space": {"ppo.seed": {"grid": list(range(400))}, "ppo.lr": {"grid": [1e-3 * (i + 1) for i in range(400)]}}},
     r"'num_samples' 1 x a param_space grid of 160,000 is 160,000 trials"),
    ({"env": {"sequence_length": {"choice": list(range(1, 41))}, "backfill": {"choice": ["none", "easy"] * 20}}},
     r"env\.sequence_length, env\.backfill make 1,600 environments; a sweep prepares at most 1,000"),
    ({"scenario": "x" * 5000}, r"scenario: unknown scenario 'x{10}"),  # too long to be a file: an unknown name
])
def test_found_cases_are_one_sweep_error(document, message):
    with pytest.raises(SweepError, match=r"^fuzz\.yaml: " + message):
        sweep_from_dict({"stop": {"iterations": 1}, **document}, source=SOURCE)


@pytest.mark.parametrize("text, message", [
    ("ppo: {lr: %s}\n" % ("9" * 5000), r"not valid YAML \(Exceeds the limit \(4300 digits\)"),  # Python's int limit
    ("name: 2001-13-45\n", r"not valid YAML \(month must be in 1\.\.12\)"),
    ("env: &a {trace: *a}\nstop: {iterations: 1}\n", r"'env\.trace' must be str; got \{'trace': \{\.\.\.\}\}"),
])
def test_found_yaml_cases_are_one_sweep_error(text, message, tmp_path):
    path = tmp_path / "fuzz.yaml"
    path.write_text(text)
    with pytest.raises(SweepError, match=f"^{path}: " + message):
        load_sweep(path)
