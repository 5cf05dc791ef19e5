"""A sweep (or a single run) as data: `SweepSpec`, its sections, and what it means for Tune.

`SweepSpec` holds the agent's env config and settings (fixed values), every search space, the trial
scheduler, stopping, resources, training and evaluation options, each section a frozen dataclass below.
Its semantics are here: how many trials a grid makes, which environments are prepared, the trials a dry
run lists (`expand_trials`), and how a trial's searched values are read back from its resolved config.
A sweep file becomes a `SweepSpec` through `sweep_file.py`; `schedrl train` builds the one-trial spec
from its options (`single_run`), so a run is a one-trial sweep through `driver.py`.
`tune_configs/README.md` describes every key.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from schedrl.duration import parse_duration
from schedrl.metrics import METRICS
from schedrl.training.yaml_reader import SearchSpace

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
    validation_from_scenario: bool = False
    """Set by `--scenario` / a sweep file's `scenario:` when the run sets neither `validation_sequences` nor
    `validation_jobs` (not a YAML key): validate on the scenario's fixed validation sequences (the same for every
    seed), resolved where the trace is loaded (`training.driver.validation_spec`)."""

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
    from_scenario: bool = False
    """Set by a sweep file's `scenario:` (not a YAML key): evaluate on the scenario's fixed evaluation sequences,
    resolved where the trace is loaded (`scenarios.protocol.RunProtocol.evaluation_sequences`), so a file validates
    without its trace."""

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
    scenario: Any = None
    """The scenario the runs train on (a `schedrl.scenarios.Scenario`, resolved once where the options or the file are
    read and passed down as it is), or None; its `record()` goes into `sweep.json` and every run record."""

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
            elif f.name == "scenario":
                value = value.record() if value is not None else None
            elif hasattr(value, "__dataclass_fields__"):
                value = asdict(value)
            if f.name != "source":
                data[f.name] = value
        return json.loads(json.dumps(data, default=dict))


def single_run(agent: str, env, settings, model: str | None, stop: StopSpec, training: TrainingOptions,
               evaluate: EvaluateSpec, name: str | None = None, resources: ResourceSpec | None = None) -> SweepSpec:
    """The one-trial spec of a `schedrl train` run (nothing searched), validated like a sweep file's."""
    from schedrl.agents import get_agent

    impl = get_agent(agent)
    metric = impl.judge(env).metric
    return SweepSpec(name=name or agent, agent=agent, env=env, settings=settings, model=model or "", param_space={},
                     scheduler="none", scheduler_options=None, stop=stop, resources=resources or ResourceSpec(),
                     training=training, evaluate=evaluate, num_samples=1, metric="schedrl/validation",
                     mode="min" if METRICS[metric][1] else "max", source=f"schedrl train {agent}")


# ---------------------------------------------------------------- expansion (dry run) and trial labels


