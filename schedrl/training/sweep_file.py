"""Reading a sweep file: a YAML document validated into a frozen `SweepSpec` (data, not code).

`agent:` names the agent; its `env` section is checked key by key against the agent's env config
class, its settings section (`ppo` for PPO agents, `Agent.settings_section`) against its settings
class, and the shared sections against the dataclasses of `sweep.py`. Every searched value is probed:
each env combination and each settings combination (or both ends of a range) must build its dataclass.
The typed reading itself (types, search spaces, "did you mean") is `yaml_reader.py`; every problem is
one `SweepError` naming the file and the key.
"""

from __future__ import annotations

import dataclasses

import itertools
import math
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path

from schedrl.metrics import METRICS
from schedrl.training.sweep import (SCHEDULERS, AshaOptions, EvaluateSpec, PBTOptions, ResourceSpec, StopSpec,
                                    SweepSpec, TrainingOptions)
from schedrl.training.yaml_reader import ALIASES, Reader, SweepError, is_search

MAX_TRIALS = 10_000
"""Trials a sweep may hold (checked before any candidate is validated): Tune keeps every trial in memory and runs
each for minutes; ten thousand is weeks of a cluster."""
MAX_ENVIRONMENTS = 1_000
"""Environments a sweep may search (every combination of its env grids and choices): each is prepared, its data
loaded and its validation baselines scored, before the first trial starts."""
_SHARED_SECTIONS = {"stop": StopSpec, "resources": ResourceSpec, "training": TrainingOptions, "evaluate": EvaluateSpec}
_SHARED_TOP_LEVEL = ("name", "agent", "scenario", "env", "model", "param_space", "scheduler", "stop", "resources",
                     "training", "evaluate", "num_samples", "metric", "mode")


class SpecReader(Reader):
    """A `Reader` that knows the sweep's agent (its env and settings classes and section name)."""

    def __init__(self, source: str, agent):
        self.agent = agent
        self.S = agent.settings_section
        super().__init__(source, {self.S: agent.settings_class, "env": agent.env_config_class, **_SHARED_SECTIONS})


