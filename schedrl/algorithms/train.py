"""Train an RLScheduler policy: a one-trial Ray Tune run of PPO with progress, checkpoints and resume.

`train(spec)` is what `schedrl train rlscheduler` runs: it prepares the env config (normalisation
constants, trajectory filtering, validation sequences scored by the heuristics), runs Tune, then
evaluates the final policy against the heuristics on held-out sequences and plots the curve.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from schedrl.algorithms.callbacks import RESULT_KEY, TRAIN_METRIC, VALIDATION_KEY, SchedulingMetricsCallback
from schedrl.algorithms.filtering import filter_starts, phase1_episodes
from schedrl.algorithms.ppo import PPOSettings, build_ppo_config
from schedrl.envs import RLSCHEDULER_ENV_ID
from schedrl.envs.job_features import JobFeatures
from schedrl.envs.rlscheduler import RLSchedulerEnvConfig, load_env_workload, sim_config_for
from schedrl.eval.compare import choose_starts, compare
from schedrl.heuristics import get_heuristic
from schedrl.metrics import METRICS, summarize
from schedrl.models.checkpoint_policy import RUN_FILE
from schedrl.sim import Simulator
from schedrl.workload.workload import Workload

EXPERIMENT = "rlscheduler"
BASELINES = ("fcfs", "sjf", "wfp3", "unicep", "f1")  # RLScheduler Table V's heuristics


@dataclass(frozen=True)
class TrainSpec:
    """One training run of `schedrl train rlscheduler`."""

    env: RLSchedulerEnvConfig
    """Environment (trace, metric, backfill, sequence length...)."""
    ppo: PPOSettings
    """PPO hyperparameters (RLScheduler's by default)."""
    out: str
    """Output directory: Tune results, checkpoints, TensorBoard logs, evaluation table, plots."""
    model: str = "kernel"
    """Policy network: kernel, mlp_v1, mlp_v2, mlp_v3, lenet."""
    iterations: int | None = None
    """Stop after this many training iterations."""
    time_budget_s: float | None = None
    """Stop after this much training time (whichever stop comes first)."""
    filtering: bool = True
    """Trajectory filtering phase 1 (RLScheduler §IV-C)."""
    filter_phase1_iterations: int = 20
    """Iterations trained on filtered sequences before phase 2."""
    validation_sequences: int = 5
    """Sequences (of the training length) scored each iteration, greedy, against the heuristics."""
    eval_starts: tuple[int, ...] = ()
    """Held-out evaluation starts for the final table; empty: `eval_sequences` seeded random ones."""
    eval_sequences: int = 10
    """Number of random evaluation sequences when `eval_starts` is empty."""
    eval_jobs: int = 1024
    """Jobs per evaluation sequence (RLScheduler §V-B: 1,024)."""
    checkpoint_every: int = 5
    """Checkpoint frequency in iterations (and always at the end)."""
    verbose: bool = True
    """Print the progress line and the final table."""
    train_args: tuple[str, ...] = ()
    """The `schedrl train` arguments that made this spec, recorded so that `--resume` can rebuild it."""

    def __post_init__(self) -> None:
        if self.iterations is None and self.time_budget_s is None:
            raise ValueError("give a stop criterion: iterations and/or a time budget")


def _log(spec: TrainSpec, text: str) -> None:
    if spec.verbose:
        print(text, flush=True)


def _progress_callback(spec: TrainSpec, metric: str):
    from ray.tune import Callback

    class ProgressLine(Callback):
        """One line per iteration: steps/s, training metric, validation vs the best heuristic."""

        def on_trial_result(self, iteration, trials, trial, result, **info):
            runners = result.get("env_runners", {})
            steps = runners.get("num_env_steps_sampled", 0)
            dt = result.get("time_this_iter_s", 0) or 1e-9
            train = runners.get(TRAIN_METRIC, float("nan"))
            val = result.get(RESULT_KEY, {})
            line = (f"iter {result.get('training_iteration', 0):4d} | {steps / dt:7.0f} env steps/s | "
                    f"train {metric} {train:10.2f}")
            if "validation" in val:
                line += (f" | validation {val['validation']:10.2f} vs best heuristic "
                         f"{val['best_heuristic']} {val['best_heuristic_value']:.2f}")
            if val.get("continued_envs"):  # envs of restarted/resumed runners that picked up where training was
                line += f" | {val['continued_envs']} envs continued"
            line += f" | {result.get('time_total_s', 0):6.0f}s"
            _log(spec, line)

    return ProgressLine()


def prepare(spec: TrainSpec) -> tuple[RLSchedulerEnvConfig, dict]:
    """Env config with normalisation and filtering filled in, and the validation spec."""
    env, workload = resolve_env(spec.env)
    if spec.filtering and not env.starts:
        kept = filter_training_starts(env, workload, spec.filter_phase1_iterations, lambda text: _log(spec, text))
        phase1 = phase1_episodes(spec.filter_phase1_iterations, spec.ppo.train_batch_size_per_learner,
                                 env.sequence_length, spec.ppo.num_env_runners, spec.ppo.num_envs_per_env_runner)
        env = replace(env, train_starts=kept, filter_phase1_episodes=phase1)
    return env, validation_spec(env, workload, spec.validation_sequences, spec.ppo.seed)


def resolve_env(env: RLSchedulerEnvConfig) -> tuple[RLSchedulerEnvConfig, Workload]:
    """The env config with its trace portable (`portable_trace`) and normalisation constants, and its workload."""
    from schedrl.workload.catalog import portable_trace

    workload = load_env_workload(env)
    norm = env.norm or JobFeatures.from_trace(workload).to_dict()
    return replace(env, trace=portable_trace(env.trace), norm=norm), workload


def filter_training_starts(env: RLSchedulerEnvConfig, workload: Workload, phase1_iterations: int,
                           log=lambda text: None) -> tuple[int, ...]:
    """Trajectory filtering phase 1 (RLScheduler §IV-C): the starts whose SJF score lies in the kept band."""
    t0 = time.perf_counter()
    n_starts = len(workload) - env.sequence_length + 1
    stride = max(1, n_starts // 4000)
    result = filter_starts(workload, env.sequence_length, sim_config_for(env), env.metric, stride)
    log(f"trajectory filtering: SJF scored {int(np.sum(~np.isnan(result.scores)))} sequences in "
        f"{time.perf_counter() - t0:.1f} s; phase 1 keeps {len(result.kept)} with {env.metric} in "
        f"({result.low:.2f}, {result.high:.2f}) for {phase1_iterations} iterations")
    return tuple(int(s) for s in result.kept)


def validation_spec(env: RLSchedulerEnvConfig, workload: Workload, sequences: int, seed: int | None) -> dict:
    """Seeded validation starts and each heuristic's mean on them (what `SchedulingMetricsCallback` compares)."""
    sim_cfg = sim_config_for(env)
    rng = np.random.default_rng(10_000 + (seed or 0))
    val_starts = [int(s) for s in rng.integers(0, len(workload) - env.sequence_length + 1, sequences)]
    heuristics = {}
    for name in BASELINES:
        vals = [summarize(get_heuristic(name).run(Simulator(workload[s:s + env.sequence_length], sim_cfg))).value(env.metric)
                for s in val_starts]
        heuristics[name] = float(np.mean(vals))
    return {"starts": val_starts, "heuristics": heuristics, "lower_is_better": METRICS[env.metric][1]}


def run_record(env: RLSchedulerEnvConfig, model: str, ppo: PPOSettings, validation: dict, workload_sha: str | None) -> dict:
    """What `schedrl_run.json` holds: enough to load a checkpoint as a policy and to reproduce the run."""
    import ray
    import torch

    from schedrl import __version__

    return {
        "agent": "rlscheduler",
        "env_config": env.to_dict(),
        "model": model,
        "ppo": asdict(ppo),
        "validation": validation,
        "trace_sha256": workload_sha,
        "versions": {"schedrl": __version__, "ray": ray.__version__, "torch": torch.__version__,
                     "python": platform.python_version()},
        "command": sys.argv,
    }


def _write_run_file(spec: TrainSpec, env: RLSchedulerEnvConfig, validation: dict, workload_sha: str | None) -> None:
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    record = run_record(env, spec.model, spec.ppo, validation, workload_sha)
    if spec.train_args:
        record["train_args"] = list(spec.train_args)
    (out / RUN_FILE).write_text(json.dumps(record, indent=2))


def train(spec: TrainSpec, resume: bool = False) -> dict:
    """Run (or resume) training; returns paths and the final evaluation."""
    import ray
    from ray import tune

    out = Path(spec.out).expanduser().resolve()
    exp_dir = out / EXPERIMENT
    if resume:
        if not tune.Tuner.can_restore(str(exp_dir)):
            raise FileNotFoundError(f"nothing to resume in {exp_dir}")
        run = json.loads((out / RUN_FILE).read_text())
        env = RLSchedulerEnvConfig.from_dict(run["env_config"])
        validation = run["validation"]
    else:
        if exp_dir.exists() and any(exp_dir.iterdir()):
            raise FileExistsError(f"{exp_dir} already holds a run: use --resume, or another --out")
        env, validation = prepare(spec)
        _write_run_file(spec, env, validation, load_env_workload(env).sha256)

    config = build_ppo_config(spec.ppo, RLSCHEDULER_ENV_ID, env.to_dict(), spec.model, vector_entry_point=True)
    config = config.callbacks(SchedulingMetricsCallback)
    config = config.learners(learner_config_dict={**config.learner_config_dict, VALIDATION_KEY: validation})
    stop = {}
    if spec.iterations is not None:
        stop["training_iteration"] = spec.iterations
    if spec.time_budget_s is not None:
        stop["time_total_s"] = spec.time_budget_s
    if not ray.is_initialized():
        ray.init(log_to_driver=False, include_dashboard=False)
    run_config = tune.RunConfig(
        name=EXPERIMENT, storage_path=str(out), stop=stop, verbose=0,
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=spec.checkpoint_every, checkpoint_at_end=True),
        callbacks=[_progress_callback(spec, env.metric)],
        # a trainer lost with its node restarts from the last checkpoint instead of failing the run
        failure_config=tune.FailureConfig(max_failures=3),
    )
    t0 = time.perf_counter()
    if resume:
        tuner = tune.Tuner.restore(str(exp_dir), trainable=config.algo_class, resume_unfinished=True, resume_errored=True)
    else:
        tuner = tune.Tuner(config.algo_class, param_space=config, run_config=run_config)
    results = tuner.fit()
    wall = time.perf_counter() - t0
    result = results[0]
    if result.error:
        raise RuntimeError(f"training failed: {result.error}")
    checkpoint = result.checkpoint.path
    _log(spec, f"training finished in {wall:.0f} s; checkpoint {checkpoint}")
    summary = {"checkpoint": checkpoint, "wall_s": wall, "out": str(out)}
    summary["curve"] = plot_curve(result.metrics_dataframe, validation, env.metric, out / "training_curve.png")
    summary["evaluation"] = final_evaluation(spec, env, checkpoint, out)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary


def plot_curve(df, validation: dict, metric: str, path: Path) -> str | None:
    """Training and validation metric vs iteration, the heuristics as horizontal lines."""
    if df is None or len(df) == 0:
        return None
    from schedrl.eval.plots import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    it = df["training_iteration"]
    train_col = f"env_runners/{TRAIN_METRIC}"
    if train_col in df:
        ax.plot(it, df[train_col], label=f"training episodes ({metric})", alpha=0.6)
    if f"{RESULT_KEY}/validation" in df:
        ax.plot(it, df[f"{RESULT_KEY}/validation"], label="validation (greedy)", linewidth=2)
    for i, (name, value) in enumerate(sorted(validation["heuristics"].items(), key=lambda kv: kv[1])):
        ax.axhline(value, linestyle="--", linewidth=1, color=f"C{i + 2}", label=f"{name.upper()} (validation)")
    ax.set_xlabel("training iteration")
    ax.set_ylabel(f"avg {metric}")
    ax.set_yscale("log")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def final_evaluation(spec: TrainSpec, env: RLSchedulerEnvConfig, checkpoint: str, out: Path) -> dict:
    """The trained policy next to the heuristics on held-out sequences (RLScheduler Table V layout)."""
    workload = load_env_workload(env)
    length = min(spec.eval_jobs, len(workload))
    starts = choose_starts(workload, length, spec.eval_sequences, 20_000 + (spec.ppo.seed or 0), list(spec.eval_starts) or None)
    policies = list(BASELINES) + [f"checkpoint:{checkpoint}"]
    result = compare(workload, policies, [env.backfill], starts, length, env.metric, sim_config_for(env), progress=False)
    table = result.to_text()
    (out / "evaluation.md").write_text(result.to_markdown() + "\n")
    (out / "evaluation.json").write_text(result.to_json())
    _log(spec, table)
    return result.to_dict()