def expand_trials(spec: SweepSpec, seed: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
    """The trials Tune will create: `num_samples` x the grid, random spaces drawn here with `seed`; with `limit`, only
    the first `limit` of them (the rest never expanded)."""
    import itertools

    import numpy as np
    from ray.tune.search.variant_generator import generate_variants

    if not spec.param_space:
        return [{} for _ in range(min(spec.num_samples, limit if limit is not None else spec.num_samples))]
    unresolved = {"config": {k: s.to_tune() for k, s in spec.param_space.items()}}
    rng = np.random.default_rng(seed)
    trials: list[dict[str, Any]] = []
    for _ in range(spec.num_samples):
        left = None if limit is None else limit - len(trials)
        if left is not None and left <= 0:
            break
        for _, resolved in itertools.islice(generate_variants(unresolved, random_state=rng), left):
            trials.append({k: resolved["config"][k] for k in spec.param_space})
    return trials


DRY_RUN_ROWS = 200
"""Trials a dry run lists one per line (the rest are counted, not expanded)."""


def _space_text(space) -> str:
    """A searched space as the dry run shows it: a long grid or choice by its first values and its size."""
    if space.discrete and len(space.values) > 12:
        shown = ", ".join(str(v) for v in space.values[:6])
        return f"{space.kind}({shown}, ... {space.values[-1]}: {len(space.values):,} values)"
    return str(space)


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


def dry_run_text(spec) -> str:
    """What `schedrl tune --dry-run` prints: the sweep in words, then one line per trial."""
    lines = [f"{spec.source}: sweep {spec.name!r} ({spec.agent}): {spec.num_trials()} trials = "
             f"grid of {spec.grid_size()} x {spec.num_samples} sample(s)"]
    fixed_env = {k: v for k, v in spec.env.to_dict().items()
                 if f"env.{k}" not in spec.param_space and v not in ([], {}, 0)}
    lines.append("  fixed: " + " ".join(f"{k}={v}" for k, v in fixed_env.items())
                 + ("" if "model" in spec.param_space or not spec.model else f" model={spec.model}"))
    if spec.param_space:
        lines.append("  searched: " + "; ".join(f"{k} {_space_text(s)}" for k, s in spec.param_space.items()))
    options = spec.scheduler_options
    lines.append(f"  scheduler: {spec.scheduler}" + (" " + _options_text(options) if options else "")
                 + f"; metric {spec.metric} ({spec.mode})")
    stop = [f"{spec.stop.iterations} iterations" if spec.stop.iterations else "",
            f"{spec.stop.time_budget_s:.0f} s per trial" if spec.stop.time_budget else "",
            f"{spec.stop.total_time_budget_s:.0f} s in all" if spec.stop.total_time_budget else ""]
    cpus = (spec.resources.cpus_for_main_process
            + getattr(spec.settings, "num_env_runners", 0) * spec.resources.cpus_per_env_runner)
    lines.append(f"  stop: {', '.join(s for s in stop if s)}; each trial reserves {cpus:g} CPU(s)"
                 + (f", at most {spec.resources.max_concurrent_trials} at once" if spec.resources.max_concurrent_trials else ""))
    groups = [group_label(v) for v in spec.env_variants()]
    lines.append(f"  environments prepared before training: {len(groups)} ({', '.join(groups)})")
    if spec.evaluate.enabled:
        on = ", ".join(spec.evaluate.traces) or "its training trace"
        which = ("every trial's best-validation checkpoint (per trial, then mean, 95% CI, worst, trials beating the "
                 "best heuristic)" if spec.evaluate.each_trial else "best checkpoint of each group")
        lines.append(f"  evaluation: {which} on {on}, "
                     f"{len(spec.evaluate.starts) or spec.evaluate.sequences} sequences x {spec.evaluate.jobs} jobs")
    trials = expand_trials(spec, limit=DRY_RUN_ROWS)
    keys = list(spec.param_space)
    drawn = {k for k, s in spec.param_space.items() if not s.discrete}
    header = ["trial"] + [k + ("~" if k in drawn else "") for k in keys]
    rows = [[str(i + 1)] + [cell(t[k]) for k in keys] for i, t in enumerate(trials)]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines.append("")
    lines += [("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths))).rstrip() for r in [header] + rows]
    if spec.num_trials() > len(trials):
        lines.append(f"  ... and {spec.num_trials() - len(trials):,} more trials (the first {len(trials)} listed)")
    if drawn:
        lines.append("  ~ drawn at random: each run draws its own values")
    if not spec.param_space and spec.num_samples == 1:
        lines.append("  (nothing searched: one trial)")
    return "\n".join(lines)


def _options_text(options) -> str:
    items = vars(options).items()
    return " ".join(f"{k}={({m: str(s) for m, s in v.items()} if isinstance(v, dict) else v)}" for k, v in items)


def cell(value) -> str:
    """A searched value in a table: floats to 4 significant digits."""
    return f"{value:.4g}" if isinstance(value, float) else str(value)
