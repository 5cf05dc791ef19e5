"""Sweeps (and single runs): a YAML document validated into a frozen `SweepSpec` (data, not code).

`agent:` names the agent; its `env` section is checked key by key against the agent's env config
class, its settings section (`ppo` for PPO agents, `Agent.settings_section`) against its settings
class, and the shared sections against the small dataclasses below. The typed reading itself
(types, search spaces, "did you mean") is `yaml_reader.py`; `schedrl train` builds the same
`SweepSpec` from its options (`single_run`), so a run is a one-trial sweep through `driver.py`.
`tune_configs/README.md` describes every key.
"""

from __future__ import annotations

import itertools
import json
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from schedrl.duration import parse_duration
from schedrl.metrics import METRICS
from schedrl.training.yaml_reader import ALIASES, Reader, SearchSpace, SweepError, is_search  # noqa: F401  (re-exported)

SCHEDULERS = ("none", "asha", "pbt")
SWEEP_FILE = "sweep.json"
"""Written beside the Tune experiment: the validated spec, the prepared environments, versions."""


@dataclass(frozen=True)
class StopSpec:
    """When each trial (and the whole sweep) stops; the first criterion reached wins."""

    iterations: int | None = None
    """Training iterations per trial."""
    time_budget: str | float | None = None
    """Training time per trial: seconds, or `90s`, `20m`, `1.5h`."""
    total_time_budget: str | float | None = None
    """Wall-clock time of the whole sweep (Tune stops every trial when it is spent)."""

    def __post_init__(self) -> None:
        if self.iterations is None and self.time_budget is None and self.total_time_budget is None:
            raise ValueError("give iterations, time_budget and/or total_time_budget")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError(f"iterations={self.iterations} must be >= 1")
        parse_duration(self.time_budget, "time_budget")
        parse_duration(self.total_time_budget, "total_time_budget")

    @property
    def time_budget_s(self) -> float | None:
        return parse_duration(self.time_budget, "time_budget")

    @property
    def total_time_budget_s(self) -> float | None:
        return parse_duration(self.total_time_budget, "total_time_budget")


@dataclass(frozen=True)
class ResourceSpec:
    """Ray resources of each trial. Env runners and GPUs per learner are agent settings (`ppo:` for PPO agents)."""

    cpus_for_main_process: float = 1.0
    """CPUs reserved by a trial's driver process (its learner, and sampling when num_env_runners is 0)."""
    cpus_per_env_runner: float = 1.0
    """CPUs reserved by each env runner of a trial."""
    max_concurrent_trials: int | None = None
    """Trials running at once; None: as many as the cluster's CPUs allow."""

    def __post_init__(self) -> None:
        if self.cpus_for_main_process < 0 or self.cpus_per_env_runner < 0:
            raise ValueError("CPU amounts must be >= 0")
        if self.max_concurrent_trials is not None and self.max_concurrent_trials < 1:
            raise ValueError(f"max_concurrent_trials={self.max_concurrent_trials} must be >= 1")


@dataclass(frozen=True)
class TrainingOptions:
    """How each trial is prepared and checkpointed (the options of `schedrl train`)."""

    filtering: bool = True
    """Trajectory filtering phase 1 (RLScheduler §IV-C)."""
    filter_phase1_iterations: int = 20
    """Iterations trained on filtered sequences before phase 2."""
    validation_sequences: int = 5
    """Sequences scored each iteration, greedy, against the heuristics (the same for every trial of a group)."""
    validation_jobs: int | None = None
    """Jobs per validation sequence; None: the agent's choice (`Agent.validation_length`: RLScheduler the
    final evaluation's length, capped by its validation zone; the others their training episode's length)."""
    validate_every: int = 1
    """Validate at iteration 1 and every `validate_every`-th iteration only (validation is wall time outside the
    training budget: RLSchert's and DFP's greedy episodes cost about as much as their training iterations).
    Checkpoints are then written only at validated iterations (every lcm(checkpoint_every, validate_every)),
    so every kept checkpoint has a score; the others report NaN."""
    checkpoint_every: int = 1
    """Checkpoint frequency in iterations (and always at the end); every iteration by default, so the
    checkpoint selected on validation is the best iteration's, not the nearest saved one."""
    keep_checkpoints: int | None = 5
    """Checkpoints kept per trial: the best by validation (by recency without validation), plus always the
    latest (for resuming); None keeps every one."""

    def __post_init__(self) -> None:
        if self.validation_jobs is not None and self.validation_jobs < 1:
            raise ValueError(f"validation_jobs={self.validation_jobs} must be >= 1 (or unset: the agent's choice)")
        if self.filter_phase1_iterations < 1 or self.checkpoint_every < 1 or self.validation_sequences < 0:
            raise ValueError("filter_phase1_iterations and checkpoint_every must be >= 1, validation_sequences >= 0")
        if isinstance(self.validate_every, bool) or not isinstance(self.validate_every, int) or self.validate_every < 1:
            raise ValueError(f"validate_every must be an integer >= 1, got {self.validate_every!r}")
        if self.keep_checkpoints is not None and self.keep_checkpoints < 1:
            raise ValueError(f"keep_checkpoints must be >= 1 or null (keep all), got {self.keep_checkpoints}")


