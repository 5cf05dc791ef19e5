"""Sweep files: a YAML document validated into a frozen `SweepSpec` (DESIGN decision 7: data, not code).

Each section is checked key by key against the config dataclasses (`RLSchedulerEnvConfig`,
`PPOSettings` and the small ones below); a search space is written in Tune's vocabulary:
`{grid: [...]}`, `{choice: [...]}`, `{uniform: [lo, hi]}`, `{loguniform: [lo, hi]}`,
`{randint: [lo, hi]}` (hi excluded). `tune_configs/README.md` describes every key; `sweep.py` runs a spec.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from schedrl.algorithms.ppo import TARGET_KL_KEY, VF_LR_KEY, PPOSettings
from schedrl.duration import parse_duration
from schedrl.envs.rlscheduler_config import RLSchedulerEnvConfig
from schedrl.metrics import METRICS

SEARCH_KINDS = ("grid", "choice", "uniform", "loguniform", "randint")
AGENTS = ("rlscheduler",)
SCHEDULERS = ("none", "asha", "pbt")
SWEEP_FILE = "sweep.json"
"""Written beside the Tune experiment: the validated spec, the prepared environments, versions."""

# PPOSettings field -> key path in `AlgorithmConfig.to_dict()`, for the fields a sweep may search;
# tests/algorithms/test_sweep.py checks every path against `build_ppo_config`
PPO_CONFIG_PATHS: dict[str, tuple[str, ...]] = {
    "gamma": ("gamma",),
    "lambda_": ("lambda",),
    "clip_param": ("clip_param",),
    "lr": ("lr",),
    "vf_lr": ("learner_config_dict", VF_LR_KEY),
    "target_kl": ("learner_config_dict", TARGET_KL_KEY),
    "num_epochs": ("num_epochs",),
    "train_batch_size_per_learner": ("_train_batch_size_per_learner",),
    "minibatch_size": ("minibatch_size",),
    "entropy_coeff": ("entropy_coeff",),
    "vf_clip_param": ("vf_clip_param",),
    "seed": ("seed",),
}
# environment fields that may be searched; each distinct value is prepared before the sweep starts
ENV_SEARCHABLE = ("trace", "cleaning", "preset", "metric", "backfill", "sequence_length")
# names people reach for, mapped to ours (for "did you mean" hints)
ALIASES = {
    "learning_rate": "lr", "pi_lr": "lr", "lambda": "lambda_", "gae_lambda": "lambda_", "lam": "lambda_",
    "epochs": "num_epochs", "train_batch_size": "train_batch_size_per_learner",
    "batch_size": "train_batch_size_per_learner", "entropy_coef": "entropy_coeff", "entropy": "entropy_coeff",
    "clip_ratio": "clip_param", "num_workers": "num_env_runners", "seq_len": "sequence_length",
    "samples": "num_samples", "max_iterations": "iterations", "time_limit": "time_budget",
}


class SweepError(ValueError):
    """A sweep file that does not validate; the message names the file and the key path."""


@dataclass(frozen=True)
class SearchSpace:
    """One searched value, in Tune's vocabulary."""

    kind: str
    """grid (every value, crossed with the other grids), choice, uniform, loguniform or randint."""
    values: tuple
    """The candidates (grid, choice) or the bounds `(lo, hi)` (randint excludes hi)."""

    @property
    def discrete(self) -> bool:
        return self.kind in ("grid", "choice")

    def probes(self) -> tuple:
        """Values that must all be valid: every candidate, or both ends of the range."""
        return (self.values[0], self.values[1] - 1) if self.kind == "randint" else self.values

    def to_tune(self, convert=lambda value: value):
        """The Tune search-space object; `convert` maps candidates (a model name to its module spec)."""
        from ray import tune

        if self.kind == "grid":
            return tune.grid_search([convert(v) for v in self.values])
        if self.kind == "choice":
            return tune.choice([convert(v) for v in self.values])
        return {"uniform": tune.uniform, "loguniform": tune.loguniform, "randint": tune.randint}[self.kind](*self.values)

    def to_data(self) -> dict:
        return {self.kind: list(self.values)}

    def __str__(self) -> str:
        return f"{self.kind}({', '.join(str(v) for v in self.values)})"


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
    """Ray resources of each trial. Env runners and GPUs per learner are PPO settings (`ppo:`)."""

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
    checkpoint_every: int = 5
    """Checkpoint frequency in iterations (and always at the end)."""

    def __post_init__(self) -> None:
        if self.filter_phase1_iterations < 1 or self.checkpoint_every < 1 or self.validation_sequences < 0:
            raise ValueError("filter_phase1_iterations and checkpoint_every must be >= 1, validation_sequences >= 0")


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
    """Scheduler trained: rlscheduler."""
    env: RLSchedulerEnvConfig
    """Fixed environment settings (searched fields take their values from `param_space`)."""
    ppo: PPOSettings
    """Fixed PPO settings (searched fields take their values from `param_space`)."""
    model: str
    """Policy network name (unless searched)."""
    param_space: Mapping[str, SearchSpace]
    """`ppo.<field>`, `env.<field>` or `model` -> its search space."""
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
    def env_searched(self) -> tuple[str, ...]:
        """Searched environment fields, in the dataclass's order: their values name a trial group."""
        return tuple(f for f in ENV_SEARCHABLE if f"env.{f}" in self.param_space)

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


