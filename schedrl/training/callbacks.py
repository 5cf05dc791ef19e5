"""RLlib and Tune callbacks every agent's training shares.

`SchedulingMetricsCallback` (RLlib) logs each finished training episode's objective and scores the
greedy policy on the validation sequences every iteration, next to the agent's baselines; it reaches
the agent only through the contract (`policy_from_module`, `sim_config`, `load_workload`).
`fail_without_env_runners` ends a run whose env runners are all dead for good. `ProgressLine`
(Tune) prints one line per trial result, for `schedrl train` and `schedrl tune` alike.
"""

from __future__ import annotations

import math
import time

import numpy as np
import ray
from ray.exceptions import ActorDiedError
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.tune import Callback

from schedrl.agents.base import WarmStart

# the keys (defined beside the agent contract, which reads them too), importable from here as before
from schedrl.agents.trial_keys import (AGENT_KEY, INFO_METRIC, RESULT_KEY, TRAIN_METRIC,  # noqa: F401
                                       VALIDATION_KEY, VALIDATION_SCORE, WARM_START_RESULT, best_heuristic)


def _agent_of(algorithm):
    from schedrl.agents import get_agent

    return get_agent(algorithm.config.learner_config_dict.get(AGENT_KEY, "rlscheduler"))


class SchedulingMetricsCallback(RLlibCallback):
    """Adds `env_runners/schedrl_train_metric` and `schedrl/{validation, best_heuristic...}` to results."""

    def __init__(self):
        super().__init__()
        self._workload = None
        self._restarts = 0
        self._continued_envs = 0
        self._warm_start = None

    def on_algorithm_init(self, *, algorithm, metrics_logger=None, **kwargs) -> None:
        # a warm start (behaviour cloning before the first sampling) when the agent's settings ask for one;
        # not when Tune is about to restore this trial from its own checkpoint (a resumed or restarted run),
        # whose weights and training time already include it
        if restoring(algorithm):
            return
        t0 = time.perf_counter()
        agent = _agent_of(algorithm)
        self._warm_start = agent.warm_start(algorithm) if isinstance(agent, WarmStart) else None
        if self._warm_start:
            # the warm start is training: it counts in Tune's `time_total_s` (so a time budget includes it), and
            # through it in every checkpoint, which a resumed run restores its clock from
            algorithm._time_total += time.perf_counter() - t0

    def on_checkpoint_loaded(self, *, algorithm, **kwargs) -> None:
        # a resumed run: its env runners were built afresh with the run's original seeds
        self._continued_envs += continue_env_runners(algorithm, runner_ids=None, generation=0)

    def on_env_runners_recreated(self, *, algorithm, env_runner_group, env_runner_indices, is_evaluation,
                                 **kwargs) -> None:
        # restarted after a failure, with the seed of the runner they replace
        if not is_evaluation:
            self._restarts += 1
            self._continued_envs += continue_env_runners(algorithm, runner_ids=list(env_runner_indices),
                                                         generation=self._restarts)

    def on_episode_end(self, *, episode, metrics_logger=None, **kwargs) -> None:
        infos = episode.get_infos()
        last = infos[-1] if len(infos) else {}
        if metrics_logger is not None and INFO_METRIC in last:
            metrics_logger.log_value(TRAIN_METRIC, float(last[INFO_METRIC]), reduce="mean", window=1000)

    def on_train_result(self, *, algorithm, metrics_logger=None, result: dict, **kwargs) -> None:
        fail_without_env_runners(algorithm)
        # envs of resumed or recreated env runners told to continue (this trainer's lifetime)
        result[RESULT_KEY] = {"continued_envs": self._continued_envs}
        if self._warm_start:  # reported once, with the first result
            result[RESULT_KEY][WARM_START_RESULT] = loggable(self._warm_start)
            self._warm_start = None
        spec = algorithm.config.learner_config_dict.get(VALIDATION_KEY)
        if not spec:
            return
        best, best_value = best_heuristic(spec)
        result[RESULT_KEY].update({"best_heuristic": best, "best_heuristic_value": best_value,
                                   **{f"heuristic_{k}": float(v) for k, v in spec["heuristics"].items()}})
        if not validation_due(result.get("training_iteration", algorithm.iteration), int(spec.get("every", 1))):
            # NaN, not absent: Tune's metric must be in every result, and its checkpoint manager ranks a
            # NaN score below every number (no checkpoint is written here unless it is the last)
            result[VALIDATION_SCORE] = result[RESULT_KEY]["validation"] = float("nan")
            return
        agent = _agent_of(algorithm)
        env_config = dict(algorithm.config.env_config)
        judge = agent.judge(agent.env_config_class.from_dict(env_config))
        if self._workload is None:
            self._workload = judge.load()
        module = algorithm.get_module()
        if module is None:
            return
        policy = agent.policy_from_module(module, env_config)
        length = int(spec.get("length", judge.sequence_length))
        values = judge.score_policy(policy, self._workload, spec["starts"], length)
        result[VALIDATION_SCORE] = result[RESULT_KEY]["validation"] = float(np.mean(values))


