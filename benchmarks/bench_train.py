"""End-to-end training throughput of any agent, as `schedrl train AGENT ...` trains it.

    python benchmarks/bench_train.py [--iterations 5] [--trial-cpus K] AGENT [any `schedrl train AGENT` option]
    python benchmarks/bench_train.py [--iterations 5] [--agents rlscheduler,dras-pg,...]   # defaults; all agents
    python benchmarks/bench_train.py --quick

The algorithm is built as `schedrl train` builds it: the same options parser (`add_common_arguments` +
the agent's `add_arguments`), `build_spec` (the agent's `configure`, its machine defaults, the trial's
CPUs), `Agent.prepare` (normalisation, trajectory filtering, curriculum: set-up, not timed) and
`Agent.algorithm_config` with the driver's callbacks and resources. It is built inside a Ray task with
the trial's CPUs (`--trial-cpus`, default what `schedrl train` gives it: the cores its env runners
leave), so the learner and a driver-side sampler get the same torch threads as in a Tune trial. One
untimed warm-up iteration, then `--iterations` timed ones; the table shows medians. Left out, as not
training throughput: validation between iterations, checkpoints, and the warm start (the behaviour
cloning RLScheduler and RLSchert run before the first iteration when their settings ask for one).

Columns: `iter s` wall time of an iteration (Tune's `time_this_iter_s`), learner included; `env
steps/s` env steps sampled in it (`env_runners/num_env_steps_sampled`) per second of it; `sample s` /
`learn s` RLlib's own timers `timers/env_runner_sampling_timer` and `timers/learner_update_timer`
(n/a where an algorithm logs no such timer); `learn share` learn s / iter s; `sampling steps/s` env
steps per second of sampling alone. RLlib keeps timers as moving averages; the iteration's own values
are recovered from consecutive results (`bench_scaling.per_iteration_timers`), and where an iteration
makes several `training_step` calls that each sample and update once (DQN: one per
`rollout_fragment_length` decisions until the iteration's minimum of env steps), as the calls' mean
times their number.

Ray is started with one logical CPU per core, or more where the trial and its env runners need them.
`--quick`: 1 timed iteration of RLScheduler, DRAS-PG and MRSch at tiny settings, a smoke run whose
numbers are not for reporting.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict

from bench_scaling import EMA_COEFF, TIMERS, per_iteration_timers

DEFAULT_ITERATIONS = 5
QUICK = {
    "rlscheduler": ["--batch-size", "512", "--minibatch-size", "256", "--epochs", "1", "--sequence-length", "64",
                    "--envs-per-runner", "8", "--no-filtering"],
    "dras-pg": ["--batch-size", "256", "--sequence-length", "64"],
    "mrsch": ["--sequence-length", "128"],  # its replay then holds enough to learn from the warm-up on
}
"""Agents and tiny settings of `--quick`."""
SETTINGS_SHOWN = ("batch", "epochs", "per_iteration", "per_update", "rollout", "learning_starts", "num_env_runners",
                  "envs_per", "model")
"""Settings fields whose name holds one of these are printed (how much is sampled and learned per iteration)."""
NOT_TIMED = ("out", "resume", "time_budget", "validation_sequences", "validation_jobs", "validate_every",
             "eval_starts", "eval_sequences", "eval_jobs", "checkpoint_every", "keep_checkpoints")
"""`schedrl train` options accepted but without effect here (hidden from `--help`)."""


def agent_parser(name: str) -> argparse.ArgumentParser:
    """`schedrl train NAME`'s parser, with `--iterations` meaning timed iterations and no `--out`."""
    from schedrl.agents import get_agent
    from schedrl.cli.train import add_common_arguments

    agent = get_agent(name)
    p = argparse.ArgumentParser(prog=f"bench_train.py {name}", description=f"training throughput of {agent.summary}")
    add_common_arguments(p)
    agent.add_arguments(p.add_argument_group(f"{name} options"))
    for action in p._actions:
        if action.dest in NOT_TIMED:
            action.required, action.help = False, argparse.SUPPRESS
        elif action.dest == "iterations":
            action.help = f"timed iterations after one untimed warm-up (default {DEFAULT_ITERATIONS})"
    return p


def build(name: str, argv: list[str], bench: argparse.Namespace):
    """(spec, args, the agent's notes) of `schedrl train NAME ARGV`: the options after the agent's name win over the
    benchmark's."""
    from schedrl.cli.main import UsageError, explicit_dests
    from schedrl.cli.train import build_plan

    parser = agent_parser(name)
    args = parser.parse_args(argv)
    args.agent, args.argv, args.explicit = name, argv, explicit_dests(parser, argv)
    for option, default in (("iterations", DEFAULT_ITERATIONS), ("trial_cpus", None)):
        if getattr(args, option) is None:
            setattr(args, option, default if getattr(bench, option) is None else getattr(bench, option))
    try:
        plan = build_plan(args)
        return plan.spec, args, plan.options.notes
    except (ValueError, UsageError) as e:
        parser.error(str(e))


def train_iterations(name: str, env_config, settings, model, trial_cpus: int, cpus_per_runner: float,
                     iterations: int) -> list[dict]:
    """Warm-up + `iterations` results (timers, wall time, env steps); runs as a Ray task with the trial's CPUs."""
    logging.getLogger("ray").setLevel(logging.ERROR)
    import torch

    from schedrl.agents import get_agent
    from schedrl.training.callbacks import AGENT_KEY, SchedulingMetricsCallback

    class NoWarmStart(SchedulingMetricsCallback):
        """The driver's callback (training-episode metric; no validation without its spec) minus the warm start."""

        def on_algorithm_init(self, **kwargs) -> None:
            pass

    torch.set_num_threads(trial_cpus)  # what Ray's OMP_NUM_THREADS gives a trial with this many CPUs
    config = get_agent(name).algorithm_config(env_config, settings, model)
    config = (config.callbacks(NoWarmStart).env_runners(num_cpus_per_env_runner=cpus_per_runner)
              .resources(num_cpus_for_main_process=trial_cpus))
    config = config.learners(learner_config_dict={**config.learner_config_dict, AGENT_KEY: name})
    algo = config.build_algo()
    try:
        out = []
        for _ in range(1 + iterations):
            r = algo.train()
            out.append({"timers": dict(r["timers"]), "wall": r["time_this_iter_s"],
                        "steps": r["env_runners"]["num_env_steps_sampled"],
                        "calls": r.get("num_training_step_calls_per_iteration", 1)})
        return out
    finally:
        algo.stop()


def iteration_timers(previous: dict, current: dict) -> dict[str, float]:
    """RLlib's timers of `current`'s iteration alone (NaN where not logged), from its moving averages."""
    filled = [{"timers": {k: r["timers"].get(k, math.nan) for k in TIMERS.values()}} for r in (previous, current)]
    t = per_iteration_timers(*filled)
    calls = current["calls"]
    for name, key in TIMERS.items():
        if key not in previous["timers"]:  # first logged in this iteration (DFP learns once its replay is full)
            t[name] = current["timers"].get(key, math.nan) * (1 if name == "iter" else calls)
        elif calls > 1 and name != "iter":  # one sampling and one update per call: `calls` EMA steps, not one
            a = (1 - EMA_COEFF) ** calls
            t[name] = calls * (current["timers"][key] - a * previous["timers"][key]) / (1 - a)
    return t


def medians(results: list[dict]) -> dict[str, float]:
    """Medians over the timed iterations (all but the first) of wall time, env steps/s and RLlib's timers."""
    rows = []
    for previous, current in zip(results, results[1:]):
        t = iteration_timers(previous, current)
        if abs(t["iter"] - current["wall"]) > 0.1 * current["wall"] + 0.05:
            raise RuntimeError(f"timer recovery disagrees with time_this_iter_s: {t['iter']:.3f} vs "
                               f"{current['wall']:.3f} s; has RLlib's timer smoothing changed?")
        rows.append({"iter": current["wall"], "sample": t["sample"], "learn": t["learn"],
                     "steps_per_s": current["steps"] / current["wall"],
                     "sampling_steps_per_s": current["steps"] / t["sample"]})
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def cell(value: float, fmt: str) -> str:
    return "n/a" if math.isnan(value) else format(value, fmt)


def split_argv(argv: list[str], agents) -> tuple[list[str], str | None, list[str]]:
    """(benchmark options, AGENT, the agent's options): AGENT is the first word naming an agent."""
    for i, word in enumerate(argv):
        if word in agents and (i == 0 or argv[i - 1] != "--agents"):
            return argv[:i], word, argv[i + 1:]
    return argv, None, []


def main(argv: list[str] | None = None) -> int:
    from schedrl.agents import AGENTS

    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [--iterations N] [--trial-cpus K] [--agents A,B | --quick] [AGENT [AGENT OPTIONS]]",
        epilog=f"AGENT: {', '.join(AGENTS)}. `%(prog)s AGENT --help` lists its options: those of `schedrl train "
               "AGENT` (validation, evaluation, checkpoint and output options are accepted and ignored).")
    parser.add_argument("--iterations", type=int, default=None,
                        help=f"timed iterations after one untimed warm-up (default {DEFAULT_ITERATIONS}; --quick: 1)")
    parser.add_argument("--trial-cpus", type=int, default=None, metavar="K",
                        help="CPUs (torch threads) of the training process (default: as `schedrl train`, the cores "
                             "its env runners leave)")
    parser.add_argument("--agents", default=None, metavar="A,B,...",
                        help="agents to run one after the other with their `schedrl train` defaults "
                             "(default, without AGENT: every agent)")
    parser.add_argument("--quick", action="store_true", help=f"tiny settings, 1 iteration: {', '.join(QUICK)}")
    own, agent, agent_argv = split_argv(list(sys.argv[1:] if argv is None else argv), AGENTS)
    bench, unknown = parser.parse_known_args(own)
    if unknown:
        parser.error(f"unrecognized {' '.join(unknown)} (AGENT: {', '.join(AGENTS)})")
    if bench.iterations is not None and bench.iterations < 1 or bench.trial_cpus is not None and bench.trial_cpus < 1:
        parser.error("--iterations and --trial-cpus must be >= 1")
    if agent and (bench.agents or bench.quick):
        parser.error("give AGENT [options], --agents or --quick, not several")
    if bench.quick:
        bench.iterations = bench.iterations or 1
        runs = list(QUICK.items())
    elif agent:
        runs = [(agent, agent_argv)]
    else:
        names = bench.agents.split(",") if bench.agents else list(AGENTS)
        unknown = [n for n in names if n not in AGENTS]
        if unknown:
            parser.error(f"unknown agent {', '.join(unknown)}; choose from {', '.join(AGENTS)}")
        runs = [(n, []) for n in names]

    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    import ray
    import torch

    from schedrl.agents import get_agent

    built = [(name, *build(name, options, bench)) for name, options in runs]  # every option checked before Ray
    cores = os.cpu_count() or 1
    need = max(s.resources.cpus_for_main_process + s.settings.num_env_runners * s.resources.cpus_per_env_runner
               for _, s, _, _ in built)
    ray.init(num_cpus=max(cores, math.ceil(need)), include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR)
    logging.getLogger("ray").setLevel(logging.ERROR)
    print("# training throughput, as `schedrl train` trains; median of the timed iterations after a warm-up; "
          "no validation, checkpoints or warm start")
    print(f"# {cores} cores, load average {os.getloadavg()[0]:.1f} at start; python {platform.python_version()}, "
          f"ray {ray.__version__}, torch {torch.__version__}")
    rows, failed = [], False
    t0 = time.perf_counter()
    try:
        for name, spec, args, notes in built:
            agent_impl = get_agent(name)
            trial_cpus = int(spec.resources.cpus_for_main_process)
            settings = {k: v for k, v in asdict(spec.settings).items()
                        if any(s in k for s in SETTINGS_SHOWN) and not k.startswith("warm_start")}
            print(f"\n## {name} {' '.join(args.argv)}".rstrip())
            for note in notes:
                print(f"# {note}")
            print(f"# {', '.join(f'{k} {v}' for k, v in settings.items())}; {spec.model or 'default'} model; "
                  f"trial on {trial_cpus} CPU(s); {args.iterations} timed iteration(s)")
            warm = getattr(spec.settings, "warm_start", None)
            if warm and warm != "none":
                print(f"# warm start in the settings (warm_start={warm}): not run (pre-training, not throughput)")
            try:
                s0 = time.perf_counter()
                prepared = agent_impl.prepare(spec.env, spec.settings, asdict(spec.training),
                                              lambda text: print(f"#   {text}", flush=True))
                print(f"# prepared in {time.perf_counter() - s0:.1f} s (not timed)", flush=True)
                task = ray.remote(num_cpus=trial_cpus)(train_iterations)
                m = medians(ray.get(task.remote(name, prepared.env_config, spec.settings, spec.model or None,
                                                trial_cpus, spec.resources.cpus_per_env_runner, args.iterations)))
                rows.append(f"| {name} | {m['iter']:.2f} | {m['steps_per_s']:,.0f} | {cell(m['sample'], '.2f')} | "
                            f"{cell(m['learn'], '.2f')} | {cell(m['learn'] / m['iter'], '.0%')} | "
                            f"{cell(m['sampling_steps_per_s'], ',.0f')} |")
            except Exception as e:  # one agent's failure (missing data, a bad combination) does not end the rest
                failed = True
                reason = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"
                rows.append(f"| {name} | failed: {reason} |" + " |" * 5)
            print(f"# {name}: {time.perf_counter() - s0:.0f} s", flush=True)
    finally:
        ray.shutdown()
    print("\n| agent | iter s | env steps/s | sample s | learn s | learn share | sampling steps/s |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    print("\n".join(rows))
    print(f"\n# {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f} at the end")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
