"""The one training driver: a `SweepSpec` run as one Ray Tune experiment, for every agent.

`schedrl tune FILE.yaml` runs a sweep; `schedrl train AGENT ...` builds a one-trial `SweepSpec` from
its options (`spec.single_run`) and runs the very same code, then plots its curve and evaluates its
last checkpoint (`train`). Before Tune starts, every distinct environment of the spec is prepared once
through the agent (`Agent.prepare`: normalisation, trajectory filtering / curriculum) and its
validation sequences are scored by the agent's baselines; each trial's RLlib config comes from
`Agent.algorithm_config`, with the shared callbacks (validation, progress, restarts) added here.
Each trial directory gets a `RunRecord` (`schedrl_run.json`), so any checkpoint loads as a policy.
"""

from __future__ import annotations

import json
import os
import math
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from schedrl.agents.checkpoint import RunRecord, versions
from schedrl.training.sweep import SWEEP_FILE, SweepSpec, assign_path, group_label, short_value, trial_settings, trial_values
from schedrl.training.yaml_reader import SweepError



TRIAL_RETRIES = 3
"""Restarts of a failed trial (from its last checkpoint) before Tune gives up on it; each is said (`ProgressLine`)."""

def check_traces(spec: SweepSpec, strict: bool = True) -> list[str]:
    """Problems with the traces the sweep trains or evaluates on: raised (strict) or returned as warnings.

    A dry run on a laptop validates a sweep meant for a cluster where the traces live: there a missing
    trace is a warning naming where it was looked for, not an error.
    """
    from schedrl.workload.catalog import find_entry, resolve_trace
    from schedrl.workload.errors import TraceError

    if not hasattr(spec.env, "trace"):  # an agent whose jobs are not a trace (RLSchert's job table)
        return []
    traces = list(spec.param_space["env.trace"].values) if "env.trace" in spec.param_space else [spec.env.trace]
    traces = list(dict.fromkeys(traces + list(spec.evaluate.traces)))  # each looked up once
    problems = []
    for trace in traces:
        try:
            try:
                resolve_trace(trace)
            except OSError as e:  # a name the file system refuses (too long, say): no such trace either
                name = str(trace) if len(str(trace)) <= 80 else str(trace)[:80] + "..."
                raise TraceError(name, f"not a trace file or catalog name ({e.strerror or e})") from None
        except TraceError as e:
            # a catalog trace this machine lacks is fine for a dry run; an unknown name or a bad file is not
            if strict or find_entry(str(trace)) is None:
                raise
            problems.append(str(e))
    return problems


# ---------------------------------------------------------------- preparation


@dataclass(frozen=True)
class PreparedEnv:
    """One environment of the spec after `Agent.prepare`, with its validation sequences."""

    label: str
    """Group label."""
    env_config: Mapping[str, Any]
    """The prepared env config as a dict."""
    validation: Mapping[str, Any]
    """Validation starts and the baselines' means on them (`SchedulingMetricsCallback`)."""
    trace_sha256: str | None
    """Checksum of the trace, for the run records."""


def env_key(env_config: Mapping, searched: tuple[str, ...]) -> str:
    return json.dumps([env_config[name] for name in searched])


def validation_spec(agent, env, workload, sequences: int, seed: int | None, jobs: int | None = None,
                    evaluation_jobs: int = 1024, scenario=None) -> dict:
    """The validation sequences and each baseline's mean on them: the scenario's fixed ones (`scenario`, a `Scenario`,
    where the run validates on them: `TrainingOptions.validation_from_scenario`), else seeded ones
    (`RunProtocol.validation`: seed `split.validation_seed` of the run's, 10,000 + it) of `jobs` jobs (None: `Judge.validation_length`)."""
    from schedrl.metrics import METRICS

    from schedrl.scenarios.protocol import RunProtocol

    judge = agent.judge(env)
    metric = judge.metric
    ids, length = RunProtocol(judge, scenario).validation(workload, sequences, seed, jobs, evaluation_jobs,
                                                          fixed=scenario is not None)
    heuristics = {k: float(np.mean(v)) for k, v in judge.score_baselines(workload, ids, length).items()} if ids else {}
    return {"starts": ids, "length": length, "metric": metric, "heuristics": heuristics,
            "lower_is_better": METRICS[metric][1]}


