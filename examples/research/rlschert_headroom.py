"""How far below SAF can a scheduler get on RLSchert's cluster without kills? Heuristic probes, no training.

    python examples/research/rlschert_headroom.py [--hold 40,50,60 --reserve 2,3,4] [--training-seed 2]

Issue 12 #2 asks RLSchert without kills for <= 0.95 x the best of SJF/SAF/Tetris*. This prints the
average slowdown of simple policies on the discrete-time cluster at the paper's settings (no kills,
recorded re-estimates) on three sets of sequences: the 16 held-out sequences of the training runs
(`--eval-sequences 16 --seed 0`: sequence seeds from 20000; `--training-seed S`: those of the run with
`--seed S`), and two sets of 64 others (seeds from
30000, `schedrl select`'s default, and from 7). The policies:

- SAF, SJF: RLSchert's heuristics (pre-run prediction as the length; only jobs that can start now).
- SAF/SJF with the true run time: the same rule told each job's real length (an oracle no scheduler has:
  what perfect runtime prediction would be worth to these rules).
- SAF + hold L/R: SAF, but a job predicted longer than L steps starts only if it leaves at least R units
  free; otherwise the policy waits (the void action with work that fits: DeepRM's non-work-conserving
  idea, which RLSchert's `--work-conserving` option forbids). The best L/R of the grid is chosen on the
  very sequences it is scored on, so its row is an optimistic figure for that family.

docs/experiments/rlschert.md ("How much is there to gain without kills") reports the output.
"""

from __future__ import annotations

import argparse

import numpy as np

from schedrl.agents.rlschert.config import RLSchertEnvConfig
from schedrl.agents.rlschert.evaluation import run_sequences, validation_seeds
from schedrl.dtsim.heuristics import SAFHold, make_policy, startable


class Rule:
    """Start the startable job of the best score (-length^a x units^b) now (a = 1: SJF, b = 1: SAF)."""

    def __init__(self, size_power: float, oracle: bool = False):
        self.size_power, self.oracle = size_power, oracle

    def act(self, sim) -> int:
        jobs = startable(sim)
        if not jobs:
            return sim.config.void_action
        length = sim.real if self.oracle else sim.len_param
        scores = [-length[j] * sim.units[j] ** self.size_power for _, j in jobs]
        return jobs[int(np.argmax(scores))][0]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hold", default="40,50,60", help="lengths L (steps) above which SAF + hold holds a job")
    p.add_argument("--reserve", default="2,3,4", help="free units R a held job must leave")
    p.add_argument("--training-seed", type=int, default=0,
                   help="the training run (its --seed) whose 16 held-out sequences make the first set (default 0)")
    args = p.parse_args()
    config = RLSchertEnvConfig(kill=False)
    table = config.job_table()
    base = 20000 + args.training_seed  # the driver's evaluation seeds for a run of that seed
    sets = {f"held out (16, from {base})": validation_seeds(16, base), "64 from 30000": validation_seeds(64, 30000),
            "64 from 7": validation_seeds(64, 7)}
    policies = {"SAF": lambda: make_policy("saf"), "SJF": lambda: make_policy("sjf"),
                "SAF, true run time": lambda: Rule(1.0, oracle=True), "SJF, true run time": lambda: Rule(0.0, oracle=True)}
    holds = [(int(h), int(r)) for h in args.hold.split(",") for r in args.reserve.split(",")]
    for h, r in holds:  # the library's SAF + hold (`schedrl.dtsim.heuristics.SAFHold`, RLSchert's `--teacher saf-hold`)
        policies[f"SAF + hold L={h} R={r}"] = lambda h=h, r=r: SAFHold(hold=h, reserve=r)
    values = {name: {s: float(np.mean([x["slowdown"] for x in run_sequences(lambda i, m=make: m(), config, seeds, table)]))
                     for s, seeds in sets.items()} for name, make in policies.items()}
    print("average slowdown (x SAF); RLSchert's cluster at the paper's settings, no kills")
    print(f"{'policy':<26}" + "".join(f"{s:>30}" for s in sets))
    for name, row in values.items():
        print(f"{name:<26}" + "".join(f"{row[s]:>20.3f} ({row[s] / values['SAF'][s]:.3f}x)" for s in sets))
    for s in sets:
        best = min((values[f"SAF + hold L={h} R={r}"][s], f"L={h} R={r}") for h, r in holds)
        print(f"best hold on {s}: {best[1]} {best[0]:.3f} ({best[0] / values['SAF'][s]:.3f}x SAF)")


if __name__ == "__main__":
    main()
