"""End-to-end RLScheduler training on RLlib: learning on a workload with a known best order, and
the Tune-driven `train` with a checkpoint round trip. (The README's main-job command runs in
tests/docs/test_doc_commands.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from schedrl.workload import Workload, write_swf
from schedrl.workload.fields import SWF_FIELDS

REPO = Path(__file__).resolve().parents[3]


def one_processor_batch_trace(path: Path, n: int = 600, seed: int = 0) -> Path:
    """Jobs all submitted at t=0 on a 1-processor machine: shortest-first is optimal for bsld."""
    rng = np.random.default_rng(seed)
    runs = rng.choice([10, 60, 300, 1200, 3600], size=n)
    cols = {f.name: np.full(n, -1, dtype=f.dtype) for f in SWF_FIELDS}
    cols.update(job_id=np.arange(1, n + 1), submit=np.zeros(n, np.int64), run=runs, time_req=runs,
                procs_alloc=np.ones(n, np.int64), procs_req=np.ones(n, np.int64), status=np.ones(n, np.int64))
    return write_swf(Workload(cols, max_procs=1, max_nodes=1, name="batch1"), path)


def greedy_and_random_bsld(algo, env_config, starts, length):
    from schedrl.agents.rlscheduler.env import RLSchedulerEnv
    from schedrl.heuristics import get_heuristic
    from schedrl.metrics import summarize
    from schedrl.agents.rlscheduler.policy import CheckpointPolicy
    from schedrl.sim import Simulator

    env = RLSchedulerEnv(env_config)
    policy = CheckpointPolicy(algo.get_module(), env.config.to_dict() | {"norm": env.norm.to_dict()})
    greedy, rand = [], []
    for s in starts:
        seq = env.workload[s:s + length]
        greedy.append(summarize(Simulator(seq, env.sim_config).run(policy)).avg_bsld)
        rand.append(np.mean([summarize(get_heuristic("random", seed).run(Simulator(seq, env.sim_config))).avg_bsld
                             for seed in range(5)]))
    return float(np.mean(greedy)), float(np.mean(rand))


def test_ppo_kernel_policy_beats_random_on_a_known_order(tmp_path, ray_session):
    from schedrl.agents.rlscheduler.ppo import PPOSettings, build_ppo_config
    from schedrl.agents.rlscheduler.env import RLSchedulerEnv

    trace = one_processor_batch_trace(tmp_path / "batch1.swf")
    length = 12
    env_config = {"trace": str(trace), "sequence_length": length}
    settings = PPOSettings(num_env_runners=0, num_envs_per_env_runner=1, train_batch_size_per_learner=length * 40,
                           num_epochs=10, lr=3e-3, vf_lr=3e-3, seed=0)
    algo = build_ppo_config(settings, RLSchedulerEnv, env_config).build_algo()
    try:
        starts = list(range(0, 400, 40))
        before, rand = greedy_and_random_bsld(algo, env_config, starts, length)
        for _ in range(8):
            algo.train()
        after, _ = greedy_and_random_bsld(algo, env_config, starts, length)
    finally:
        algo.stop()
    # SJF is optimal here; a random order is far worse. The trained policy must clearly beat random.
    assert after < 0.8 * rand, (before, after, rand)


def test_restored_run_and_recreated_runners_continue_instead_of_replaying(tmp_path, ray_session):
    """Tune resumes through `Trainable.restore`; the callback tells the fresh env runners how far training got."""
    from schedrl.training.callbacks import SchedulingMetricsCallback
    from schedrl.agents.rlscheduler.ppo import PPOSettings, build_ppo_config

    env_config = {"trace": "default", "sequence_length": 32, "train_starts": list(range(0, 900, 3)),
                  "filter_phase1_episodes": 100}
    settings = PPOSettings(num_env_runners=0, num_envs_per_env_runner=2, train_batch_size_per_learner=128,
                           num_epochs=1, seed=3)
    config = build_ppo_config(settings, "schedrl/RLScheduler-v0", env_config, vector_entry_point=True)
    config = config.callbacks(SchedulingMetricsCallback)

    def envs(algo):
        return algo.env_runner_group.local_env_runner.env.unwrapped.envs

    def first_starts(algo):
        algo.env_runner_group.local_env_runner.sample(num_timesteps=2)
        return [env.start for env in envs(algo)]

    first = config.build_algo()
    try:
        original = first_starts(first)
        first.train()
        first.train()
        checkpoint = first.save(str(tmp_path / "ckpt"))
    finally:
        first.stop()
    replay = config.build_algo()
    try:
        assert first_starts(replay) == original  # what a fresh runner with this seed draws
    finally:
        replay.stop()
    resumed = config.build_algo()
    try:
        resumed.restore(checkpoint)
        assert resumed.iteration == 2
        # 2 iterations x 128 steps / 32 = 8 episodes, over 2 envs: 4 each of phase 1 are done
        assert all(env.episodes.salt == (2, 0) and env.episodes.episodes == 4 for env in envs(resumed)), \
            [(env.episodes.salt, env.episodes.episodes) for env in envs(resumed)]
        assert first_starts(resumed) != original
        # env runners recreated after a failure get a salt of their own (local runner stands in here)
        callback = resumed.callbacks[0] if isinstance(resumed.callbacks, list) else resumed.callbacks
        callback.on_env_runners_recreated(algorithm=resumed, env_runner_group=resumed.env_runner_group,
                                          env_runner_indices=[], is_evaluation=False)
        callback.on_env_runners_recreated(algorithm=resumed, env_runner_group=resumed.env_runner_group,
                                          env_runner_indices=[], is_evaluation=False)
        assert callback._restarts == 2
        result = {}
        callback.on_train_result(algorithm=resumed, result=result)
        assert result["schedrl"] == {"continued_envs": 2}  # restore: 2 local envs; recreations: none reached
    finally:
        resumed.stop()


def test_train_driver_checkpoint_restores_and_evaluates(tmp_path, ray_session):
    from schedrl.agents.rlscheduler.ppo import PPOSettings
    from schedrl.training.driver import train
    from schedrl.training.sweep import EvaluateSpec, StopSpec, TrainingOptions, single_run
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
    from schedrl.eval.compare import compare
    from schedrl.eval.policies import resolve_policy
    from schedrl.agents.checkpoint import load_policy
    from schedrl.workload.catalog import load_trace

    spec = single_run(
        "rlscheduler", RLSchedulerEnvConfig(trace="default", sequence_length=32),
        PPOSettings(num_env_runners=0, num_envs_per_env_runner=2, train_batch_size_per_learner=256, num_epochs=2),
        "kernel", StopSpec(iterations=1), TrainingOptions(filter_phase1_iterations=1, validation_sequences=1),
        EvaluateSpec(sequences=1, jobs=64))
    summary = train(spec, tmp_path / "run", verbose=False)
    ckpt = Path(summary["checkpoint"])
    assert ckpt.is_dir() and (tmp_path / "run" / "schedrl_run.json").exists()
    assert (tmp_path / "run" / "evaluation.md").read_text().count("|") > 10
    policy = load_policy(ckpt)
    assert policy.env_config["sequence_length"] == 32
    assert isinstance(resolve_policy(f"checkpoint:{ckpt}"), type(policy))
    workload = load_trace("default")
    result = compare(workload, ["sjf", f"checkpoint:{ckpt}"], ["none", "easy"], [0, 100], 64, progress=False)
    assert all(np.isfinite(result.mean(b, p)) for b in ("none", "easy") for p in result.policies)
