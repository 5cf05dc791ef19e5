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

    def on_episode_end(self, *, episode, metrics_logger=None, **kwargs) -> None:
        infos = episode.get_infos()
        last = infos[-1] if len(infos) else {}
        if metrics_logger is not None and INFO_METRIC in last:
            metrics_logger.log_value(TRAIN_METRIC, float(last[INFO_METRIC]), reduce="mean", window=1000)

    def on_train_result(self, *, algorithm, metrics_logger=None, result: dict, **kwargs) -> None:
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
        result[RESULT_KEY] = {
            "validation": float(np.mean(values)),
            "best_heuristic": best,
            "best_heuristic_value": float(heuristics[best]),
            **{f"heuristic_{k}": float(v) for k, v in heuristics.items()},
        }
