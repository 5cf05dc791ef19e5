"""Hyperparameter sweeps: a YAML file validated into a `SweepSpec`, run as one Ray Tune experiment.

A sweep file is data (DESIGN decision 7): its sections are checked key by key against the config
dataclasses (`RLSchedulerEnvConfig`, `PPOSettings` and the small ones below), and a search space is
written in Tune's vocabulary: `{grid: [...]}`, `{choice: [...]}`, `{uniform: [lo, hi]}`,
`{loguniform: [lo, hi]}`, `{randint: [lo, hi]}` (hi excluded). `tune_configs/README.md` describes
every key. `run_sweep` prepares each distinct environment once, as `schedrl train` does
(normalisation constants, trajectory filtering, validation sequences scored by the heuristics),
places the search spaces into the PPO `AlgorithmConfig` dict and runs one `tune.Tuner`;
`schedrl.cli.tune` then evaluates the best checkpoint of each trial group.

A *trial group* is one value of the searched environment fields (one trace, one backfilling mode...):
trials of a group train on the same environment and are validated on the same sequences, so their
validation numbers compare; the best trial of each group is the one evaluated.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
import time
import types
import typing
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ray.tune import Callback

from schedrl.algorithms.ppo import TARGET_KL_KEY, VF_LR_KEY, PPOSettings
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


def parse_duration(value: str | float | None, what: str) -> float | None:
    """`90`, `90s`, `20m`, `1.5h` (or a number of seconds) -> seconds."""
    if value is None or isinstance(value, (int, float)):
        if value is not None and value <= 0:
            raise ValueError(f"{what} must be > 0; got {value}")
        return None if value is None else float(value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", value)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"{what} must look like 90s, 20m or 1.5h; got {value!r}")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


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
    return " ".join(f"{k}={_short(v)}" for k, v in values.items()) or "all"


def _short(value) -> str:
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
            out[key] = _lookup(config, PPO_CONFIG_PATHS[name])
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


def _lookup(config: Mapping, path: tuple[str, ...]):
    for part in path:
        config = config[part]
    return config


def _assign(config: dict, path: tuple[str, ...], value) -> None:
    for part in path[:-1]:
        config = config.setdefault(part, {})
    config[path[-1]] = value


def check_traces(spec: SweepSpec) -> list[str]:
    """Every trace the sweep trains or evaluates on, resolved now (a clear error if one is missing)."""
    from schedrl.workload.catalog import resolve_trace

    traces = list(spec.param_space["env.trace"].values) if "env.trace" in spec.param_space else [spec.env.trace]
    traces += [t for t in spec.evaluate.traces if t not in traces]
    for trace in traces:
        resolve_trace(trace)
    return traces


def portable_trace(trace: str) -> str:
    """Catalog names stay names (each node resolves them); file paths become absolute (trials run in their own directory)."""
    from schedrl.workload.catalog import find_entry

    return trace if find_entry(trace) is not None else str(Path(trace).expanduser().resolve())


# ---------------------------------------------------------------- preparation and the Tune run


@dataclass(frozen=True)
class PreparedEnv:
    """What `schedrl train` computes before training, for one environment of the sweep."""

    label: str
    """Group label."""
    norm: Mapping[str, float]
    """Normalisation constants of the trace."""
    train_starts: tuple[int, ...]
    """Trajectory-filtering phase-1 starts (empty without filtering)."""
    validation: Mapping[str, Any]
    """Validation starts and heuristic values (`SchedulingMetricsCallback`)."""
    trace_sha256: str | None
    """Checksum of the trace, for the run records."""


def env_key(env_config: Mapping, searched: tuple[str, ...]) -> str:
    return json.dumps([env_config[name] for name in searched])


def prepare_envs(spec: SweepSpec, log=print) -> dict[str, PreparedEnv]:
    """Prepare every environment variant once: normalisation, filtering, validation (as `train.prepare`)."""
    from schedrl.algorithms.train import filter_training_starts, resolve_env, validation_spec

    table = {}
    for variant in spec.env_variants():
        variant = {k: portable_trace(v) if k == "trace" else v for k, v in variant.items()}
        env = replace(spec.env, **variant)
        env = replace(env, trace=portable_trace(env.trace))
        label = group_label(variant)
        resolved, workload = resolve_env(env)
        starts = ()
        if spec.training.filtering and not env.starts:
            starts = filter_training_starts(resolved, workload, spec.training.filter_phase1_iterations,
                                            lambda text, label=label: log(f"[{label}] {text}"))
        validation = validation_spec(resolved, workload, spec.training.validation_sequences, spec.ppo.seed)
        table[env_key(env.to_dict(), spec.env_searched)] = PreparedEnv(
            label, dict(resolved.norm), tuple(starts), validation, workload.sha256)
    return table


class FromPrepared:
    """`tune.sample_from` callable: a value prepared for the trial's environment, looked up once Tune set it."""

    def __init__(self, table: dict[str, PreparedEnv], searched: tuple[str, ...], what: str, phase1_iterations: int = 0):
        self.table, self.searched, self.what, self.phase1_iterations = table, searched, what, phase1_iterations

    def __call__(self, config):
        from schedrl.algorithms.train import phase1_episodes

        if "env_config" not in config:  # Tune's generate_variants passes the whole spec, trials their config
            config = config["config"]
        env_config = config["env_config"]
        entry = self.table[env_key({n: env_config[n] for n in self.searched}, self.searched)]
        if self.what == "norm":
            return dict(entry.norm)
        if self.what == "train_starts":
            return list(entry.train_starts)
        if self.what == "validation":
            return json.loads(json.dumps(entry.validation))
        if not entry.train_starts:
            return 0
        path = PPO_CONFIG_PATHS["train_batch_size_per_learner"]
        return phase1_episodes(self.phase1_iterations, _lookup(config, path), env_config["sequence_length"],
                               config["num_env_runners"], config["num_envs_per_env_runner"])