def validation_due(iteration: int, every: int) -> bool:
    """Validation runs at the first iteration and every `every`-th (`training.validate_every`)."""
    return every <= 1 or iteration <= 1 or iteration % every == 0


def restoring(algorithm) -> bool:
    """True when the algorithm's Tune trial directory already holds checkpoints: Tune builds the trainable and
    then restores the latest one (`--resume`, or a trial restarted after a failure). False outside Tune."""
    storage = getattr(algorithm, "_storage", None)
    if storage is None:
        return False
    try:
        from pyarrow.fs import FileSelector, FileType

        infos = storage.storage_filesystem.get_file_info(FileSelector(storage.trial_fs_path, allow_not_found=True))
    except Exception:  # unreadable storage: take it as a fresh trial (the warm start runs, as before)
        return False
    return any(i.type == FileType.Directory and i.base_name.startswith("checkpoint_") for i in infos)


def continue_env_runners(algorithm, runner_ids: list[int] | None, generation: int) -> int:
    """Tell fresh env runners how far training got, so they neither replay nor re-filter episodes.

    Env runners seed their environments from the config's seed and their index alone, so a runner
    recreated after a crash, or every runner of a resumed run, would draw again the episodes trained
    on from iteration 1 (and rerun a filtering or curriculum phase). Their envs get the episodes each
    has drawn by now (`Agent.episodes_drawn`) and a salt of (iteration, generation) for every later
    seed. `runner_ids=None` means every runner, the local one included. Returns the envs reached.
    """
    iteration = int(algorithm.iteration)
    if iteration == 0 and generation == 0:
        return 0
    episodes = _agent_of(algorithm).episodes_drawn(algorithm.config, iteration)
    salt = (iteration, generation)

    def resume_envs(runner) -> int:
        env = getattr(getattr(runner, "env", None), "unwrapped", None)
        if getattr(env, "continue_training", None) is None:
            return 0
        env.continue_training(episodes, salt)
        return getattr(env, "num_envs", 1)

    return sum(algorithm.env_runner_group.foreach_env_runner(resume_envs, remote_worker_ids=runner_ids,
                                                             local_env_runner=runner_ids is None))


def fail_without_env_runners(algorithm, **kwargs) -> None:
    """Raise once every remote env runner is dead for good.

    RLlib 2.60 keeps iterating when none of its env runners can come back (restarts used up or
    switched off): the remaining iterations sample and train nothing and the run "finishes".
    Ray answers a ping to a restarting actor with ``ActorUnavailableError`` and to a dead one
    with ``ActorDiedError``; only if two rounds of pings, a second apart, all say dead is this an
    error (a runner dying again mid-ping is then seen restarting the second time).
    """
    group = algorithm.env_runner_group
    if group is None or group.num_remote_env_runners() == 0 or group.num_healthy_remote_env_runners() > 0:
        return
    actors = list(group._worker_manager.actors().values())
    timeout = algorithm.config.env_runner_health_probe_timeout_s
    for attempt in range(2):
        if attempt:
            time.sleep(1.0)
        for actor in actors:
            try:
                ray.get(actor.ping.remote(), timeout=timeout)
                return
            except ActorDiedError:
                continue
            except Exception:  # restarting, slow or unreachable for now: not known to be dead
                return
    config = algorithm.config
    raise RuntimeError(
        f"all {len(actors)} env runners died and cannot be restarted (restart_failed_env_runners="
        f"{config.restart_failed_env_runners}, max_env_runner_restarts={config.max_num_env_runner_restarts} "
        "each); training would go on without samples"
    )


def loggable(report: dict) -> dict:
    """A warm-start report as Tune's loggers take it: a list (RLSchert's DAgger rounds) becomes a dict keyed
    "1", "2", ... (Tune flattens dicts into scalar columns; TensorBoard refuses a list with a warning)."""
    return {k: ({str(i + 1): v for i, v in enumerate(value)} if isinstance(value, list) else value)
            for k, value in report.items()}


