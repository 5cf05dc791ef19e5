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

import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ray.tune import Callback

from schedrl.algorithms.sweep_spec import (
    PPO_CONFIG_PATHS,
    SWEEP_FILE,
    SweepError,
    SweepSpec,
    assign_path,
    group_label,
    lookup_path,
    short_value,
    trial_ppo,
    trial_values,
)
from schedrl.envs.rlscheduler_config import RLSchedulerEnvConfig
from schedrl.workload.catalog import portable_trace


def check_traces(spec: SweepSpec) -> list[str]:
    """Every trace the sweep trains or evaluates on, resolved now (a clear error if one is missing)."""
    from schedrl.workload.catalog import resolve_trace

    traces = list(spec.param_space["env.trace"].values) if "env.trace" in spec.param_space else [spec.env.trace]
    traces += [t for t in spec.evaluate.traces if t not in traces]
    for trace in traces:
        resolve_trace(trace)
    return traces


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
    from schedrl.algorithms.train import (
        filter_training_starts,
        resolve_env,
        validation_spec,
    )

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
        from schedrl.algorithms.filtering import phase1_episodes

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
        return phase1_episodes(self.phase1_iterations, lookup_path(config, path), env_config["sequence_length"],
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
            assign_path(space, PPO_CONFIG_PATHS[name], s.to_tune())
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
            assign_path(mutations, PPO_CONFIG_PATHS[key[4:]], value)
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
        values = " ".join(f"{k.split('.')[-1]}={short_value(v)}" for k, v in trial_values(self.spec, trial.config).items())
        line = (f"{trial.trial_id} [{values or 'fixed'}] iter {result.get('training_iteration', 0):4d} | "
                f"{steps / dt:6.0f} env steps/s | train {metric} {runners.get(TRAIN_METRIC, float('nan')):9.2f}")
        val = result.get(RESULT_KEY, {})
        if "validation" in val:
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