def build_param_space(spec: SweepSpec, table: dict[str, PreparedEnv]) -> dict:
    """The PPO `AlgorithmConfig` as a dict, with the search spaces and the prepared values placed into it."""
    from ray import tune

    from schedrl.algorithms.callbacks import VALIDATION_KEY, SchedulingMetricsCallback
    from schedrl.algorithms.ppo import build_ppo_config
    from schedrl.envs import RLSCHEDULER_ENV_ID
    from schedrl.models.registry import module_spec

    env = replace(spec.env, trace=portable_trace(spec.env.trace))
    config = build_ppo_config(spec.ppo, RLSCHEDULER_ENV_ID, env.to_dict(), spec.model, vector_entry_point=True)
    config = (config.callbacks(SchedulingMetricsCallback)
              .env_runners(num_cpus_per_env_runner=spec.resources.cpus_per_env_runner)
              .resources(num_cpus_for_main_process=spec.resources.cpus_for_main_process))
    space = config.to_dict()
    for key, s in spec.param_space.items():
        section, _, name = key.partition(".")
        if key == "model":
            space["_rl_module_spec"] = s.to_tune(module_spec)
        elif section == "env":
            space["env_config"][name] = s.to_tune(portable_trace if name == "trace" else lambda v: v)
        else:
            _assign(space, PPO_CONFIG_PATHS[name], s.to_tune())
    searched = spec.env_searched
    for what in ("norm", "train_starts", "filter_phase1_episodes"):
        prepared = FromPrepared(table, searched, what, spec.training.filter_phase1_iterations)
        space["env_config"][what] = tune.sample_from(prepared)
    space["learner_config_dict"][VALIDATION_KEY] = tune.sample_from(FromPrepared(table, searched, "validation"))
    return space


def trial_name(trial) -> str:
    """Short trial names and directories (`trial_3a1f2_00001`) instead of Tune's parameter-laden ones."""
    return f"trial_{trial.trial_id}"