@dataclass(frozen=True)
class EvaluateSpec:
    """Final evaluation of the best checkpoint of each trial group against the heuristics."""

    traces: tuple[str, ...] = ()
    """Traces to evaluate on (cross-trace generalisation); empty: each group's own training trace."""
    sequences: int = 10
    """Seeded random held-out sequences per trace (0 with no `starts`: no evaluation)."""
    jobs: int = 1024
    """Jobs per evaluation sequence (RLScheduler §V-B: 1,024)."""
    starts: tuple[int, ...] = ()
    """Fixed evaluation starts instead of random ones."""
    each_trial: bool = False
    """Evaluate every trial's selected checkpoint, not only the best trial of each group: the multi-seed
    protocol (a `ppo.seed` grid), reported per trial with mean, spread, worst and how many beat the best
    heuristic."""

    def __post_init__(self) -> None:
        if self.sequences < 0 or self.jobs < 1:
            raise ValueError("sequences must be >= 0 and jobs >= 1")

    @property
    def enabled(self) -> bool:
        return bool(self.sequences or self.starts)


@dataclass(frozen=True)
class AshaOptions:
    """Asynchronous successive halving (Tune's `ASHAScheduler`) on the sweep's metric."""

    time_attr: str = "training_iteration"
    """Result key measuring a trial's progress."""
    max_t: int | None = None
    """Longest a trial runs, in `time_attr` units; None: stop.iterations, else 100."""
    grace_period: int = 1
    """No trial is stopped before this."""
    reduction_factor: float = 4.0
    """Keep 1 / reduction_factor of the trials at each rung."""
    brackets: int = 1
    """Number of brackets."""

    def __post_init__(self) -> None:
        if self.grace_period < 1 or self.reduction_factor <= 1 or self.brackets < 1:
            raise ValueError("asha needs grace_period >= 1, reduction_factor > 1, brackets >= 1")


@dataclass(frozen=True)
class PBTOptions:
    """Population-based training (Tune's `PopulationBasedTraining`) on the sweep's metric."""

    time_attr: str = "training_iteration"
    """Result key measuring a trial's progress."""
    perturbation_interval: int = 5
    """Exploit/explore every this many `time_attr` units."""
    burn_in_period: int = 0
    """No perturbation before this."""
    hyperparam_mutations: Mapping[str, Any] = field(default_factory=dict)
    """`ppo.<field>` -> search space to resample from ({choice: [...]}, {uniform: [lo, hi]}, ...)."""
    quantile_fraction: float = 0.25
    """Bottom fraction copying the top fraction."""
    resample_probability: float = 0.25
    """Probability of resampling instead of perturbing a value."""

    def __post_init__(self) -> None:
        if not self.hyperparam_mutations:
            raise ValueError("pbt needs hyperparam_mutations (ppo.<field>: a search space)")
        if self.perturbation_interval < 1 or not 0 < self.quantile_fraction <= 0.5:
            raise ValueError("pbt needs perturbation_interval >= 1 and quantile_fraction in (0, 0.5]")


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep file. `env`, `ppo` and `model` hold fixed values; `param_space` every search space."""

    name: str
    """Experiment name: the Tune experiment directory under the output directory."""
    agent: str
    """Agent trained (`schedrl.agents.AGENTS`)."""
    env: Any
    """Fixed environment settings, the agent's env config (searched fields take values from `param_space`)."""
    settings: Any
    """Fixed algorithm settings, the agent's settings class (searched fields from `param_space`)."""
    model: str
    """Policy network name (unless searched)."""
    param_space: Mapping[str, SearchSpace]
    """`<settings section>.<field>` (e.g. `ppo.lr`), `env.<field>` or `model` -> its search space."""
    scheduler: str
    """Trial scheduler: none, asha or pbt."""
    scheduler_options: AshaOptions | PBTOptions | None
    """Options of the trial scheduler."""
    stop: StopSpec
    """Stopping criteria."""
    resources: ResourceSpec
    """Resources per trial."""
    training: TrainingOptions
    """Preparation and checkpointing of each trial."""
    evaluate: EvaluateSpec
    """Final evaluation."""
    num_samples: int
    """Tune's num_samples: the grid is repeated this many times, random spaces drawn anew each time."""
    metric: str
    """Result key the scheduler and the best-trial choice optimise."""
    mode: str
    """min or max."""
    source: str = "<dict>"
    """File the spec was read from (for messages)."""

    @property
    def agent_impl(self):
        """The `Agent` object of `agent`."""
        from schedrl.agents import get_agent

        return get_agent(self.agent)

    @property
    def settings_section(self) -> str:
        return self.agent_impl.settings_section

    @property
    def env_searched(self) -> tuple[str, ...]:
        """Searched environment fields, in the agent's order: their values name a trial group."""
        return tuple(f for f in self.agent_impl.env_searchable if f"env.{f}" in self.param_space)

    def grid_size(self) -> int:
        size = 1
        for space in self.param_space.values():
            size *= len(space.values) if space.kind == "grid" else 1
        return size

    def num_trials(self) -> int:
        return self.grid_size() * self.num_samples

    def env_variants(self) -> list[dict[str, Any]]:
        """Every combination of the searched environment values (each is prepared once)."""
        names = self.env_searched
        spaces = [self.param_space[f"env.{n}"].values for n in names]
        return [dict(zip(names, combo)) for combo in itertools.product(*spaces)]

    def to_data(self) -> dict:
        """The normalised spec as JSON data (recorded in `sweep.json`, compared on --resume)."""
        data = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "param_space":
                value = {k: space.to_data() for k, space in value.items()}
            elif hasattr(value, "__dataclass_fields__"):
                value = asdict(value)
            if f.name != "source":
                data[f.name] = value
        return json.loads(json.dumps(data, default=dict))