def describe_warm_start(w: dict) -> str:
    """One line on a warm start (`Agent.warm_start`'s report)."""
    chosen = ""
    if w.get("candidates"):
        chosen = " (auto: " + ", ".join(f"{k} {v:.2f}" for k, v in w["candidates"].items()) + ")"
    if w.get("clone_values"):  # auto: several clones, the best kept
        chosen += (f", clones scored on the {w.get('clones_scored_on', 'demonstration')} sequences: "
                   + ", ".join(f"{k} {v:.2f} ({w['clone_agreements'][k]:.0%} agreement)" for k, v in w["clone_values"].items())
                   + f"; kept {w['teacher']}")
    if w.get("rounds"):  # DAgger (RLSchert): how the clone did on the sequences it drove itself, round by round
        rounds = list(w["rounds"].values()) if isinstance(w["rounds"], dict) else w["rounds"]
        chosen += (f" with {len(rounds)} DAgger rounds (the clone's own sequences: average "
                   + " -> ".join(f"{r['slowdown']:.2f}" for r in rounds)
                   + f", {sum(r['cut'] for r in rounds)} cut)")
    return (f"warm start: cloned {w['teacher']}{chosen} from {w['decisions']} decisions of {w['episodes']} training "
            f"sequences in {w['demonstration_seconds'] + w['clone_seconds']:.0f} s: greedy agreement "
            f"{w['agreement']:.1%} (untrained {w['agreement_before']:.1%}), teacher's mean value {w['teacher_value']:.2f}")


class ProgressLine(Callback):
    """One line per trial result (steps/s, training metric, validation vs the best baseline), and one when a
    trial ends or fails; `single` leaves out the trial id and searched values (a `schedrl train` run)."""

    def __init__(self, describe, metric_of, single: bool = False, log=print, max_failures: int | None = None):
        self.describe, self.metric_of, self.single, self.log = describe, metric_of, single, log
        self.max_failures = max_failures
        """Tune's retries per trial (for the line a restarted trial prints)."""
        self._warm_lines: dict[str, int] = {}
        """Bytes of each trial's warm-start log already printed (`on_step_end`)."""

    def on_trial_result(self, iteration, trials, trial, result, **info):
        self.warm_start_lines([trial])  # its last lines before the first iteration's
        runners = result.get("env_runners", {})
        steps = runners.get("num_env_steps_sampled", 0)
        dt = result.get("time_this_iter_s", 0) or 1e-9
        metric = self.metric_of(trial.config)
        head = "" if self.single else f"{trial.trial_id} [{self.describe(trial.config) or 'fixed'}] "
        train = runners.get(TRAIN_METRIC, float("nan"))
        # "-": no training episode ended in this iteration (many envs, each sampling a fraction of an episode)
        train_text = f"{train:10.2f}" if isinstance(train, (int, float)) and math.isfinite(train) else f"{'-':>10}"
        line = (f"{head}iter {result.get('training_iteration', 0):4d} | {steps / dt:7.0f} env steps/s | "
                f"train {metric} {train_text}")
        val = result.get(RESULT_KEY, {})
        if WARM_START_RESULT in val:
            self.log(head + describe_warm_start(val[WARM_START_RESULT]))
        if "validation" in val and math.isfinite(val["validation"]):
            line += (f" | validation {val['validation']:10.2f} vs best heuristic "
                     f"{val['best_heuristic']} {val['best_heuristic_value']:.2f}")
        if val.get("continued_envs"):  # envs of restarted/resumed runners that picked up where training was
            line += f" | {val['continued_envs']} envs continued"
        self.log(line + f" | {result.get('time_total_s', 0):6.0f}s")

    def on_step_end(self, iteration, trials, **info):
        self.warm_start_lines(trials)

    def warm_start_lines(self, trials) -> None:
        """Print a warm start's progress lines (`trial_keys.WARM_START_LOG` in the trial's directory) as they come."""
        from pathlib import Path

        from schedrl.agents.trial_keys import WARM_START_LOG

        seen = self._warm_lines
        for trial in trials:
            where = getattr(trial, "path", None)
            if where is None:
                continue
            path = Path(where) / WARM_START_LOG
            try:
                with path.open("rb") as f:
                    f.seek(seen.get(trial.trial_id, 0))
                    data = f.read()
            except OSError:
                continue
            done = data.rfind(b"\n") + 1  # whole lines only; a line being written waits for the next step
            seen[trial.trial_id] = seen.get(trial.trial_id, 0) + done
            head = "" if self.single else f"{trial.trial_id} "
            for line in data[:done].decode("utf-8", "replace").splitlines():
                self.log(head + line)

    def on_trial_complete(self, iteration, trials, trial, **info):
        if not self.single:
            self.log(f"{trial.trial_id} finished after {trial.last_result.get('training_iteration', 0)} iterations")

    def on_trial_error(self, iteration, trials, trial, **info):
        self.log(f"{trial.trial_id} failed: see {trial.path}/error.txt")

    def on_trial_recover(self, iteration, trials, trial, **info):
        """A trial that failed and that Tune restarts (`FailureConfig.max_failures`): said, not silent."""
        where = getattr(trial, "error_file", None) or f"{trial.path}/error.txt"
        failures = getattr(trial, "num_failures", None)
        count = f" (failure {failures} of at most {self.max_failures})" if failures and self.max_failures else ""
        self.log(f"{'' if self.single else trial.trial_id + ' '}failed{count}; restarting it from its last "
                 f"checkpoint: see {where}")