def _scheduler_object(spec: SweepSpec):
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler, PopulationBasedTraining

    o = spec.scheduler_options
    if spec.scheduler == "asha":
        return ASHAScheduler(time_attr=o.time_attr, max_t=o.max_t, grace_period=o.grace_period,
                             reduction_factor=o.reduction_factor, brackets=o.brackets)
    if spec.scheduler == "pbt":
        mutations: dict = {}
        for key, s in o.hyperparam_mutations.items():
            value = list(s.values) if s.discrete else s.to_tune()
            _assign(mutations, PPO_CONFIG_PATHS[key[4:]], value)
        return PopulationBasedTraining(time_attr=o.time_attr, perturbation_interval=o.perturbation_interval,
                                       burn_in_period=o.burn_in_period, hyperparam_mutations=mutations,
                                       quantile_fraction=o.quantile_fraction,
                                       resample_probability=o.resample_probability)
    return tune.schedulers.FIFOScheduler()


class SweepProgress(Callback):
    """One line per trial result and one when a trial ends; writes each trial's run record."""

    def __init__(self, spec: SweepSpec, table: dict[str, PreparedEnv], verbose: bool = True):
        self.spec, self.table, self.verbose = spec, table, verbose

    def on_trial_start(self, iteration, trials, trial, **info):
        # `schedrl_run.json` in the trial directory makes its checkpoints loadable (`checkpoint:PATH`)
        from schedrl.algorithms.callbacks import VALIDATION_KEY
        from schedrl.algorithms.train import run_record
        from schedrl.models.checkpoint_policy import RUN_FILE

        config = trial.config
        env = RLSchedulerEnvConfig.from_dict(config["env_config"])
        entry = self.table[env_key(config["env_config"], self.spec.env_searched)]
        model = trial_values(self.spec, config).get("model", self.spec.model)
        record = run_record(env, model, trial_ppo(self.spec, config), config["learner_config_dict"][VALIDATION_KEY],
                            entry.trace_sha256)
        directory = Path(trial.path)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / RUN_FILE).write_text(json.dumps(record, indent=2, default=str))

    def on_trial_result(self, iteration, trials, trial, result, **info):
        from schedrl.algorithms.callbacks import RESULT_KEY, TRAIN_METRIC

        if not self.verbose:
            return
        runners = result.get("env_runners", {})
        steps = runners.get("num_env_steps_sampled", 0)
        dt = result.get("time_this_iter_s", 0) or 1e-9
        metric = trial.config["env_config"]["metric"]
        values = " ".join(f"{k.split('.')[-1]}={_short(v)}" for k, v in trial_values(self.spec, trial.config).items())
        line = (f"{trial.trial_id} [{values or 'fixed'}] iter {result.get('training_iteration', 0):4d} | "
                f"{steps / dt:6.0f} env steps/s | train {metric} {runners.get(TRAIN_METRIC, float('nan')):9.2f}")
        val = result.get(RESULT_KEY, {})
        if val:
            line += f" | validation {val['validation']:9.2f} vs {val['best_heuristic']} {val['best_heuristic_value']:.2f}"
        print(line + f" | {result.get('time_total_s', 0):5.0f}s", flush=True)

    def on_trial_complete(self, iteration, trials, trial, **info):
        if self.verbose:
            print(f"{trial.trial_id} finished after {trial.last_result.get('training_iteration', 0)} iterations",
                  flush=True)

    def on_trial_error(self, iteration, trials, trial, **info):
        print(f"{trial.trial_id} failed: see {trial.path}/error.txt", flush=True)


@dataclass
class SweepRun:
    """What `run_sweep` returns: Tune's results and whether every trial finished."""

    results: Any
    """Tune's `ResultGrid`."""
    experiment: Path
    """The Tune experiment directory."""
    finished: bool
    """False when the sweep was interrupted (resume it with `resume=True`)."""