# ---------------------------------------------------------------- reading and validating


_SHARED_SECTIONS = {"stop": StopSpec, "resources": ResourceSpec, "training": TrainingOptions, "evaluate": EvaluateSpec}
_SHARED_TOP_LEVEL = ("name", "agent", "env", "model", "param_space", "scheduler", "stop", "resources", "training",
                     "evaluate", "num_samples", "metric", "mode")


class SpecReader(Reader):
    """A `Reader` that knows the sweep's agent (its env and settings classes and section name)."""

    def __init__(self, source: str, agent):
        self.agent = agent
        self.S = agent.settings_section
        super().__init__(source, {self.S: agent.settings_class, "env": agent.env_config_class, **_SHARED_SECTIONS})


def single_run(agent: str, env, settings, model: str | None, stop: StopSpec, training: TrainingOptions,
               evaluate: EvaluateSpec, name: str | None = None, resources: ResourceSpec | None = None) -> SweepSpec:
    """The one-trial spec of a `schedrl train` run (nothing searched), validated like a sweep file's."""
    from schedrl.metrics import METRICS
    from schedrl.agents import get_agent

    impl = get_agent(agent)
    metric = impl.metric(env)
    return SweepSpec(name=name or agent, agent=agent, env=env, settings=settings, model=model or "", param_space={},
                     scheduler="none", scheduler_options=None, stop=stop, resources=resources or ResourceSpec(),
                     training=training, evaluate=evaluate, num_samples=1, metric="schedrl/validation",
                     mode="min" if METRICS[metric][1] else "max", source=f"schedrl train {agent}")


def load_sweep(path: str | Path, overrides: Sequence[str] = ()) -> SweepSpec:
    """Read and validate a sweep YAML file (`SweepError` names the file and the key on any problem).

    `overrides` are `KEY.PATH=VALUE` strings (`schedrl tune --set`), applied to the file's data before it is
    validated: VALUE is read as YAML (`30m`, `2`, `[0, 1]`, `{grid: [1, 2]}`), missing sections are created.
    """
    import yaml

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
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
        reason = " ".join(str(getattr(e, "problem", None) or e).split())  # one line
        raise SweepError(f"{where}: not valid YAML ({reason})") from None
    source = str(path)
    if overrides:
        raw = apply_overrides(raw, overrides, source)
        source += " with --set " + " ".join(overrides)
    return sweep_from_dict(raw, source=source, default_name=path.stem)


def apply_overrides(raw, overrides: Sequence[str], source: str):
    """A copy of the sweep data with each `KEY.PATH=VALUE` set (VALUE parsed as YAML)."""
    import copy

    import yaml

    data = copy.deepcopy(raw) if isinstance(raw, Mapping) else raw
    for item in overrides:
        key, sep, text = item.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(p.strip() for p in parts):
            raise SweepError(f"--set must look like KEY.PATH=VALUE (e.g. stop.time_budget=15m); got {item!r}")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as e:
            reason = " ".join(str(getattr(e, "problem", None) or e).split())  # one line
            raise SweepError(f"--set {item}: the value is not valid YAML ({reason}); quote it for a string") from None
        if not isinstance(data, Mapping):
            raise SweepError(f"{source}: a sweep file is a mapping of keys; --set cannot apply to it")
        node = data
        for i, part in enumerate(parts[:-1]):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise SweepError(f"--set {item}: '{'.'.join(parts[:i + 1])}' is a value in {source}, not a section")
        node[parts[-1]] = value
    return data


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
    return SweepSpec(name=name, agent=agent, env=env, settings=ppo, model=model, param_space=space, scheduler=scheduler,
                     scheduler_options=options, stop=stop, resources=resources, training=training, evaluate=evaluate,
                     num_samples=num_samples, metric=metric, mode=mode, source=source)


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
    """Fixed values with every combination of the searched probes (each alone past `limit` combinations)."""
    names = list(searched)
    total = 1
    for values in searched.values():
        total *= len(values)
    if total <= limit:
        for combo in itertools.product(*searched.values()):
            yield fixed | dict(zip(names, combo))
    else:
        for name, values in searched.items():
            for v in values:
                yield fixed | {name: v}