def describe_validation(agent, env, workload, validation: dict) -> str:
    """One line on the sequences that choose the checkpoint: how many, how long, from which jobs, and how
    many distinct ones (a zone too short for its sequence length gives the same window repeatedly)."""
    starts, length = validation["starts"], validation["length"]
    text = agent.judge(env).describe_validation(workload, starts, length)
    distinct = len(set(starts))
    if distinct < len(starts):
        text += (f"; only {distinct} distinct (set training.validation_jobs or a larger held-out part, "
                 f"or fewer training.validation_sequences)")
    return text


def prepare_envs(spec: SweepSpec, log=print) -> dict[str, PreparedEnv]:
    """Prepare every environment variant of the spec once, through its agent."""

    agent = spec.agent_impl
    options = asdict(spec.training)
    table = {}
    for variant in spec.env_variants():
        variant = {k: portable_value(spec.env, k, v) for k, v in variant.items()}
        env = replace(spec.env, **variant)
        label = group_label(variant)
        prepared = agent.prepare(env, spec.settings, options, lambda text, label=label: log(f"[{label}] {text}"))
        workload = agent.judge(prepared.env_config).load()
        fixed = spec.scenario if spec.training.validation_from_scenario else None
        validation = validation_spec(agent, prepared.env_config, workload, spec.training.validation_sequences,
                                     getattr(spec.settings, "seed", 0), spec.training.validation_jobs, spec.evaluate.jobs,
                                     fixed)
        validation["every"] = spec.training.validate_every
        if validation["starts"]:
            log(f"[{label}] " + describe_validation(agent, prepared.env_config, workload, validation))
        table[env_key(env.to_dict(), spec.env_searched)] = PreparedEnv(
            label, prepared.env_config.to_dict(), validation, prepared.trace_sha256)
    return table


class FromPrepared:
    """`tune.sample_from` callable: a prepared value for the trial's environment, looked up once Tune set it."""

    def __init__(self, spec: SweepSpec, table: dict[str, PreparedEnv], what: str):
        self.agent_name, self.table, self.searched, self.what = spec.agent, table, spec.env_searched, what

    def __call__(self, config):
        from schedrl.agents import get_agent

        if "env_config" not in config:  # Tune's generate_variants passes the whole spec, trials their config
            config = config["config"]
        entry = self.table[env_key({n: config["env_config"][n] for n in self.searched}, self.searched)]
        if self.what == "validation":
            return json.loads(json.dumps(entry.validation))
        return get_agent(self.agent_name).trial_env_value(self.what, dict(entry.env_config), config)


def portable_value(env, name: str, value):
    """A searched env value as the trials get it (Tune runs each in its own directory): a trace made portable
    (`portable_trace`), and any other field as the env config itself keeps it (`replace` normalises, e.g. a
    `tuned:FILE` base made absolute) and hands it to trials (`portable()` where the config has one: RLSchert's `jobs`
    file). A value the config refuses on its own is passed on as given (the preparation reports it)."""
    from schedrl.workload.catalog import portable_trace

    if name == "trace":
        return portable_trace(value)
    try:
        env = replace(env, **{name: value})
        env = env.portable() if hasattr(env, "portable") else env
    except (TypeError, ValueError):
        return value
    return getattr(env, name)


def portable_env(env):
    """`env` with every field as `portable_value` hands it to trials (relative paths made absolute from here)."""
    from dataclasses import fields

    return replace(env, **{f.name: portable_value(env, f.name, getattr(env, f.name)) for f in fields(env)})


def build_param_space(spec: SweepSpec, table: dict[str, PreparedEnv]) -> dict:
    """The agent's `AlgorithmConfig` as a dict, with the search spaces and the prepared values placed into it."""
    from ray import tune

    from schedrl.agents.trial_keys import AGENT_KEY, VALIDATION_KEY
    from schedrl.training.callbacks import SchedulingMetricsCallback
    from schedrl.workload.catalog import portable_trace

    agent = spec.agent_impl
    env = replace(spec.env, trace=portable_trace(spec.env.trace)) if hasattr(spec.env, "trace") else spec.env
    config = agent.algorithm_config(env, spec.settings, spec.model or None)
    config = (config.callbacks(SchedulingMetricsCallback)
              .env_runners(num_cpus_per_env_runner=spec.resources.cpus_per_env_runner)
              .resources(num_cpus_for_main_process=spec.resources.cpus_for_main_process))
    config = config.learners(learner_config_dict={**config.learner_config_dict, AGENT_KEY: spec.agent})
    space = config.to_dict()
    searchable = agent.searchable()
    for key, s in spec.param_space.items():
        section, _, name = key.partition(".")
        if key == "model":
            space["_rl_module_spec"] = s.to_tune(agent.module_spec)
        elif section == "env":
            space["env_config"][name] = s.to_tune(lambda v, name=name: portable_value(spec.env, name, v))
        else:
            assign_path(space, searchable[name], s.to_tune())
    for name in space["env_config"]:
        if name not in spec.env_searched:
            space["env_config"][name] = tune.sample_from(FromPrepared(spec, table, name))
    space["learner_config_dict"][VALIDATION_KEY] = tune.sample_from(FromPrepared(spec, table, "validation"))
    return space


