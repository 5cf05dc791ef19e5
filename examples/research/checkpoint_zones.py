"""Score every checkpoint a `schedrl train rlscheduler` run kept, and the heuristics, on the run's own
validation and evaluation sequences and on disjoint windows covering each zone (docs/experiments/rlscheduler.md,
"Why the chosen checkpoint trails F1 on held-out jobs").

    python examples/research/checkpoint_zones.py RUN_DIR [RUN_DIR ...] [--jobs 1024]

The run's validation starts are in RUN_DIR/schedrl_run.json, its evaluation starts in RUN_DIR/evaluation.json;
the disjoint windows tile each zone of the held-out part from its first job. Prints, per run, one line per
policy: its mean on each of the four sets and, on the disjoint evaluation windows, the range of its per-window
ratio to the best heuristic there.
"""

from __future__ import annotations

import argparse
import glob
import json
from pathlib import Path

import numpy as np


def tiles(lo: int, hi: int, length: int) -> list[int]:
    """Starts of the disjoint `length`-job windows that fit in positions lo..hi-1."""
    return list(range(lo, hi - length + 1, length))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", nargs="+")
    parser.add_argument("--jobs", type=int, default=1024, help="jobs per disjoint window (default 1024)")
    args = parser.parse_args()

    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import load_policy
    from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
    from schedrl.agents.rlscheduler.env import load_env_workload

    agent = get_agent("rlscheduler")
    for run in map(Path, args.run_dirs):
        trial = Path(sorted(glob.glob(str(run / "*" / "trial_*")))[0])
        env = RLSchedulerEnvConfig.from_dict(json.loads((trial / "params.json").read_text())["env_config"])
        workload = load_env_workload(env)
        record = json.loads((run / "schedrl_run.json").read_text())
        evaluation = json.loads((run / "evaluation.json").read_text())
        judge = agent.judge(env)
        validation_zone = judge.split_range(len(workload), validation=True)
        evaluation_zone = judge.split_range(len(workload))
        sets = {"run's validation": (record["validation"]["starts"], record["validation"]["length"]),
                "run's evaluation": (evaluation["starts"], evaluation["jobs"]),
                "validation zone, disjoint": (tiles(*validation_zone, args.jobs), args.jobs),
                "evaluation zone, disjoint": (tiles(*evaluation_zone, args.jobs), args.jobs)}
        scores: dict[str, dict[str, list[float]]] = {name: {} for name in sets}
        for name, (starts, length) in sets.items():
            scores[name].update(judge.score_baselines(workload, starts, length))
        for checkpoint in sorted(trial.glob("checkpoint_*")):
            policy = load_policy(checkpoint)
            for name, (starts, length) in sets.items():
                scores[name][checkpoint.name] = judge.score_policy(policy, workload, starts, length)
        disjoint = scores["evaluation zone, disjoint"]
        heuristics = [k for k in disjoint if not k.startswith("checkpoint_")]
        best = min(heuristics, key=lambda k: np.mean(disjoint[k]))
        print(f"== {run}: validation zone {validation_zone[0]}..{validation_zone[1] - 1} "
              f"({len(sets['validation zone, disjoint'][0])} disjoint windows), evaluation zone "
              f"{evaluation_zone[0]}..{evaluation_zone[1] - 1} ({len(sets['evaluation zone, disjoint'][0])}); "
              f"per-window ratio to {best} on the disjoint evaluation windows")
        print("policy".ljust(20) + "".join(name.rjust(28) for name in sets) + "ratio range".rjust(16))
        for label in scores["run's evaluation"]:
            ratio = np.asarray(disjoint[label]) / np.asarray(disjoint[best])
            print(label.ljust(20) + "".join(f"{np.mean(scores[name][label]):28.2f}" for name in sets)
                  + f"{ratio.min():8.2f}-{ratio.max():.2f}", flush=True)


if __name__ == "__main__":
    main()