class _TypeMismatch(Exception):
    pass


def _type_name(hint) -> str:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(hint))
    if hint is type(None):
        return "null"
    if typing.get_origin(hint) is tuple:
        return f"a list of {_type_name(typing.get_args(hint)[0])}"
    if typing.get_origin(hint) in (Mapping, dict):
        return "a mapping"
    return getattr(hint, "__name__", str(hint))


def _coerce(value, hint):
    """`value` as the dataclass field type `hint`, or `_TypeMismatch`."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        arms = typing.get_args(hint)
        if value is None and type(None) in arms:
            return None
        for arm in arms:
            if arm is not type(None):
                try:
                    return _coerce(value, arm)
                except _TypeMismatch:
                    pass
        raise _TypeMismatch
    if hint is Any:
        return value
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:  # YAML 1.1 reads `3e-4` (no dot) as a string
                return float(value)
            except ValueError:
                pass
        raise _TypeMismatch
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _TypeMismatch
    if hint in (str, bool):
        if type(value) is hint:
            return value
        raise _TypeMismatch
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise _TypeMismatch
        return tuple(_coerce(v, typing.get_args(hint)[0]) for v in value)
    if origin in (Mapping, dict):
        if not isinstance(value, Mapping):
            raise _TypeMismatch
        key_type, value_type = typing.get_args(hint)
        return {_coerce(k, key_type): _coerce(v, value_type) for k, v in value.items()}
    return value


def _numeric_base(hint):
    """int or float when the field holds a number (possibly optional), else None."""
    arms = [a for a in typing.get_args(hint) if a is not type(None)] if typing.get_args(hint) else [hint]
    return arms[0] if len(arms) == 1 and arms[0] in (int, float) else None


def _is_search(value) -> bool:
    return isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in SEARCH_KINDS


# sections whose keys are dataclass fields, for "did you mean ppo.X?" across sections
_SECTIONS = {"ppo": PPOSettings, "env": RLSchedulerEnvConfig, "stop": StopSpec, "resources": ResourceSpec,
             "training": TrainingOptions, "evaluate": EvaluateSpec}
_TOP_LEVEL = ("name", "agent", "env", "ppo", "model", "param_space", "scheduler", "stop", "resources", "training",
              "evaluate", "num_samples", "metric", "mode")


class _Reader:
    """Validation state of one file: every error names the file and the key path."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, message: str):
        raise SweepError(f"{self.source}: {message}")

    def unknown(self, path: str, key: str, valid) -> None:
        valid = list(valid)
        wanted = ALIASES.get(key, key)
        elsewhere = [f"{name}.{wanted}" for name, cls in _SECTIONS.items()
                     if wanted in {f.name for f in fields(cls)} and not path.startswith(name + ".")]
        # a known alias, a near miss here, the same key in another section, a looser near miss
        candidates = ([wanted] if wanted in valid else difflib.get_close_matches(key, valid, n=1, cutoff=0.8)
                      or elsewhere or difflib.get_close_matches(key, valid, n=1))
        hint = f"did you mean {candidates[0]}?" if candidates else "valid: " + ", ".join(valid)
        self.fail(f"unknown key '{path}' ({hint})")

    def value(self, raw, hint, path: str):
        try:
            return _coerce(raw, hint)
        except _TypeMismatch:
            spaces = " (search spaces: grid, choice, uniform, loguniform, randint)" if isinstance(raw, Mapping) else ""
            self.fail(f"'{path}' must be {_type_name(hint)}; got {raw!r}{spaces}")

    def search_space(self, raw: Mapping, hint, path: str) -> SearchSpace:
        kind, args = next(iter(raw.items()))
        if not isinstance(args, list) or not args:
            self.fail(f"'{path}': {{{kind}: ...}} takes a non-empty list; got {args!r}")
        if kind in ("grid", "choice"):
            return SearchSpace(kind, tuple(self.value(v, hint, f"{path}.{kind}") for v in args))
        number = _numeric_base(hint)
        if len(args) != 2:
            self.fail(f"'{path}': {{{kind}: [lo, hi]}} takes two bounds; got {args!r}")
        if number is None or (number is int and kind != "randint"):
            use = "randint or grid" if number is int else "grid or choice"
            self.fail(f"'{path}' holds {_type_name(hint)}: {kind} cannot sample it (use {use})")
        lo, hi = (self.value(v, int if kind == "randint" else float, f"{path}.{kind}") for v in args)
        if not lo < hi or (kind == "loguniform" and lo <= 0):
            self.fail(f"'{path}': {kind} needs lo < hi" + (" and lo > 0" if kind == "loguniform" else "") + f"; got {args!r}")
        return SearchSpace(kind, (lo, hi))

    def section(self, cls, raw, path: str, searchable: bool = False) -> tuple[dict, dict]:
        """Fixed values and search spaces of one section, every key checked against `cls`."""
        if raw is None:
            return {}, {}
        if not isinstance(raw, Mapping):
            self.fail(f"'{path}' must be a mapping of keys to values; got {raw!r}")
        hints = typing.get_type_hints(cls)
        valid = [f.name for f in fields(cls) if f.init]
        fixed, searched = {}, {}
        for key, value in raw.items():
            if key not in valid:
                self.unknown(f"{path}.{key}", str(key), valid)
            if _is_search(value):
                if not searchable:
                    self.fail(f"'{path}.{key}': search spaces belong under env, ppo, model or param_space")
                searched[key] = self.search_space(value, hints[key], f"{path}.{key}")
            else:
                fixed[key] = self.value(value, hints[key], f"{path}.{key}")
        return fixed, searched

    def build(self, cls, values: dict, path: str):
        try:
            return cls(**values)
        except ValueError as e:
            self.fail(f"{path}: {e}")


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a sweep YAML file (`SweepError` names the file and the key on any problem)."""
    import yaml

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"sweep file {path} does not exist") from None
    except yaml.YAMLError as e:
        raise SweepError(f"{path}: not valid YAML: {e}") from None
    return sweep_from_dict(raw, source=str(path), default_name=path.stem)


def sweep_from_dict(raw, source: str = "<dict>", default_name: str = "sweep") -> SweepSpec:
    """Validate sweep data (a parsed YAML mapping)."""
    r = _Reader(source)
    if not isinstance(raw, Mapping):
        r.fail("a sweep file is a mapping of keys (name, agent, env, ppo, param_space, ...)")
    for key in raw:
        if key not in _TOP_LEVEL:
            r.unknown(str(key), str(key), _TOP_LEVEL)
    name = r.value(raw.get("name", default_name), str, "name")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        r.fail(f"'name' must be a plain directory name (letters, digits, _ . -); got {name!r}")
    agent = r.value(raw.get("agent", "rlscheduler"), str, "agent")
    if agent not in AGENTS:
        r.fail(f"'agent' must be one of {', '.join(AGENTS)}; got {agent!r}")

    env_fixed, env_search = r.section(RLSchedulerEnvConfig, raw.get("env"), "env", searchable=True)
    ppo_fixed, ppo_search = r.section(PPOSettings, raw.get("ppo"), "ppo", searchable=True)
    space = {f"env.{k}": v for k, v in env_search.items()} | {f"ppo.{k}": v for k, v in ppo_search.items()}
    model_raw = raw.get("model", "kernel")
    if _is_search(model_raw):
        space["model"] = r.search_space(model_raw, str, "model")
        model = "kernel"
    else:
        model = r.value(model_raw, str, "model")
    model_fixed = "model" in raw and not _is_search(model_raw)
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
    return SweepSpec(name=name, agent=agent, env=env, ppo=ppo, model=model, param_space=space, scheduler=scheduler,
                     scheduler_options=options, stop=stop, resources=resources, training=training, evaluate=evaluate,
                     num_samples=num_samples, metric=metric, mode=mode, source=source)


def _param_space_entries(r: _Reader, raw, env_fixed: dict, ppo_fixed: dict, model_fixed: bool):
    if raw is None:
        return
    if not isinstance(raw, Mapping):
        r.fail("'param_space' maps ppo.<field>, env.<field> or model to a search space")
    hints = {"env": typing.get_type_hints(RLSchedulerEnvConfig), "ppo": typing.get_type_hints(PPOSettings)}
    fixed = {"env": env_fixed, "ppo": ppo_fixed}
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
            r.fail(f"unknown key 'param_space.{key}' (keys are ppo.<field>, env.<field> or model"
                   + (f"; did you mean {guess}?)" if guess else ")"))
        if not _is_search(value):
            r.fail(f"'param_space.{key}' must be a search space ({{grid: [...]}}, {{choice: [...]}}, "
                   f"{{uniform: [lo, hi]}}, {{loguniform: [lo, hi]}} or {{randint: [lo, hi]}}); got {value!r}")
        yield key, r.search_space(value, hint, f"param_space.{key}")


def _check_searchable(r: _Reader, space: dict) -> None:
    for key, s in space.items():
        section, _, name = key.partition(".")
        if section == "env":
            if name not in ENV_SEARCHABLE:
                r.fail(f"'{key}' cannot be searched (searchable env fields: {', '.join(ENV_SEARCHABLE)})")
            if not s.discrete:
                r.fail(f"'{key}': environment fields take grid or choice (each value is prepared before the sweep)")
        elif section == "ppo" and name not in PPO_CONFIG_PATHS:
            r.fail(f"'{key}' cannot be searched (one value per sweep; searchable: {', '.join(PPO_CONFIG_PATHS)})")


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


def _env(r: _Reader, fixed: dict, space: dict) -> RLSchedulerEnvConfig:
    from schedrl.sim.config import BACKFILLS
    from schedrl.workload.cleaning import CleaningRules

    for derived in ("train_starts", "filter_phase1_episodes"):
        if derived in fixed:
            r.fail(f"'env.{derived}' is set by trajectory filtering (see training.filtering)")
    searched = {k[4:]: s.values for k, s in space.items() if k.startswith("env.")}
    for values in _combos(fixed, searched):
        env = r.build(RLSchedulerEnvConfig, values, "env")
        where = ", ".join(f"env.{k}={values[k]!r}" for k in searched) or "env"
        if env.backfill not in BACKFILLS:
            r.fail(f"{where}: backfill must be one of {', '.join(BACKFILLS)}; got {env.backfill!r}")
        try:
            CleaningRules.preset(env.cleaning)
        except ValueError as e:
            r.fail(f"{where}: {e}")
    return r.build(RLSchedulerEnvConfig, fixed, "env")


def _ppo(r: _Reader, fixed: dict, space: dict) -> PPOSettings:
    searched = {k[4:]: s.probes() for k, s in space.items() if k.startswith("ppo.")}
    for values in _combos(fixed, searched):
        r.build(PPOSettings, values, "ppo" + "".join(f", ppo.{k}={values[k]!r}" for k in searched))
    return r.build(PPOSettings, fixed, "ppo")


def _check_models(r: _Reader, names: list[str]) -> None:
    from schedrl.models.registry import MODELS

    for name in names:
        if name not in MODELS:
            r.fail(f"unknown model {name!r} (valid: {', '.join(MODELS)})")


def _scheduler(r: _Reader, raw, ppo: PPOSettings, space: dict):
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


def _mutations(r: _Reader, raw, ppo: PPOSettings, space: dict) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        r.fail("'scheduler.hyperparam_mutations' maps ppo.<field> to a search space")
    hints = typing.get_type_hints(PPOSettings)
    out = {}
    for key, value in raw.items():
        key = str(key)
        name = key.removeprefix("ppo.")
        path = f"scheduler.hyperparam_mutations.{key}"
        if not key.startswith("ppo.") or name not in PPO_CONFIG_PATHS:
            r.fail(f"'{path}': PBT mutates ppo.<field> only, one of {', '.join('ppo.' + n for n in PPO_CONFIG_PATHS)}")
        if not _is_search(value):
            r.fail(f"'{path}' must be a search space ({{choice: [...]}}, {{uniform: [lo, hi]}}, ...); got {value!r}")
        out[key] = r.search_space(value, hints[name], path)
        for probe in out[key].probes():
            r.build(PPOSettings, asdict(ppo) | {name: probe}, f"{path}={probe!r}")
    return out


def _mode(r: _Reader, raw, metric: str, env: RLSchedulerEnvConfig, space: dict) -> str:
    if raw is not None:
        mode = r.value(raw, str, "mode")
        if mode not in ("min", "max"):
            r.fail(f"'mode' must be min or max; got {mode!r}")
        return mode
    if not metric.startswith("schedrl/"):
        r.fail(f"give 'mode' (min or max) for metric {metric!r}")
    metrics = space["env.metric"].values if "env.metric" in space else (env.metric,)
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
            out[key] = model_name(config.get("_rl_module_spec"), spec.param_space[key].values)
        elif section == "env":
            out[key] = config["env_config"][name]
        else:
            out[key] = lookup_path(config, PPO_CONFIG_PATHS[name])
    return out


def trial_group(spec: SweepSpec, config: Mapping) -> dict[str, Any]:
    return {name: config["env_config"][name] for name in spec.env_searched}


def model_name(module_spec_obj, candidates) -> str:
    from schedrl.models.registry import module_spec

    return next((n for n in candidates if module_spec(n) == module_spec_obj), "?")


def trial_ppo(spec: SweepSpec, config: Mapping) -> PPOSettings:
    """The PPO settings of one trial (the fixed ones with its searched values)."""
    searched = {k[4:]: v for k, v in trial_values(spec, config).items() if k.startswith("ppo.")}
    return replace(spec.ppo, **searched)


def lookup_path(config: Mapping, path: tuple[str, ...]):
    for part in path:
        config = config[part]
    return config


def assign_path(config: dict, path: tuple[str, ...], value) -> None:
    for part in path[:-1]:
        config = config.setdefault(part, {})
    config[path[-1]] = value
