"""PPO scaling on one machine: env steps/s and time per iteration vs env runners and envs per runner.

    python benchmarks/bench_scaling.py [--runners 0,1,2] [--envs 1,4,8] [--iterations 3]

Trains RLScheduler's kernel policy on the embedded default trace with a fixed small batch
(`--batch-size` env steps of `--sequence-length`-job episodes, `--epochs` full-batch passes, no KL
early stop so that every iteration does the same learner work) for each combination of env
runners (0 = sampling in the driver) and natively vectorized envs per runner. Each combination
builds a fresh algorithm inside a 1-CPU Ray task (like the Tune trial of `schedrl train`, so the
learner and a driver-side sampler run torch single-threaded), runs one untimed warm-up iteration,
then `--iterations` timed ones; the table shows medians. Unlike `schedrl train`, no validation
runs between iterations.

Columns: `iter s` wall time of an iteration; `steps/s` env steps sampled per second of it;
`sample s` / `learn s` RLlib's own timers `timers/env_runner_sampling_timer` (collecting the
batch from the runners) and `timers/learner_update_timer` (the PPO update); `sampling steps/s`
env steps per second of sampling alone. RLlib reports timers as an exponential moving average
over iterations (coefficient 0.01); the per-iteration values are recovered from consecutive
results, and checked against Tune's `time_this_iter_s`.

Ray is started with one logical CPU per core, or more where the trial and its runners need them:
on a 2-core machine 2 runners oversubscribe the cores, which is part of what the table shows.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import time

# `--profile`: where an iteration's time goes, as cumulative times of these functions under cProfile
# ((file suffix, function name), ...); a category named `a: b` is part of `a`
PROFILE_CATEGORIES = {
    "sampling": (("ray/rllib/env/single_agent_env_runner.py", "_sample"),),
    "sampling: env step (vector env)": (("schedrl/agents/rlscheduler/vector_env.py", "step"),),
    "sampling: env step: observation building": (("schedrl/agents/rlscheduler/observation.py", "build"),),
    "sampling: policy forward": (("ray/rllib/core/rl_module/torch/torch_rl_module.py", "forward_exploration"),),
    "sampling: env-to-module connectors": (("ray/rllib/connectors/env_to_module/env_to_module_pipeline.py", "__call__"),),
    "sampling: module-to-env connectors": tuple(
        (f"ray/rllib/connectors/module_to_env/{name}.py", "__call__")
        for name in ("get_actions", "normalize_and_clip_actions", "unbatch_to_individual_items",
                     "listify_data_for_vector_env", "remove_single_ts_time_rank_from_batch")),
    "learner": (("ray/rllib/core/learner/learner.py", "update"),),
    "learner: connectors (GAE, batching)": (("ray/rllib/connectors/learner/learner_connector_pipeline.py", "__call__"),),
    "learner: minibatch shuffling": (("ray/rllib/policy/sample_batch.py", "shuffle"),),
    "learner: forward (policy)": (("ray/rllib/core/rl_module/torch/torch_rl_module.py", "forward_train"),),
    "learner: value net forward (loss, GAE)": (("schedrl/agents/rlscheduler/modules/queue_module.py", "compute_values"),),
    "learner: backward": (("torch/autograd/graph.py", "_engine_run_backward"),),
    "learner: optimizer steps": (("ray/rllib/core/learner/torch/torch_learner.py", "apply_gradients"),),
}

EMA_COEFF = 0.01  # RLlib 2.60 MetricsLogger: timers are EmaStats with this default coefficient
TIMERS = {"iter": "training_iteration", "sample": "env_runner_sampling_timer", "learn": "learner_update_timer"}


def per_iteration_timers(previous: dict | None, current: dict) -> dict[str, float]:
    """The timers of the latest iteration alone, undoing RLlib's EMA (the first value is raw)."""
    out = {}
    for name, key in TIMERS.items():
        now = current["timers"][key]
        out[name] = now if previous is None else (now - (1 - EMA_COEFF) * previous["timers"][key]) / EMA_COEFF
    return out