def load_sweep(path: str | Path, overrides: Sequence[str] = ()) -> SweepSpec:
    """Read and validate a sweep YAML file (`SweepError` names the file and the key on any problem).

    `overrides` are `KEY.PATH=VALUE` strings (`schedrl tune --set`), applied to the file's data before it is
    validated: VALUE is read as YAML (`30m`, `2`, `[0, 1]`, `{grid: [1, 2]}`), missing sections are created.
    """
    import yaml

    from schedrl import yamlfile
    from schedrl.bounded import TooLarge, read_bounded

    path = Path(path)
    try:
        raw = yamlfile.load(read_bounded(path, "a sweep file").decode("utf-8"))
    except TooLarge as e:
        raise SweepError(str(e)) from None
    except FileNotFoundError:
        raise FileNotFoundError(f"sweep file {path} does not exist") from None
    except IsADirectoryError:
        raise SweepError(f"{path} is a directory, not a sweep file (give a .yaml file, e.g. tune_configs/*.yaml)") from None
    except UnicodeDecodeError:
        raise SweepError(f"{path}: not a text file (a sweep file is UTF-8 YAML)") from None
    except OSError as e:
        raise SweepError(f"{path}: cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise SweepError(f"{where}: not valid YAML ({_yaml_problem(e)})") from None
    except (RecursionError, ValueError) as e:  # nested past the parser's stack; a date or integer Python refuses
        raise SweepError(f"{path}: not valid YAML ({_yaml_problem(e)})") from None
    source = str(path)
    if overrides:
        raw = apply_overrides(raw, overrides, source)
        source += " with --set " + " ".join(overrides)
    return sweep_from_dict(raw, source=source, default_name=path.stem)


def apply_overrides(raw, overrides: Sequence[str], source: str):
    """A copy of the sweep data with each `KEY.PATH=VALUE` set (VALUE parsed as YAML)."""
    import copy

    import yaml

    from schedrl import yamlfile

    data = copy.deepcopy(raw) if isinstance(raw, Mapping) else raw
    for item in overrides:
        key, sep, text = item.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(p.strip() for p in parts):
            raise SweepError(f"--set must look like KEY.PATH=VALUE (e.g. stop.time_budget=15m); got {item!r}")
        try:
            value = yamlfile.load(text)
        except (yaml.YAMLError, RecursionError, ValueError) as e:
            raise SweepError(f"--set {item}: the value is not valid YAML ({_yaml_problem(e)}); quote it for a string") from None
        if not isinstance(data, Mapping):
            raise SweepError(f"{source}: a sweep file is a mapping of keys; --set cannot apply to it")
        node = data
        for i, part in enumerate(parts[:-1]):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise SweepError(f"--set {item}: '{'.'.join(parts[:i + 1])}' is a value in {source}, not a section")
        node[parts[-1]] = value
    return data


def _yaml_problem(e: Exception) -> str:
    """What the YAML parser refused, on one line."""
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return " ".join(str(getattr(e, "problem", None) or e).split())


def sweep_from_dict(raw, source: str = "<dict>", default_name: str = "sweep") -> SweepSpec:
    """Validate sweep data (a parsed YAML mapping)."""
    from schedrl.agents import AGENTS, get_agent

    base = Reader(source)
    if not isinstance(raw, Mapping):
        base.fail("a sweep file is a mapping of keys (name, agent, env, ppo, param_space, ...)")
    agent_name = base.value(raw.get("agent", "rlscheduler"), str, "agent")
    if agent_name not in AGENTS:
        base.fail(f"'agent' must be one of {', '.join(AGENTS)}; got {agent_name!r}")
    r = SpecReader(source, get_agent(agent_name))
    S = r.S
    top_level = (*_SHARED_TOP_LEVEL, S)
    for key in raw:
        if key not in top_level:
            r.unknown(str(key), str(key), top_level)
    name = r.value(raw.get("name", default_name), str, "name")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        r.fail(f"'name' must be a plain directory name (letters, digits, _ . -); got {name!r}")
    agent = agent_name
    scenario, original = None, raw
    if raw.get("scenario") is not None:
        raw, scenario = _with_scenario(r, raw, agent)

    env_fixed, env_search = r.section(r.agent.env_config_class, raw.get("env"), "env", searchable=True)
    ppo_fixed, ppo_search = r.section(r.agent.settings_class, raw.get(S), S, searchable=True)
    space = {f"env.{k}": v for k, v in env_search.items()} | {f"{S}.{k}": v for k, v in ppo_search.items()}
    default_model = r.agent.models[0] if r.agent.models else ""
    model_raw = raw.get("model", default_model)
    if is_search(model_raw):
        space["model"] = r.search_space(model_raw, str, "model")
        model = default_model
    else:
        model = r.value(model_raw, str, "model")
    model_fixed = "model" in raw and not is_search(model_raw)
    for key, value in _param_space_entries(r, raw.get("param_space"), env_fixed, ppo_fixed, model_fixed):
        if key in space:
            r.fail(f"'{key}' is searched twice (inline and in param_space)")
        space[key] = value
    _check_searchable(r, space)
    _check_size(r, space, raw.get("num_samples", 1))

    env = _env(r, env_fixed, space)
    ppo = _ppo(r, ppo_fixed, space)
    _check_models(r, [model] if "model" not in space else list(space["model"].values))

    scheduler, options = _scheduler(r, raw.get("scheduler"), ppo, space)
    stop = r.build(StopSpec, r.section(StopSpec, raw.get("stop"), "stop")[0], "stop")
    if scheduler == "asha":
        options = replace(options, max_t=options.max_t or stop.iterations or 100)
        if options.grace_period > options.max_t:
            r.fail(f"scheduler: asha's grace_period={options.grace_period} exceeds max_t={options.max_t}")
    resources = r.build(ResourceSpec, r.section(ResourceSpec, raw.get("resources"), "resources")[0], "resources")
    training = r.build(TrainingOptions, r.section(TrainingOptions, raw.get("training"), "training")[0], "training")
    evaluate = r.build(EvaluateSpec, r.section(EvaluateSpec, raw.get("evaluate"), "evaluate")[0], "evaluate")
    num_samples = r.value(raw.get("num_samples", 1), int, "num_samples")
    if num_samples < 1:
        r.fail(f"'num_samples' must be >= 1; got {num_samples}")
    metric = r.value(raw.get("metric", "schedrl/validation"), str, "metric")
    mode = _mode(r, raw.get("mode"), metric, env, space)
    if metric.startswith("schedrl/") and training.validation_sequences < 1:
        r.fail(f"metric {metric} needs training.validation_sequences >= 1")
    if scheduler in ("asha", "pbt") and metric.startswith("schedrl/") and training.validate_every > 1:
        r.fail(f"scheduler: {scheduler} reads {metric} at every iteration; training.validate_every must be 1 "
               f"with it, got {training.validate_every}")
    if scenario is not None:
        scenario, evaluate = _scenario_checked(r, scenario, env, space, evaluate, original)
        training_raw = original.get("training") if isinstance(original.get("training"), Mapping) else {}
        if not {"validation_sequences", "validation_jobs"} & set(training_raw) \
                and not any(f"env.{k}" in space for k in SCENARIO_OVERRIDES):
            training = replace(training, validation_from_scenario=True)
    spec = SweepSpec(name=name, agent=agent, env=env, settings=ppo, model=model, param_space=space, scheduler=scheduler,
                     scheduler_options=options, stop=stop, resources=resources, training=training, evaluate=evaluate,
                     num_samples=num_samples, metric=metric, mode=mode, source=source,
                     scenario=scenario)
    _check_size(r, space, num_samples)
    return spec


def _check_size(r, space, num_samples) -> None:
    """At most `MAX_TRIALS` trials, counted from the grids' lengths before any candidate is validated or expanded."""
    grid = math.prod(len(s.values) for s in space.values() if s.kind == "grid")
    samples = num_samples if isinstance(num_samples, int) and not isinstance(num_samples, bool) else 1
    if grid * max(samples, 1) > MAX_TRIALS:
        r.fail(f"'num_samples' {samples:,} x a param_space grid of {grid:,} is {grid * samples:,} trials; a sweep "
               f"holds at most {MAX_TRIALS:,} (lower num_samples or split the grid into several sweeps)")


SCENARIO_OVERRIDES = ("trace", "cleaning", "augment", "augment_seed", "metric", "backfill", "window")
"""Env fields that, given in a sweep file beside `scenario:`, override that part of the scenario."""


def _with_scenario(r: SpecReader, raw: Mapping, agent: str):
    """`scenario: NAME|FILE`: the env fields it sets (under those the file gives: explicit keys win), and the scenario."""
    from schedrl.scenarios import get_scenario

    text = r.value(raw["scenario"], str, "scenario")
    try:
        scenario = get_scenario(text)
        scenario.check_agent(agent)
    except (ValueError, OSError) as e:  # OSError: a name the file system refuses as a path (too long, say)
        r.fail(f"scenario: {e}")
    env_raw = raw.get("env") or {}
    if not isinstance(env_raw, Mapping):
        return raw, scenario  # the env section's own check says what is wrong
    fields = {f.name for f in dataclasses.fields(r.agent.env_config_class)}
    defaults = {k: v for k, v in scenario.agent_options(agent).items() if k in fields}
    return {**raw, "env": {**defaults, **env_raw}}, scenario


def _scenario_checked(r: SpecReader, scenario, env, space: dict, evaluate: EvaluateSpec, raw: Mapping):
    """The scenario with the sweep file's own (`raw`, as written) env values laid over it, checked against the
    agent's env; the final evaluation on its fixed evaluation sequences unless the file says otherwise."""
    env_raw = raw.get("env") if isinstance(raw.get("env"), Mapping) else {}
    given = {k: getattr(env, k) for k in SCENARIO_OVERRIDES
             if k in env_raw and f"env.{k}" not in space and hasattr(env, k)}
    evaluate_raw = raw.get("evaluate") if isinstance(raw.get("evaluate"), Mapping) else {}
    if "sequences" in evaluate_raw:
        given["sequences"] = evaluate.sequences
    if "jobs" in evaluate_raw:
        given["jobs"] = evaluate.jobs
    try:
        scenario = scenario.overridden(**scenario.applicable_overrides(given))
        if not any(k.startswith("env.") for k in space):
            from schedrl.scenarios.protocol import RunProtocol

            RunProtocol.checked(r.agent.name, r.agent.judge(env), scenario)
    except ValueError as e:
        r.fail(f"scenario: {e}")
    own = {k for k in ("sequences",) if k in evaluate_raw} | {k for k in ("starts", "traces") if getattr(evaluate, k)}
    return scenario, replace(evaluate, **scenario.final_evaluation(own))


def _param_space_entries(r: SpecReader, raw, env_fixed: dict, ppo_fixed: dict, model_fixed: bool):
    if raw is None:
        return
    if not isinstance(raw, Mapping):
        r.fail(f"'param_space' maps {r.S}.<field>, env.<field> or model to a search space")
    hints = {"env": typing.get_type_hints(r.agent.env_config_class), r.S: typing.get_type_hints(r.agent.settings_class)}
    fixed = {"env": env_fixed, r.S: ppo_fixed}
    for key, value in raw.items():
        key = str(key)
        section, dot, name = key.partition(".")
        if key == "model":
            hint = str
            if model_fixed:
                r.fail("'model' is set both at the top level and in param_space")
        elif dot and section in hints:
            if name not in hints[section]:
                r.unknown(f"param_space.{key}", name, list(hints[section]))
            if name in fixed[section]:
                r.fail(f"'{key}' is set both under {section} and in param_space")
            hint = hints[section][name]
        else:
            guess = next((f"{s}.{ALIASES.get(key, key)}" for s in hints if ALIASES.get(key, key) in hints[s]), None)
            r.fail(f"unknown key 'param_space.{key}' (keys are {r.S}.<field>, env.<field> or model"
                   + (f"; did you mean {guess}?)" if guess else ")"))
        if not is_search(value):
            r.fail(f"'param_space.{key}' must be a search space ({{grid: [...]}}, {{choice: [...]}}, "
                   f"{{uniform: [lo, hi]}}, {{loguniform: [lo, hi]}} or {{randint: [lo, hi]}}); got {value!r}")
        yield key, r.search_space(value, hint, f"param_space.{key}")


def _check_searchable(r: SpecReader, space: dict) -> None:
    searchable = r.agent.searchable()
    for key, s in space.items():
        section, _, name = key.partition(".")
        if section == "env":
            if name not in r.agent.env_searchable:
                r.fail(f"'{key}' cannot be searched (searchable env fields: {', '.join(r.agent.env_searchable)})")
            if not s.discrete:
                r.fail(f"'{key}': environment fields take grid or choice (each value is prepared before the sweep)")
        elif section == r.S and name not in searchable:
            r.fail(f"'{key}' cannot be searched (one value per sweep; searchable: {', '.join(searchable) or 'none'})")


def _combos(fixed: dict, searched: dict[str, tuple], limit: int = 4096):
    """(fixed values with the probes, the probes) for every combination of the searched probes, or for each probe
    alone past `limit` combinations."""
    names = list(searched)
    total = 1
    for values in searched.values():
        total *= len(values)
    if total <= limit:
        for combo in itertools.product(*searched.values()):
            probes = dict(zip(names, combo))
            yield fixed | probes, probes
    else:
        for name, values in searched.items():
            for v in values:
                yield fixed | {name: v}, {name: v}


def _env(r: SpecReader, fixed: dict, space: dict):
    cls = r.agent.env_config_class
    for derived in getattr(cls, "DERIVED_FIELDS", ()):
        if derived in fixed:
            r.fail(f"'env.{derived}' is derived from the data before training; it cannot be set")
    searched = {k[4:]: s.values for k, s in space.items() if k.startswith("env.")}
    variants = math.prod(len(v) for v in searched.values())
    if variants > MAX_ENVIRONMENTS:
        r.fail(f"{', '.join('env.' + k for k in searched)} make {variants:,} environments; a sweep prepares at most "
               f"{MAX_ENVIRONMENTS:,} before training (search fewer env values)")
    for values, probes in _combos(fixed, searched):
        r.build(cls, values, ", ".join(f"env.{k}={v!r}" for k, v in probes.items()) or "env")
    return r.build(cls, fixed, "env")


def _ppo(r: SpecReader, fixed: dict, space: dict):
    S, cls = r.S, r.agent.settings_class
    searched = {k[len(S) + 1:]: s.probes() for k, s in space.items() if k.startswith(S + ".")}
    for values, probes in _combos(fixed, searched):
        r.build(cls, values, S + "".join(f", {S}.{k}={v!r}" for k, v in probes.items()))
    return r.build(cls, fixed, S)


def _check_models(r: SpecReader, names: list[str]) -> None:
    for name in names:
        if name not in r.agent.models and (name or r.agent.models):
            r.fail(f"unknown model {name!r} (valid: {', '.join(r.agent.models) or 'none: the agent has one network'})")


def _scheduler(r: SpecReader, raw, ppo, space: dict):
    if raw is None or raw == "none":
        return "none", None
    if isinstance(raw, str):
        raw = {"type": raw}
    if not isinstance(raw, Mapping):
        r.fail(f"'scheduler' is none, asha, pbt or a mapping with 'type'; got {raw!r}")
    kind = r.value(raw.get("type", "none"), str, "scheduler.type")
    if kind not in SCHEDULERS:
        r.fail(f"'scheduler.type' must be one of {', '.join(SCHEDULERS)}; got {kind!r}")
    options = {k: v for k, v in raw.items() if k != "type"}
    if kind == "none":
        if options:
            r.unknown(f"scheduler.{next(iter(options))}", str(next(iter(options))), ["type"])
        return kind, None
    cls = AshaOptions if kind == "asha" else PBTOptions
    mutations = options.pop("hyperparam_mutations", None) if kind == "pbt" else None
    fixed = r.section(cls, options, "scheduler")[0]
    if kind == "pbt":
        if any(key.startswith("env.") for key in space):
            r.fail("scheduler pbt copies trials onto each other: it cannot be combined with searched env fields")
        fixed["hyperparam_mutations"] = _mutations(r, mutations, ppo, space)
    return kind, r.build(cls, fixed, "scheduler")


def _mutations(r: SpecReader, raw, ppo, space: dict) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        r.fail(f"'scheduler.hyperparam_mutations' maps {r.S}.<field> to a search space")
    hints = typing.get_type_hints(r.agent.settings_class)
    searchable = r.agent.searchable()
    S = r.S
    out = {}
    for key, value in raw.items():
        key = str(key)
        name = key.removeprefix(S + ".")
        path = f"scheduler.hyperparam_mutations.{key}"
        if not key.startswith(S + ".") or name not in searchable:
            r.fail(f"'{path}': PBT mutates {S}.<field> only, one of {', '.join(S + '.' + n for n in searchable)}")
        if not is_search(value):
            r.fail(f"'{path}' must be a search space ({{choice: [...]}}, {{uniform: [lo, hi]}}, ...); got {value!r}")
        out[key] = r.search_space(value, hints[name], path)
        for probe in out[key].probes():
            r.build(r.agent.settings_class, asdict(ppo) | {name: probe}, f"{path}={probe!r}")
    return out


def _mode(r: SpecReader, raw, metric: str, env, space: dict) -> str:
    if raw is not None:
        mode = r.value(raw, str, "mode")
        if mode not in ("min", "max"):
            r.fail(f"'mode' must be min or max; got {mode!r}")
        return mode
    if not metric.startswith("schedrl/"):
        r.fail(f"give 'mode' (min or max) for metric {metric!r}")
    metrics = ([r.agent.judge(replace(env, metric=m)).metric for m in space["env.metric"].values]
               if "env.metric" in space else (r.agent.judge(env).metric,))
    directions = {METRICS[m][1] for m in metrics}
    if len(directions) > 1:
        r.fail("env.metric mixes lower- and higher-is-better metrics: give 'mode' (min or max)")
    return "min" if directions.pop() else "max"