# ---------------------------------------------------------------- the Tune run


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
        searchable = spec.agent_impl.searchable()
        mutations: dict = {}
        for key, s in o.hyperparam_mutations.items():
            value = list(s.values) if s.discrete else s.to_tune()
            assign_path(mutations, searchable[key.partition(".")[2]], value)
        return PopulationBasedTraining(time_attr=o.time_attr, perturbation_interval=o.perturbation_interval,
                                       burn_in_period=o.burn_in_period, hyperparam_mutations=mutations,
                                       quantile_fraction=o.quantile_fraction,
                                       resample_probability=o.resample_probability)
    return tune.schedulers.FIFOScheduler()


def trial_record(spec: SweepSpec, config: Mapping, table: dict[str, PreparedEnv],
                 train_args: tuple[str, ...] | None = None) -> RunRecord:
    """The run record of one trial, from its resolved config."""
    from schedrl.agents.trial_keys import VALIDATION_KEY

    agent = spec.agent_impl
    env = agent.env_config_class.from_dict(config["env_config"])
    entry = table[env_key(config["env_config"], spec.env_searched)]
    model = trial_values(spec, config).get("model", spec.model)
    return RunRecord(agent=spec.agent, env_config=env.to_dict(),
                     sim_config=agent.judge(env).sim, model=model or None,
                     settings=asdict(trial_settings(spec, config)),
                     validation=config["learner_config_dict"][VALIDATION_KEY], trace_sha256=entry.trace_sha256,
                     versions=versions(), command=tuple(sys.argv), train_args=train_args,
                     scenario=spec.scenario.record() if spec.scenario is not None else None)


def _record_writer(spec: SweepSpec, table: dict[str, PreparedEnv]):
    from ray.tune import Callback

    class RecordWriter(Callback):
        """Writes each trial's run record when it starts, so its checkpoints load as policies."""

        def on_trial_start(self, iteration, trials, trial, **info):
            trial_record(spec, trial.config, table).write(trial.path)

    return RecordWriter()


@dataclass
class SweepRun:
    """What `run_experiment` returns: Tune's results and whether every trial finished."""

    results: Any
    """Tune's `ResultGrid`."""
    experiment: Path
    """The Tune experiment directory."""
    finished: bool
    """False when the run was interrupted (resume it with `resume=True`)."""
    table: dict
    """The prepared environments."""


