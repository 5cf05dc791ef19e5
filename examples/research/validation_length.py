"""Score every checkpoint a `schedrl train rlscheduler` run kept on validation sequences of two lengths
and on the run's own evaluation sequences (docs/experiments/rlscheduler.md, "Validation sequences are as long as
the evaluation's").

    python examples/research/validation_length.py RUN_DIR [--sequences 5] [--short 256] [--long 1024] [--seed 0]

The validation starts are drawn (seeded) from the run's validation zone; the evaluation starts are the
ones in RUN_DIR/evaluation.json. Prints one line per checkpoint.
"""

from __future__ import annotations

import argparse
import glob
import json
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--sequences", type=int, default=5)
    parser.add_argument("--short", type=int, default=256)
    parser.add_argument("--long", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import load_policy
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
    from schedrl.agents.rlscheduler.env import load_env_workload

    run = Path(args.run_dir)
    trial = Path(sorted(glob.glob(str(run / "*" / "trial_*")))[0])
    params = json.loads((trial / "params.json").read_text())
    agent = get_agent("rlscheduler")
    env = RLSchedulerEnvConfig.from_dict(params["env_config"])
    workload = load_env_workload(env)
    evaluation = json.loads((run / "evaluation.json").read_text())
    judge = agent.judge(env)
    lo, hi = judge.split_range(len(workload), validation=True)
    rng = np.random.default_rng(args.seed)
    short = [lo + int(s) for s in rng.integers(0, hi - lo - args.short + 1, args.sequences)]
    long = [lo + int(s) for s in rng.integers(0, hi - lo - args.long + 1, args.sequences)]
    print(f"validation zone {lo}..{hi - 1}; {args.sequences} x {args.short} starts {short}; "
          f"{args.sequences} x {args.long} starts {long}; evaluation {len(evaluation['starts'])} x {evaluation['jobs']}")
    for checkpoint in sorted(trial.glob("checkpoint_*")):
        policy = load_policy(checkpoint)
        values = [np.mean(judge.score_policy(policy, workload, starts, length))
                  for starts, length in ((short, args.short), (long, args.long),
                                         (evaluation["starts"], evaluation["jobs"]))]
        print(f"{checkpoint.name} (iteration {int(checkpoint.name.split('_')[1]) + 1}): "
              f"validation {args.short} {values[0]:.1f}, validation {args.long} {values[1]:.1f}, evaluation {values[2]:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