def bench(env_config: dict, runners: int, envs: int, args) -> dict[str, float]:
    """Medians for one combination; runs as a 1-CPU Ray task, as `schedrl train`'s Tune trial does."""
    import logging

    logging.getLogger("ray").setLevel(logging.ERROR)
    from schedrl.agents.rlscheduler.ppo import PPOSettings, build_ppo_config
    from schedrl.agents.rlscheduler import ENV_ID as RLSCHEDULER_ENV_ID

    settings = PPOSettings(num_env_runners=runners, num_envs_per_env_runner=envs, train_batch_size_per_learner=args.batch_size,
                           num_epochs=args.epochs, minibatch_size=args.minibatch_size or args.batch_size, target_kl=None,
                           seed=0, overlap_sampling=args.overlap and runners > 0)
    import torch

    torch.set_num_threads(args.trial_cpus)  # what Ray's OMP_NUM_THREADS gives a trial with this many CPUs
    algo = build_ppo_config(settings, RLSCHEDULER_ENV_ID, env_config, vector_entry_point=True).build_algo()
    try:
        previous = algo.train()  # warm-up: runner start-up, first forward passes, allocations
        rows = []
        for _ in range(args.iterations):
            result = algo.train()
            timers = per_iteration_timers(previous, result)
            wall = result["time_this_iter_s"]
            if abs(timers["iter"] - wall) > 0.1 * wall + 0.05:
                raise RuntimeError(f"timer recovery disagrees with time_this_iter_s: {timers['iter']:.3f} vs {wall:.3f} s; "
                                   "has RLlib's timer smoothing changed?")
            rows.append({"iter": wall, "steps": result["env_runners"]["num_env_steps_sampled"],
                         "sample": timers["sample"], "learn": timers["learn"]})
            previous = result
        profile = profile_iterations(algo, args.iterations) if args.profile else None
    finally:
        algo.stop()
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    med["steps_per_s"] = statistics.median(r["steps"] / r["iter"] for r in rows)
    med["sampling_steps_per_s"] = statistics.median(r["steps"] / r["sample"] for r in rows)
    if profile:
        med["profile"] = profile
    return med