def run_experiment(spec: SweepSpec, out: str | Path, *, address: str | None = None, resume: bool = False,
                   verbose: bool = True, single: bool = False, train_args: tuple[str, ...] | None = None) -> SweepRun:
    """Run (or resume) the spec's Tune experiment under `out/<name>`; connects to `address` if given."""
    import ray
    from ray import tune

    from schedrl.training.callbacks import ProgressLine
    from schedrl.training.quiet import quiet_ray

    out = Path(out).expanduser().resolve()
    experiment = out / spec.name
    log = (lambda text: print(text, flush=True)) if verbose else (lambda text: None)
    if resume:
        if not tune.Tuner.can_restore(str(experiment)):
            raise FileNotFoundError(f"nothing to resume in {experiment}")
        recorded = json.loads((out / SWEEP_FILE).read_text())["spec"]
        if recorded != spec.to_data():
            raise SweepError(f"{spec.source} differs from the run recorded in {out / SWEEP_FILE}: "
                             "resume with the options the run was started with")
        table = _read_table(out)
    elif experiment.exists() and any(experiment.iterdir()):
        raise FileExistsError(f"{experiment} already holds a run: use --resume, or another --out")
    check_traces(spec)
    if not resume:  # before Ray starts: bad data (a sequence longer than the trace) is refused at once
        table = prepare_envs(spec, log)
        _write_sweep_file(spec, table, out, train_args)
    quiet = quiet_ray()  # the output is schedrl's own lines (schedrl/training/quiet.py)
    started = not ray.is_initialized()
    if started:
        # Ray Client runs Tune on the cluster: its progress lines reach us only through the driver log
        client = bool(address and address.startswith("ray://"))
        ray.init(address=address, log_to_driver=client, include_dashboard=False, **quiet)
    agent = spec.agent_impl
    progress = ProgressLine(
        describe=lambda config: " ".join(f"{k.split('.')[-1]}={short_value(v)}" for k, v in trial_values(spec, config).items()),
        metric_of=lambda config: agent.judge(agent.env_config_class.from_dict(config["env_config"])).metric,
        single=single, log=log, max_failures=TRIAL_RETRIES)
    try:
        algo_class = agent.algorithm_config(spec.env, spec.settings, spec.model or None).algo_class
        if resume:
            # the param space again: Tune resolves the objects in trials it has not created yet from it
            tuner = tune.Tuner.restore(str(experiment), trainable=algo_class, resume_unfinished=True,
                                       resume_errored=True, param_space=build_param_space(spec, table))
        else:
            stop = {"training_iteration": spec.stop.iterations, "time_total_s": spec.stop.time_budget_s}
            tuner = tune.Tuner(
                algo_class, param_space=build_param_space(spec, table),
                tune_config=tune.TuneConfig(
                    num_samples=spec.num_samples, metric=spec.metric, mode=spec.mode,
                    scheduler=_scheduler_object(spec), max_concurrent_trials=spec.resources.max_concurrent_trials,
                    time_budget_s=spec.stop.total_time_budget_s, trial_name_creator=trial_name,
                    trial_dirname_creator=trial_name),
                run_config=tune.RunConfig(
                    name=spec.name, storage_path=str(out), verbose=0,
                    stop={k: v for k, v in stop.items() if v is not None},
                    checkpoint_config=checkpoint_config(spec),
                    # a trainer lost with its node restarts from the last checkpoint instead of failing the run
                    failure_config=tune.FailureConfig(max_failures=TRIAL_RETRIES),
                    callbacks=[progress, _record_writer(spec, table)]),
            )
        t0 = time.monotonic()
        results = tuner.fit()
        elapsed = time.monotonic() - t0
    finally:
        if started:
            ray.shutdown()
    # an interrupted Tune run returns normally: it shows as trials not yet created or not ended
    ended = results.num_terminated + results.num_errors == len(results)
    # a trial Tune created but stopped before its first result (Ctrl-C between trials) counts as terminated
    # without having run
    never_ran = [r for r in results if r.error is None and not (r.metrics or {}).get("training_iteration")]
    budget = spec.stop.total_time_budget_s
    finished = ended and ((len(results) == spec.num_trials() and not never_ran)
                          or (budget is not None and elapsed >= 0.99 * budget))
    return SweepRun(results, experiment, finished, table)


def checkpoint_config(spec: SweepSpec):
    """Every `checkpoint_every` iterations (with validation, only at validated iterations: every
    lcm(checkpoint_every, validate_every)) and at the end; keeps the best `keep_checkpoints` by the greedy
    validation score when validation runs, else the latest ones; the latest always stays."""
    from ray import tune

    from schedrl.agents.trial_keys import VALIDATION_SCORE
    from schedrl.metrics import METRICS

    agent = spec.agent_impl
    scored = spec.training.validation_sequences > 0
    lower = METRICS[agent.judge(spec.env).metric][1]  # the env's objective orders validation (a searched metric too)
    every = spec.training.checkpoint_every
    if scored:  # only validated iterations have a score to rank their checkpoint by
        every = math.lcm(every, spec.training.validate_every)
    return tune.CheckpointConfig(checkpoint_frequency=every, checkpoint_at_end=True,
                                 num_to_keep=spec.training.keep_checkpoints,
                                 checkpoint_score_attribute=VALIDATION_SCORE if scored else None,
                                 checkpoint_score_order="min" if lower else "max")