def run_sweep(spec: SweepSpec, out: str | Path, *, address: str | None = None, resume: bool = False,
              verbose: bool = True) -> SweepRun:
    """Run (or resume) the sweep's Tune experiment under `out/<name>`; connects to `address` if given."""
    import ray
    from ray import tune
    from ray.rllib.algorithms.ppo import PPO

    out = Path(out).expanduser().resolve()
    experiment = out / spec.name
    log = print if verbose else (lambda text: None)
    if resume:
        if not tune.Tuner.can_restore(str(experiment)):
            raise FileNotFoundError(f"nothing to resume in {experiment}")
        recorded = json.loads((out / SWEEP_FILE).read_text())["spec"]
        if recorded != spec.to_data():
            raise SweepError(f"{spec.source} differs from the sweep recorded in {out / SWEEP_FILE}: "
                             "resume with the file the sweep was started with")
        table = _read_table(out)
    elif experiment.exists() and any(experiment.iterdir()):
        raise FileExistsError(f"{experiment} already holds a sweep: use --resume, or another --out")
    check_traces(spec)
    started = not ray.is_initialized()
    if started:
        # Ray Client runs Tune on the cluster: its progress lines reach us only through the driver log
        client = bool(address and address.startswith("ray://"))
        ray.init(address=address, log_to_driver=client, include_dashboard=False)
    try:
        if resume:
            # the param space again: Tune resolves the objects in trials it has not created yet from it
            tuner = tune.Tuner.restore(str(experiment), trainable=PPO, resume_unfinished=True, resume_errored=True,
                                       param_space=build_param_space(spec, table))
        else:
            table = prepare_envs(spec, log)
            _write_sweep_file(spec, table, out)
            stop = {"training_iteration": spec.stop.iterations, "time_total_s": spec.stop.time_budget_s}
            tuner = tune.Tuner(
                PPO, param_space=build_param_space(spec, table),
                tune_config=tune.TuneConfig(
                    num_samples=spec.num_samples, metric=spec.metric, mode=spec.mode,
                    scheduler=_scheduler_object(spec), max_concurrent_trials=spec.resources.max_concurrent_trials,
                    time_budget_s=spec.stop.total_time_budget_s, trial_name_creator=trial_name,
                    trial_dirname_creator=trial_name),
                run_config=tune.RunConfig(
                    name=spec.name, storage_path=str(out), verbose=0,
                    stop={k: v for k, v in stop.items() if v is not None},
                    checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=spec.training.checkpoint_every,
                                                            checkpoint_at_end=True),
                    callbacks=[SweepProgress(spec, table, verbose)]),
            )
        t0 = time.monotonic()
        results = tuner.fit()
        elapsed = time.monotonic() - t0
    finally:
        if started:
            ray.shutdown()
    # an interrupted Tune run returns normally: it shows as trials not yet created or not ended
    ended = results.num_terminated + results.num_errors == len(results)
    budget = spec.stop.total_time_budget_s
    finished = ended and (len(results) == spec.num_trials() or (budget is not None and elapsed >= 0.99 * budget))
    return SweepRun(results, experiment, finished)


def _write_sweep_file(spec: SweepSpec, table: dict[str, PreparedEnv], out: Path) -> None:
    import sys

    import ray

    from schedrl import __version__

    out.mkdir(parents=True, exist_ok=True)
    record = {
        "spec": spec.to_data(),
        "source": spec.source,
        "environments": {key: asdict(entry) for key, entry in table.items()},
        "versions": {"schedrl": __version__, "ray": ray.__version__},
        "command": sys.argv,
    }
    (out / SWEEP_FILE).write_text(json.dumps(record, indent=2, default=str))


def _read_table(out: Path) -> dict[str, PreparedEnv]:
    environments = json.loads((out / SWEEP_FILE).read_text())["environments"]
    return {key: PreparedEnv(**(entry | {"train_starts": tuple(entry["train_starts"])}))
            for key, entry in environments.items()}