def profile_iterations(algo, iterations: int) -> dict[str, float]:
    """`iterations` more iterations under cProfile (after the timed ones): seconds per iteration in each
    `PROFILE_CATEGORIES` function (cumulative) and their wall time per iteration (`wall (profiled)`)."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.enable()
    for _ in range(iterations):
        algo.train()
    profiler.disable()
    wall = (time.perf_counter() - t0) / iterations
    stats = pstats.Stats(profiler).stats  # (file, line, name) -> (calls, primitive calls, tottime, cumtime, callers)
    out = {}
    for label, functions in PROFILE_CATEGORIES.items():
        out[label] = sum(v[3] for (file, _, fn), v in stats.items()
                         if any(fn == name and file.replace("\\", "/").endswith(suffix) for suffix, name in functions)
                         ) / iterations
    for top in ("sampling", "learner"):  # what the named parts leave: RLlib's own bookkeeping, mostly
        parts = [v for k, v in out.items() if k.startswith(top + ": ") and k.count(": ") == 1]
        out[f"{top}: the rest (RLlib bookkeeping)"] = out[top] - sum(parts)
    out = dict(sorted(out.items(), key=lambda kv: kv[0].split(":")[0] != "sampling"))  # sampling rows first
    out["wall (profiled)"] = wall
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runners", default="0,1,2", help="env-runner counts (default 0,1,2)")
    parser.add_argument("--envs", default="1,4,8", help="envs per runner (default 1,4,8)")
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations per combination (default 3)")
    parser.add_argument("--batch-size", type=int, default=1024, help="env steps per iteration (default 1024)")
    parser.add_argument("--sequence-length", type=int, default=128, help="jobs per episode (default 128)")
    parser.add_argument("--epochs", type=int, default=4, help="PPO passes over the batch per iteration (default 4)")
    parser.add_argument("--minibatch-size", type=int, default=None,
                        help="SGD minibatch in env steps (default: the whole batch; `schedrl train` on 2 cores: 2048)")
    parser.add_argument("--trial-cpus", type=int, default=1,
                        help="CPUs of the trial task, so torch threads of the learner and a driver-side sampler "
                             "(default 1, as `schedrl train`'s trials; Tune's resources.cpus_for_main_process)")
    parser.add_argument("--overlap", action="store_true",
                        help="env runners sample the next batch while the learner trains (`--overlap-sampling`; "
                             "rows with 0 runners sample in the trainer and cannot overlap)")
    parser.add_argument("--profile", action="store_true",
                        help="also run the timed iterations under cProfile and print where an iteration's time goes "
                             "(cProfile slows Python-heavy parts more than torch: read the shares, not the seconds)")
    args = parser.parse_args()
    runner_counts = [int(x) for x in args.runners.split(",")]
    env_counts = [int(x) for x in args.envs.split(",")]

    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    import ray
    import torch

    from schedrl.agents import get_agent
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
    from schedrl.agents.rlscheduler.settings import PPOSettings

    env = get_agent("rlscheduler").prepare(RLSchedulerEnvConfig(trace="default", sequence_length=args.sequence_length),
                                           PPOSettings(), {"filtering": False}, log=lambda text: None).env_config
    cores = os.cpu_count() or 1
    ray.init(num_cpus=max(cores, args.trial_cpus + max(runner_counts)), include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR)
    logging.getLogger("ray").setLevel(logging.ERROR)  # RLlib's new-API-stack notice, Trainable set-up times
    minibatch = args.minibatch_size or args.batch_size
    print(f"# PPO scaling: default trace, batch {args.batch_size} env steps of {args.sequence_length}-job episodes, "
          f"{args.epochs} epochs of {minibatch}-step minibatches; trial on {args.trial_cpus} CPU(s); "
          f"{'sampling overlapped with learning (runners >= 1); ' if args.overlap else ''}"
          f"median of {args.iterations} iterations after a warm-up")
    print(f"# {cores} cores, load average {os.getloadavg()[0]:.1f} at start; python {platform.python_version()}, "
          f"ray {ray.__version__}, torch {torch.__version__}")
    print()
    print("| runners | envs/runner | iter s | steps/s | sample s | learn s | learn share | sampling steps/s |")
    print("|--:|--:|--:|--:|--:|--:|--:|--:|")
    # Ray gives a 1-CPU task OMP_NUM_THREADS=1, so torch runs single-threaded as in a Tune trial
    remote_bench = ray.remote(num_cpus=args.trial_cpus)(bench)
    t0 = time.perf_counter()
    profiles = []
    try:
        for runners in runner_counts:
            for envs in env_counts:
                m = ray.get(remote_bench.remote(env.to_dict(), runners, envs, args))
                print(f"| {runners} | {envs} | {m['iter']:.2f} | {m['steps_per_s']:,.0f} | {m['sample']:.2f} | "
                      f"{m['learn']:.2f} | {m['learn'] / m['iter']:.0%} | {m['sampling_steps_per_s']:,.0f} |", flush=True)
                if "profile" in m:
                    profiles.append((runners, envs, m["profile"]))
    finally:
        ray.shutdown()
    for runners, envs, profile in profiles:
        total = profile.pop("wall (profiled)")
        print(f"\n## Where an iteration goes: {runners} runners x {envs} envs, under cProfile ({total:.2f} s per iteration "
              "profiled, the shares' base; remote runners' sampling happens in their own processes and shows only as waiting)\n")
        print("| part | s per iteration | share |")
        print("|---|--:|--:|")
        for label, seconds in profile.items():
            print(f"| {label} | {seconds:.3f} | {seconds / total:.0%} |")
    print(f"\n# {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
