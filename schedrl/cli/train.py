"""`schedrl train rlscheduler`: PPO with the kernel policy as a one-trial Ray Tune run."""

from __future__ import annotations

import argparse
import sys

from schedrl.cli.options import parse_starts
from schedrl.duration import parse_duration
from schedrl.sim.config import BACKFILLS

AGENTS = ("rlscheduler",)
DEFAULT_TIME_BUDGET = "30m"
"""Stop criterion when none is given: what beat the heuristics on Lublin-1 on 2 cores (docs/rlscheduler.md)."""


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("agent", choices=AGENTS, help="which scheduler to train")
    p.add_argument("--trace", default="default", metavar="NAME|PATH", help="catalog name or SWF file (default: the embedded trace)")
    p.add_argument("--cleaning", choices=("default", "none", "rlscheduler"), default=None,
                   help="cleaning preset (default: default; rlscheduler with --preset rlscheduler)")
    p.add_argument("--preset", choices=("standard", "rlscheduler"), default="standard",
                   help="simulator semantics; rlscheduler reproduces the paper's SchedGym (default: standard)")
    p.add_argument("--metric", default="bsld", help="objective: bsld, wait, turnaround, slowdown, utilization, fairness")
    p.add_argument("--backfill", choices=BACKFILLS, default="none", help="backfilling while the picked job waits")
    p.add_argument("--reward-baseline", choices=("none", "sjf"), default="none",
                   help="none: reward = the objective (paper); sjf: relative to SJF on the same sequence")
    p.add_argument("--model", default="kernel", help="kernel (default), mlp_v1, mlp_v2, mlp_v3, lenet")
    p.add_argument("--iterations", type=int, default=None, help="stop after N iterations")
    p.add_argument("--time-budget", default=None, metavar="DURATION",
                   help=f"stop after this much training time, e.g. 20m (default: {DEFAULT_TIME_BUDGET} "
                        "when --iterations is not given either)")
    p.add_argument("--num-env-runners", type=int, default=0, help="env-runner processes (0: sample in the trainer; default 0)")
    p.add_argument("--envs-per-runner", type=int, default=4, help="environments per env runner (default 4)")
    p.add_argument("--runner-resource", action="append", default=[], metavar="NAME=AMOUNT",
                   help="custom Ray resource each env runner requires, placing runners on nodes started with "
                        "--resources '{\"NAME\": ...}' (repeatable)")
    p.add_argument("--num-gpus-per-learner", type=float, default=0.0, help="GPUs for the learner (default 0)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--sequence-length", type=int, default=256, help="jobs per training episode (paper: 256)")
    p.add_argument("--batch-size", type=int, default=None, help="env steps per iteration (paper: 100 x 256)")
    p.add_argument("--epochs", type=int, default=None, help="update passes per iteration (paper: 80, KL early stop)")
    p.add_argument("--minibatch-size", type=int, default=None, help="SGD minibatch (paper: the whole batch)")
    p.add_argument("--target-kl", type=float, default=None, help="KL early-stopping target (paper: 0.01)")
    p.add_argument("--lr", type=float, default=None, help="policy learning rate (paper: 3e-4)")
    p.add_argument("--vf-lr", type=float, default=None, help="value learning rate (paper: 1e-3)")
    p.add_argument("--no-filtering", action="store_true", help="disable trajectory filtering")
    p.add_argument("--filter-iterations", type=int, default=20, help="phase-1 iterations of trajectory filtering (default 20)")
    p.add_argument("--eval-starts", metavar="I,J,...", help="fixed held-out evaluation starts for the final table")
    p.add_argument("--eval-sequences", type=int, default=10, help="random evaluation sequences (default 10)")
    p.add_argument("--eval-jobs", type=int, default=1024, help="jobs per evaluation sequence (default 1024)")
    p.add_argument("--checkpoint-every", type=int, default=5, help="checkpoint frequency in iterations (default 5)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (results, checkpoints, plots)")
    p.add_argument("--resume", action="store_true",
                   help="continue the interrupted run in --out with the options it was started with")
    p.set_defaults(run=run)
    return p


def parse_runner_resources(items: list[str]) -> dict[str, float] | None:
    """`["worker_node=0.5", "ssd=1"]` -> `{"worker_node": 0.5, "ssd": 1.0}`; None when empty."""
    from schedrl.cli.main import UsageError

    resources = {}
    for item in items:
        name, sep, amount = item.partition("=")
        try:
            value = float(amount) if sep and name.strip() else None
        except ValueError:
            value = None
        if value is None:
            raise UsageError(f"--runner-resource must look like NAME=AMOUNT (e.g. worker_node=0.5); got {item!r}")
        resources[name.strip()] = value
    return resources or None


def build_spec(args: argparse.Namespace):
    from dataclasses import replace

    from schedrl.algorithms.ppo import PPOSettings
    from schedrl.algorithms.train import TrainSpec
    from schedrl.envs.rlscheduler_config import RLSchedulerEnvConfig

    cleaning = args.cleaning or ("rlscheduler" if args.preset == "rlscheduler" else "default")
    env = RLSchedulerEnvConfig(trace=args.trace, cleaning=cleaning, preset=args.preset, metric=args.metric,
                               backfill=args.backfill, sequence_length=args.sequence_length,
                               reward_baseline=args.reward_baseline)
    ppo = PPOSettings(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.envs_per_runner,
                      num_gpus_per_learner=args.num_gpus_per_learner, seed=args.seed,
                      env_runner_resources=parse_runner_resources(args.runner_resource))
    overrides = {"train_batch_size_per_learner": args.batch_size, "num_epochs": args.epochs, "lr": args.lr,
                 "vf_lr": args.vf_lr, "minibatch_size": args.minibatch_size, "target_kl": args.target_kl}
    ppo = replace(ppo, **{k: v for k, v in overrides.items() if v is not None})
    budget = parse_duration(args.time_budget, "--time-budget")
    if args.iterations is None and budget is None:
        budget = parse_duration(DEFAULT_TIME_BUDGET, "--time-budget")
    return TrainSpec(env=env, ppo=ppo, out=args.out, model=args.model, iterations=args.iterations, time_budget_s=budget,
                     filtering=not args.no_filtering, filter_phase1_iterations=args.filter_iterations,
                     eval_starts=tuple(parse_starts(args.eval_starts) or ()), eval_sequences=args.eval_sequences,
                     eval_jobs=args.eval_jobs, checkpoint_every=args.checkpoint_every,
                     train_args=tuple(a for a in getattr(args, "argv", ()) if a != "--resume"))


def run(args: argparse.Namespace) -> int:
    import os

    from schedrl.cli.main import UsageError

    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    if args.resume:
        args = recorded_args(args)
    elif args.iterations is None and args.time_budget is None:
        print(f"schedrl train: no --iterations or --time-budget given: training for {DEFAULT_TIME_BUDGET}",
              file=sys.stderr)
    try:
        spec = build_spec(args)
    except ValueError as e:
        raise UsageError(str(e)) from None
    from schedrl.algorithms.train import train

    try:
        train(spec, resume=args.resume)
    except FileExistsError as e:
        raise UsageError(str(e)) from None
    return 0


def recorded_args(args: argparse.Namespace) -> argparse.Namespace:
    """`--resume`: the options the run in `--out` was started with (its `schedrl_run.json`), not today's."""
    import json
    from pathlib import Path

    from schedrl.algorithms.train import RUN_FILE
    from schedrl.cli.main import UsageError, build_parser

    record = Path(args.out).expanduser() / RUN_FILE
    if not record.is_file():
        raise UsageError(f"nothing to resume in {args.out}: no {RUN_FILE} (was the run started there?)")
    recorded = json.loads(record.read_text()).get("train_args")
    if recorded is None:  # started from Python (`train(spec)`): today's options stand in
        return args
    original = build_parser("train").parse_args(["train", *recorded])
    # options given now (not defaults) that differ from the run's: said, then ignored
    given = {a.split("=")[0] for a in getattr(args, "argv", ()) if a.startswith("--")} - {"--out", "--resume"}
    ignored = sorted(flag for flag in given
                     if getattr(args, flag[2:].replace("-", "_"), None) != getattr(original, flag[2:].replace("-", "_"), None))
    if ignored:
        print(f"schedrl train: --resume continues with the run's original options; ignoring {', '.join(ignored)}",
              file=sys.stderr)
    original.out, original.resume, original.argv = args.out, True, recorded
    return original