def _write_sweep_file(spec: SweepSpec, table: dict[str, PreparedEnv], out: Path,
                      train_args: tuple[str, ...] | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "train_args": list(train_args) if train_args is not None else None,
        "cwd": os.getcwd(),  # what `train_args`' relative paths are relative to (`--resume` re-parses them there)
        "spec": spec.to_data(),
        "source": spec.source,
        "environments": {key: asdict(entry) for key, entry in table.items()},
        "versions": versions(),
        "command": sys.argv,
    }
    (out / SWEEP_FILE).write_text(json.dumps(record, indent=2, default=str))


def _read_table(out: Path) -> dict[str, PreparedEnv]:
    environments = json.loads((out / SWEEP_FILE).read_text())["environments"]
    return {key: PreparedEnv(**entry) for key, entry in environments.items()}


# ---------------------------------------------------------------- a single run (`schedrl train`)


def first_result_entries(df, prefix: str) -> dict:
    """The values under `prefix` in the first result that has them, nested again where Tune flattened them
    (`candidates/sjf` -> {"candidates": {"sjf": ...}})."""
    import math

    columns = [c for c in (df.columns if df is not None else ()) if c.startswith(prefix)]
    for _, row in (df[columns].iterrows() if columns else ()):
        values = {c[len(prefix):]: row[c] for c in columns
                  if not (isinstance(row[c], float) and math.isnan(row[c]))}
        if values:
            nested: dict = {}
            for key, v in values.items():
                *parents, leaf = key.split("/")
                node = nested
                for p in parents:
                    node = node.setdefault(p, {})
                node[leaf] = v.item() if hasattr(v, "item") else v
            return nested
    return {}


def selected_checkpoint(spec: SweepSpec, result) -> tuple[str, str]:
    """The trial's checkpoint with the best validation score (the last one without validation), and a
    phrase saying which it is."""
    from schedrl.training.report import best_checkpoint

    picked = best_checkpoint(spec, result)
    if picked is None:
        return result.checkpoint.path, "last checkpoint"
    checkpoint, value, iteration = picked
    return checkpoint.path, f"checkpoint of iteration {iteration} (best validation {value:.2f})"


def train(spec: SweepSpec, out: str | Path, *, resume: bool = False, train_args: tuple[str, ...] | None = None,
          verbose: bool = True, address: str | None = None) -> dict:
    """A one-trial run: the experiment, then its run record in `out`, curve plot and final evaluation."""
    from schedrl.agents.trial_keys import best_heuristic
    from schedrl.training.report import final_evaluation, plot_curve, time_to_beat

    if spec.num_trials() != 1:
        raise ValueError(f"train runs one trial; {spec.source} describes {spec.num_trials()} (use `schedrl tune`)")
    out = Path(out).expanduser().resolve()
    log = (lambda text: print(text, flush=True)) if verbose else (lambda text: None)
    t0 = time.perf_counter()
    run = run_experiment(spec, out, resume=resume, verbose=verbose, single=True, address=address,
                         train_args=train_args)
    wall = time.perf_counter() - t0
    if not run.finished:
        raise KeyboardInterrupt
    result = run.results[0]
    if result.error:
        raise RuntimeError(f"training failed: {result.error}")
    record = trial_record(spec, result.config, run.table, train_args)
    record.write(out)
    checkpoint, selection = selected_checkpoint(spec, result)
    log(f"training finished in {wall:.0f} s; {selection}: {checkpoint}")
    summary = {"checkpoint": checkpoint, "selection": selection, "wall_s": wall, "out": str(out)}
    heuristic = best_heuristic(record.validation)
    if heuristic:
        name, value = heuristic
        beat = time_to_beat(result.metrics_dataframe, spec.metric, spec.mode, value)
        summary["time_to_beat"] = {"heuristic": name, "value": value,
                                   "iteration": beat[0] if beat else None, "seconds": beat[1] if beat else None}
        log(f"validation first beat {name} ({value:.2f}) at iteration {beat[0]}, after {beat[1]:.0f} s "
            "of training" if beat else f"validation never beat {name} ({value:.2f})")
    warm = first_result_entries(result.metrics_dataframe, "schedrl/warm_start/")
    if warm:
        summary["warm_start"] = warm
    from schedrl.training.report import best_checkpoint

    picked = best_checkpoint(spec, result)
    kept = (int(picked[2]), float(picked[1])) if picked is not None else None
    summary["curve"] = plot_curve(result.metrics_dataframe, record.validation, out / "training_curve.png", kept)
    summary["evaluation"] = final_evaluation(spec, record, checkpoint, out, log)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary
