"""`schedrl/RLScheduler-v0`: SchedGym (RLScheduler, SC'20) as a view over the schedrl simulator."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from schedrl.agents.rlscheduler.observation import FEATURES, JobFeatures, ObservationBuilder, n_features
from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE, OBS_ACTION_MASK, OBS_JOBS
from schedrl.envs.episodes import EpisodeSource, Phase, training_end
from schedrl.envs.masked_discrete import MaskedDiscrete
from schedrl.envs.simulator_env import SimulatorEnv
from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
from schedrl.agents.steps import checked_action
from schedrl.metrics import BSLD_TAU, METRICS, summarize
from schedrl.sim import DECIDE_PICK, FINISHED, SimConfig, Simulator
from schedrl.sim.state import NOW
from schedrl.workload.cleaning import CleaningRules
from schedrl.workload.workload import Workload

# info keys
INFO_METRIC = "metric_value"
INFO_START = "start"
INFO_JOB = "job"


def sim_config_for(config: RLSchedulerEnvConfig) -> SimConfig:
    """Pick-and-wait simulator semantics for an env config (its `preset`, see `SimConfig.preset`)."""
    return SimConfig.preset(config.preset, discipline="pick-and-wait", backfill=config.backfill, **config.slurm)


def load_env_workload(config: RLSchedulerEnvConfig) -> Workload:
    from schedrl.workload.catalog import load_trace

    return load_trace(config.trace, CleaningRules.preset(config.cleaning))


class RLSchedulerEnv(SimulatorEnv):
    """Pick the next job to run, one decision at a time, and be rewarded by the schedule's quality.

    ## Description
    The RLScheduler environment (Zhang et al., SC'20, §IV): a pick-and-wait view over the schedrl
    simulator. At every decision point the agent picks one of the visible waiting jobs; if it does not
    fit, the simulator holds it, advances time (backfilling if enabled) until it fits and starts it.

    ## Action Space
    `Discrete(128)` (a `MaskedDiscrete` whose `sample()` draws valid slots): the slot of the visible job to run
    next. Stepping a masked slot raises `ValueError`.

    ## Observation Space
    `Dict`:

    | key | shape | content |
    |---|---|---|
    | `jobs` | (128, F) float32 in [0, 1] | per visible job: wait, requested time, requested procs, user, group, app ids, can-start-now flag, free procs share; per extra resource its request and free share; per key feature 1 / (1 + the job's rank under that heuristic) (F = 8 + 2 (R - 1) + K) |
    | `action_mask` | (128,) float32 | 1 for slots holding a waiting job |

    Visible jobs are the first 128 of the queue in FCFS order (paper §IV-B); rows past them are zero.

    ## Rewards
    0 until the sequence is scheduled; then the objective: -avg bsld, -avg wait, -avg turnaround,
    -avg slowdown, +utilisation, or -max over users of their avg bsld (`metric`). With
    `reward_baseline="sjf"` (or another heuristic) the objective relative to that heuristic on the same
    sequence instead, (sjf - value) / sjf (or (value - sjf) / sjf for utilisation). `info["metric_value"]` is the raw value.
    With `dense_reward` (bsld, wait, turnaround, slowdown) the same episode return is paid as it accrues: each
    step pays minus the waiting cost accrued since the previous decision, sum over waiting jobs of
    elapsed wait x the job's weight (bsld: 1 / max(run, 10 s); slowdown: 1 / max(run, 1 s); wait,
    turnaround: 1), over the job count (and the baseline's value); the last step pays the rest, so the
    rewards of an episode sum to its final-reward return exactly.

    ## Starting State
    A sequence of `sequence_length` consecutive jobs from a random start (seeded by `reset(seed)`) inside
    the first `train_fraction` of the trace,
    from `train_starts` during trajectory-filtering phase 1, or the next of the fixed `starts`.
    `continue_training` makes an env rebuilt mid-run (resume, restarted runner) pick up there.

    ## Episode End
    Terminates when every job of the sequence has completed; never truncates. Stepping after that
    raises `RuntimeError` ("the episode is over: call reset()").

    ## Arguments
    The fields of `RLSchedulerEnvConfig` (unknown keys are rejected), as keyword arguments
    (`gym.make(id, trace="lublin_256", backfill="easy")`) or as a `config=` mapping. `render_mode`:
    `"ansi"` (text: resource use, running and waiting jobs) or `"rgb_array"` (a small picture), see
    `schedrl.envs.render`.

    ## Version History
    - v0: initial version.
    """

    def __init__(self, config: dict[str, Any] | RLSchedulerEnvConfig | None = None, workload: Workload | None = None,
                 render_mode: str | None = None, **settings: Any):
        self._configure(RLSchedulerEnvConfig, config, settings, render_mode)
        self.workload = workload if workload is not None else load_env_workload(self.config)
        if len(self.workload) < self.config.sequence_length:
            raise ValueError(f"trace {self.workload.name!r} has {len(self.workload)} jobs, fewer than "
                             f"sequence_length={self.config.sequence_length}")
        self.sim_config = sim_config_for(self.config)
        self.norm = JobFeatures.from_dict(self.config.norm) if self.config.norm else JobFeatures.from_trace(self.workload)
        self.n_resources = 1 + len(self.workload.resources)
        f = n_features(self.n_resources, len(self.config.key_features))
        self.observation_space = gym.spaces.Dict({
            OBS_JOBS: gym.spaces.Box(0.0, 1.0, shape=(MAX_OBSV_SIZE, f), dtype=np.float32),
            OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, shape=(MAX_OBSV_SIZE,), dtype=np.float32),
        })
        self.action_space = MaskedDiscrete(MAX_OBSV_SIZE)
        cfg = self.config
        filtered = (Phase("filtered", cfg.filter_phase1_episodes, cfg.train_starts),) \
            if cfg.train_starts and cfg.filter_phase1_episodes > 0 else ()
        self.episodes = EpisodeSource(self.workload, cfg.sequence_length, fixed=cfg.starts, phases=(*filtered, Phase("real")),
                                      hi=training_end(cfg.train_fraction, len(self.workload)))
        """Where episodes come from: the fixed `starts`, else trajectory-filtering phase 1, then random windows."""
        self.sim: Simulator | None = None
        self._visible = np.zeros(0, dtype=np.int64)
        self._mask = np.zeros(MAX_OBSV_SIZE, dtype=np.float32)

    @property
    def feature_names(self) -> tuple[str, ...]:
        extra = tuple(f"{k}_{kind}" for k in sorted(self.workload.resources) for kind in ("request", "free"))
        return FEATURES + extra + tuple(f"{name}_rank" for name in self.config.key_features)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        episode = self._next_episode(seed, options, self.sim_config)
        start, seq = episode.start, episode.jobs
        self.start = start
        self._base = None
        if self.config.dense_reward:
            self._start_dense()
        self._builder = ObservationBuilder(seq, self.norm, self.n_resources, self.config.key_features)
        code = self.sim.advance()
        assert code == DECIDE_PICK  # a fresh sequence always starts with a pick
        return self._observe(), {INFO_START: start}

    def _observe(self) -> dict[str, np.ndarray]:
        jobs, mask, self._visible = self._builder.build(self.sim)
        self._mask = mask
        self.action_space.set_mask(mask)
        return {OBS_JOBS: jobs, OBS_ACTION_MASK: mask}

    def observation_of(self, sim: Simulator) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """This env's observation of `sim` at a pick, and the job (index in `sim`) behind each slot.

        Lets an outside model be scored as a policy on any simulator (`schedrl.eval.policies.FunctionPolicy`);
        the normalisation is this env's, whatever the sequence.
        """
        if len(sim.resources) != self.n_resources:
            raise ValueError(f"the simulator has {len(sim.resources)} resources; this env observes {self.n_resources}")
        if getattr(self, "_observed_sim", None) is not sim:
            self._observed_builder = ObservationBuilder(sim.workload, self.norm, self.n_resources,
                                                        self.config.key_features)
            self._observed_sim = sim
        jobs, mask, visible = self._observed_builder.build(sim)
        return {OBS_JOBS: jobs, OBS_ACTION_MASK: mask}, visible

    def _baseline(self) -> float:
        """The baseline heuristic's value on this episode's sequence (compiled: a fraction of a millisecond
        for 256 jobs), computed once per episode."""
        if self._base is None:
            from schedrl.heuristics import get_heuristic

            schedule = get_heuristic(self.config.reward_baseline).run(Simulator(self.sim.workload, self.sim_config))
            self._base = summarize(schedule).value(self.config.metric)
        return self._base

    def _reward(self, value: float) -> float:
        lower_is_better = METRICS[self.config.metric][1]
        if self.config.reward_baseline == "none":
            return -value if lower_is_better else value
        base = self._baseline()
        scale = max(abs(base), 1e-9)
        return (base - value) / scale if lower_is_better else (value - base) / scale

    def _start_dense(self) -> None:
        """Per-job waiting-cost weights of the objective, scaled so the episode's costs sum to its reward."""
        st = self.sim.state
        run = np.minimum(st.run, st.limit) if self.sim_config.kill_at_limit else st.run
        metric = self.config.metric
        if metric == "bsld":
            weight = 1.0 / np.maximum(run, BSLD_TAU)
        elif metric == "slowdown":
            weight = 1.0 / np.maximum(run, 1.0)  # as `job_metrics` floors it
        else:  # wait, turnaround
            weight = np.ones_like(run)
        scale = len(run) * (max(abs(self._baseline()), 1e-9) if self.config.reward_baseline != "none" else 1.0)
        self._dense_weight = weight / scale
        self._dense_cost = 0.0  # scaled waiting cost accrued up to the last decision: minus what was paid so far

    def _accrued_cost(self) -> float:
        """The scaled waiting cost accrued by every submitted job until now (or until it started)."""
        st = self.sim.state
        now = float(st.fv[NOW])
        until = np.where(st.start >= 0.0, np.minimum(st.start, now), now)
        return float(np.dot(self._dense_weight, np.maximum(until - st.submit, 0.0)))

    def step(self, action):
        a = checked_action(self.sim, self.sim is not None and self.sim.done, action, self._mask, lambda a: (
            f"action {a} is masked: only slots 0..{len(self._visible) - 1} hold waiting jobs"))
        job = int(self._visible[a])
        self.sim.pick(job)
        code = self.sim.advance()
        if code == FINISHED:
            metrics = summarize(self.sim.schedule())
            value = metrics.value(self.config.metric)
            reward = self._reward(value)
            if self.config.dense_reward:
                reward += self._dense_cost  # the rest of the episode's return
            obs = {OBS_JOBS: np.zeros_like(self._builder.jobs), OBS_ACTION_MASK: np.zeros(MAX_OBSV_SIZE, np.float32)}
            return obs, float(reward), True, False, {INFO_METRIC: value, INFO_START: self.start, INFO_JOB: job}
        reward = 0.0
        if self.config.dense_reward:
            cost = self._accrued_cost()
            reward = self._dense_cost - cost
            self._dense_cost = cost
        return self._observe(), reward, False, False, {INFO_JOB: job}
