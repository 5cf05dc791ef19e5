"""RLlib callbacks: log each episode's scheduling metric; validate the greedy policy every iteration."""

from __future__ import annotations

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback

from schedrl.envs.rlscheduler import INFO_METRIC, RLSchedulerEnvConfig, load_env_workload, sim_config_for
from schedrl.models.checkpoint_policy import CheckpointPolicy
from schedrl.metrics import summarize
from schedrl.sim import Simulator

TRAIN_METRIC = "schedrl_train_metric"
"""Env-runner metric: the objective's value of each finished training episode (mean per iteration)."""
RESULT_KEY = "schedrl"
"""Result dict key holding validation numbers."""
VALIDATION_KEY = "schedrl_validation"
"""learner_config_dict key: {"starts": [...], "heuristics": {name: value}} set by the training driver."""


class SchedulingMetricsCallback(RLlibCallback):
    """Adds `env_runners/schedrl_train_metric` and `schedrl/{validation, best_heuristic...}` to results."""

    def __init__(self):
        super().__init__()
        self._workload = None
        self._restarts = 0
        self._continued_envs = 0

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
        # envs of resumed or recreated env runners told to continue (this trainer's lifetime)
        result[RESULT_KEY] = {"continued_envs": self._continued_envs}
        spec = algorithm.config.learner_config_dict.get(VALIDATION_KEY)
        if not spec:
            return
        env_config = dict(algorithm.config.env_config)
        cfg = RLSchedulerEnvConfig.from_dict(env_config)
        if self._workload is None:
            self._workload = load_env_workload(cfg)
        module = algorithm.get_module()
        if module is None:
            return
        policy = CheckpointPolicy(module, env_config)
        sim_cfg = sim_config_for(cfg)
        values = []
        for start in spec["starts"]:
            seq = self._workload[start:start + cfg.sequence_length]
            values.append(summarize(Simulator(seq, sim_cfg).run(policy)).value(cfg.metric))
        heuristics = spec["heuristics"]
        lower = spec["lower_is_better"]
        best = (min if lower else max)(heuristics, key=heuristics.get)
        result[RESULT_KEY].update({
            "validation": float(np.mean(values)),
            "best_heuristic": best,
            "best_heuristic_value": float(heuristics[best]),
            **{f"heuristic_{k}": float(v) for k, v in heuristics.items()},
        })


def continue_env_runners(algorithm, runner_ids: list[int] | None, generation: int) -> int:
    """Tell fresh env runners how far training got, so they neither replay nor re-filter episodes.

    Env runners seed their environments from the config's seed and their index alone, so a runner
    recreated after a crash, or every runner of a resumed run, would draw again the episode starts
    trained on from iteration 1 (and rerun trajectory-filtering phase 1). Their envs get the
    episodes each has drawn by now and a salt of (iteration, generation) for every later seed.
    `runner_ids=None` means every runner, the local one included. Returns the number of envs reached.
    """
    from schedrl.algorithms.filtering import phase1_episodes

    config = algorithm.config
    iteration = int(algorithm.iteration)
    if iteration == 0 and generation == 0:
        return 0
    episodes = phase1_episodes(iteration, config.train_batch_size_per_learner,
                               int(config.env_config.get("sequence_length", 256)),
                               config.num_env_runners, config.num_envs_per_env_runner)
    salt = (iteration, generation)

    def resume_envs(runner) -> int:
        env = getattr(getattr(runner, "env", None), "unwrapped", None)
        if getattr(env, "continue_training", None) is None:
            return 0
        env.continue_training(episodes, salt)
        return env.num_envs

    return sum(algorithm.env_runner_group.foreach_env_runner(resume_envs, remote_worker_ids=runner_ids,
                                                             local_env_runner=runner_ids is None))