def _env(r: SpecReader, fixed: dict, space: dict):
    cls = r.agent.env_config_class
    for derived in getattr(cls, "DERIVED_FIELDS", ()):
        if derived in fixed:
            r.fail(f"'env.{derived}' is derived from the data before training; it cannot be set")
    searched = {k[4:]: s.values for k, s in space.items() if k.startswith("env.")}
    for values in _combos(fixed, searched):
        where = ", ".join(f"env.{k}={values[k]!r}" for k in searched) or "env"
        r.build(cls, values, where)
    return r.build(cls, fixed, "env")


def _ppo(r: SpecReader, fixed: dict, space: dict):
    S, cls = r.S, r.agent.settings_class
    searched = {k[len(S) + 1:]: s.probes() for k, s in space.items() if k.startswith(S + ".")}
    for values in _combos(fixed, searched):
        r.build(cls, values, S + "".join(f", {S}.{k}={values[k]!r}" for k in searched))
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
    metrics = ([r.agent.metric(replace(env, metric=m)) for m in space["env.metric"].values] if "env.metric" in space
               else (r.agent.metric(env),))
    directions = {METRICS[m][1] for m in metrics}
    if len(directions) > 1:
        r.fail("env.metric mixes lower- and higher-is-better metrics: give 'mode' (min or max)")
    return "min" if directions.pop() else "max"


# ---------------------------------------------------------------- expansion (dry run) and trial labels


def expand_trials(spec: SweepSpec, seed: int = 0) -> list[dict[str, Any]]:
    """The trials Tune will create: `num_samples` x the grid, random spaces drawn here with `seed`."""
    import numpy as np
    from ray.tune.search.variant_generator import generate_variants

    if not spec.param_space:
        return [{} for _ in range(spec.num_samples)]
    unresolved = {"config": {k: s.to_tune() for k, s in spec.param_space.items()}}
    rng = np.random.default_rng(seed)
    trials = []
    for _ in range(spec.num_samples):
        for _, resolved in generate_variants(unresolved, random_state=rng):
            trials.append({k: resolved["config"][k] for k in spec.param_space})
    return trials


def group_label(values: Mapping[str, Any]) -> str:
    """`trace=SDSC-SP2 backfill=none` for a group's searched environment values; `all` when none."""
    return " ".join(f"{k}={short_value(v)}" for k, v in values.items()) or "all"


def short_value(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str) and "/" in value:
        return Path(value).name
    return str(value)


def trial_values(spec: SweepSpec, config: Mapping) -> dict[str, Any]:
    """A trial's value of every searched key (`env.trace`, `ppo.lr`, `model`) read from its resolved config."""
    out = {}
    for key in spec.param_space:
        section, _, name = key.partition(".")
        if key == "model":
            out[key] = model_name(spec, config.get("_rl_module_spec"), spec.param_space[key].values)
        elif section == "env":
            out[key] = config["env_config"][name]
        else:
            out[key] = lookup_path(config, spec.agent_impl.searchable()[name])
    return out


def trial_group(spec: SweepSpec, config: Mapping) -> dict[str, Any]:
    return {name: config["env_config"][name] for name in spec.env_searched}


def model_name(spec: SweepSpec, module_spec_obj, candidates) -> str:
    agent = spec.agent_impl
    return next((n for n in candidates if agent.module_spec(n) == module_spec_obj), "?")


def trial_settings(spec: SweepSpec, config: Mapping):
    """The algorithm settings of one trial (the fixed ones with its searched values)."""
    prefix = spec.settings_section + "."
    searched = {k[len(prefix):]: v for k, v in trial_values(spec, config).items() if k.startswith(prefix)}
    return replace(spec.settings, **searched)


def lookup_path(config: Mapping, path: tuple[str, ...]):
    for part in path:
        config = config[part]
    return config


def assign_path(config: dict, path: tuple[str, ...], value) -> None:
    for part in path[:-1]:
        config = config.setdefault(part, {})
    config[path[-1]] = value
