"""Train an agent and evaluate it from Python, without the command line.

    python examples/train_from_python.py                                  # RLScheduler, 5 minutes, default scenario
    python examples/train_from_python.py --iterations 3 --out runs/python-small

The same run as `schedrl train rlscheduler --scenario default --time-budget 5m ...`, as four library calls:

1. `sweep_from_dict` validates a run described as data: the keys of a sweep file (tune_configs/README.md) with
   nothing searched. `scenario: default` fixes the trace, its cleaning, the simulator's semantics, the metric and
   the held-out split.
2. `train(spec, out)` runs it as a one-trial Ray Tune experiment (starting a local Ray instance unless one is
   running), validates the greedy policy on the scenario's validation sequences, keeps the best checkpoints and
   returns a summary naming the one chosen.
3. `load_policy(checkpoint)` turns that checkpoint into a policy: an object with `pick(sim)`.
4. `score(scenario, {"RL": policy})` schedules held-out sequences with the policy and with the scenario's
   heuristics; `Comparison.from_scores` prints them as `schedrl compare` does, the policy paired with the best
   heuristic (difference, 95% interval, verdict). `train` has printed such a table already, on the scenario's
   evaluation sequences; this one is on another draw from the same held-out zone (`--check-seed`), a check that
   the first was not a lucky draw.
"""

from __future__ import annotations

import argparse

from schedrl.agents.checkpoint import load_policy
from schedrl.eval.compare import Comparison
from schedrl.scenarios import get_scenario, scoring
from schedrl.training.driver import train
from schedrl.training.sweep_file import sweep_from_dict


def run_description(args: argparse.Namespace) -> dict:
    """The run as a sweep file's keys (a dict here; the same keys in YAML for `schedrl tune`)."""
    stop = {"iterations": args.iterations} if args.iterations else {"time_budget": args.time_budget}
    return {
        "name": "python-example",
        "agent": "rlscheduler",
        "scenario": args.scenario,
        "env": {"sequence_length": args.jobs},
        "ppo": {  # RLScheduler's PPO settings (`schedrl train rlscheduler --help` lists them all)
            "num_env_runners": 0,  # sample in the training process: one CPU is enough
            "num_envs_per_env_runner": args.envs,
            "train_batch_size_per_learner": args.batch_size,
            "minibatch_size": min(args.batch_size, 2048),
            "num_epochs": args.epochs,
            "warm_start": args.warm_start,  # clone a heuristic before the first iteration ("none": random weights)
            "seed": args.seed,
        },
        "training": {"filtering": False, "validation_sequences": args.validation_sequences,
                     "validation_jobs": args.eval_jobs},
        "stop": stop,
        "evaluate": {"sequences": args.eval_sequences, "jobs": args.eval_jobs},
    }


def main(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="default", help="a named scenario (`schedrl scenarios list`)")
    parser.add_argument("--iterations", type=int, help="stop after N iterations (instead of --time-budget)")
    parser.add_argument("--time-budget", default="5m", help="training time, e.g. 90s, 5m (default 5m)")
    parser.add_argument("--jobs", type=int, default=256, help="jobs per training episode (default 256)")
    parser.add_argument("--envs", type=int, default=16, help="environments sampled side by side (default 16)")
    parser.add_argument("--batch-size", type=int, default=8192, help="env steps per iteration (default 8192)")
    parser.add_argument("--epochs", type=int, default=10, help="passes over each batch (default 10)")
    parser.add_argument("--warm-start", default="auto", help="heuristic to clone first, auto or none (default auto)")
    parser.add_argument("--validation-sequences", type=int, default=5, help="validation sequences (default 5)")
    parser.add_argument("--eval-sequences", type=int, default=10, help="held-out evaluation sequences (default 10)")
    parser.add_argument("--eval-jobs", type=int, default=1024, help="jobs per evaluation sequence (default 1024)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check-seed", type=int, default=1, help="seed of the second draw of held-out sequences")
    parser.add_argument("--out", default="runs/python-example", help="output directory (must not hold a run)")
    args = parser.parse_args(argv)

    spec = sweep_from_dict(run_description(args), source="examples/train_from_python.py")
    summary = train(spec, args.out)  # prints one line per iteration, then its own final table
    policy = load_policy(summary["checkpoint"])

    # another draw of held-out sequences from the scenario's evaluation zone, scored with its heuristics
    scenario = get_scenario(args.scenario).overridden(sequences=args.eval_sequences, jobs=args.eval_jobs,
                                                      seed=args.check_seed)
    scores = scoring.score(scenario, {"RL": policy})
    comparison = Comparison.from_scores(scores, trained=["RL"])
    print(f"\nanother draw: {scoring.describe(scenario, scores.sequences, len(scoring.load(scenario)))}\n"
          f"{comparison.to_text()}")
    return summary, comparison


if __name__ == "__main__":
    main()
