"""Plain cloning vs DAgger for RLSchert's warm start: the greedy clone's average slowdown on held-out sequences.

    python examples/research/rlschert_dagger_probe.py --rounds 4 --sequences 16 [--kill] [--kill-head slots] [--seed 0]

Fits a fresh MLP 64-64 to the env's teacher (SAF, with `--kill` the kill rule first) exactly as
`schedrl train rlschert`'s warm start does (`schedrl/agents/rlschert/warm_start.py`, default settings:
32 teacher sequences and 8 epochs, then rounds of 16 clone-driven sequences and 4-epoch refits), and
after the plain fit and after every DAgger round scores the greedy clone on `--sequences` held-out
sequences (the seeds `schedrl train --eval-sequences N` evaluates on), next to the Table 7 heuristics
(with `--kill`, also with the kill rule), with its kills per sequence. docs/experiments/rlschert.md reports its output.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from schedrl.agents import get_agent
from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.env import RLSchertEnv
from schedrl.agents.rlschert.evaluation import run_sequences
from schedrl.agents.rlschert.modules import module_spec
from schedrl.agents.rlschert.settings import KILL_HEADS, RLSchertSettings
from schedrl.agents.rlschert.warm_start import Demonstrations, dagger, rollouts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=4, help="DAgger rounds (default 4)")
    p.add_argument("--sequences", type=int, default=16, help="held-out sequences (default 16)")
    p.add_argument("--kill", action="store_true", help="the env with kill actions (teacher: kill rule, else SAF)")
    p.add_argument("--seed", type=int, default=0, help="seed of the training sequences and fits (default 0)")
    p.add_argument("--kill-head", choices=KILL_HEADS, default="flat",
                   help="how the network scores kills (modules.py): flat (the paper's) or slots (ours)")
    p.add_argument("--kill-weight", type=float, default=1.0,
                   help="weight of the teacher's kill decisions in each fit (default 1)")
    args = p.parse_args()

    agent = get_agent("rlschert")
    config = RLSchertEnvConfig(kill=args.kill)
    env = RLSchertEnv(config=config.to_dict())
    torch.manual_seed(args.seed)
    spec = module_spec("mlp", {"kill_head": args.kill_head})
    spec.observation_space, spec.action_space = env.observation_space, env.action_space
    module = spec.build()
    defaults = RLSchertSettings().warm_start_spec()
    # the held-out seeds of `schedrl train --eval-sequences N --seed S` (the driver's evaluation seeds: 20,000 + S)
    judge = agent.judge(config)
    seeds = judge.evaluation_ids(None, args.sequences, 20_000 + args.seed, 0)
    baselines = {k: float(np.mean(v)) for k, v in judge.score_baselines(None, seeds, 0).items()}
    print("heuristics: " + ", ".join(f"{k} {v:.2f}" for k, v in baselines.items()))
    if args.kill:  # how rare the labels the clone must learn to kill from are
        demos = Demonstrations()
        rollouts(env, demos, defaults["round_episodes"], 1_000_000 + 10_000 * args.seed, 0.99)
        kills = np.asarray(demos.labels) > config.num_nw
        print(f"teacher on {defaults['round_episodes']} training sequences: {int(kills.sum())} kill "
              f"decisions of {len(kills)} ({kills.mean():.1%})")

    def score(rounds: int, stats) -> None:
        policy = agent.policy_from_module(module, config.to_dict())
        runs = run_sequences(lambda i: policy, config, seeds)
        slowdowns, kills = [r["slowdown"] for r in runs], [r["kills"] for r in runs]
        label = "plain cloning" if rounds == 0 else f"DAgger, {rounds} round{'s' * (rounds > 1)}"
        print(f"{label}: greedy agreement {stats['agreement']:.1%}; greedy clone "
              f"avg slowdown {np.mean(slowdowns):.2f} on {len(seeds)} held-out sequences, kills per sequence "
              f"{np.mean(kills):.1f} ({time.perf_counter() - t0:.0f} s)", flush=True)

    t0 = time.perf_counter()
    # one warm start, the greedy clone scored after every fit (round 0's and each DAgger round's)
    dagger(module, env, {**defaults, "rounds": args.rounds, "seed": args.seed, "gamma": 0.99,
                         "kill_weight": args.kill_weight}, on_fit=score)


if __name__ == "__main__":
    main()
