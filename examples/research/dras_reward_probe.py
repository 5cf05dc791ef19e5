"""What DRAS's rewards pay for: the episode return and average wait of fixed slot rules in `schedrl/DRAS-v0`.

    python examples/research/dras_reward_probe.py --trace SDSC-SP2 --window 10 --episodes 6 --reward capability

Three rules choose at both levels: `first` (always the first valid slot: the oldest job at level 1, the
first candidate in queue order at level 2; FCFS-like), `random` (uniform over valid slots, seeded) and
`last` (the youngest valid slot). Each runs the same `--episodes` training sequences (seeded starts in
the training part). A reward that pays most for the rule with the worse wait steers learning away from
short waits: docs/experiments/dras.md uses this to read the SDSC-SP2 runs.
"""

from __future__ import annotations

import argparse

import numpy as np

from schedrl.agents.dras.env import DRASEnv
from schedrl.agents.dras.keys import OBS_ACTION_MASK


def probe(trace: str, window: int, episodes: int, length: int, reward: str, train_fraction: float,
          seed: int) -> dict[str, tuple[float, float]]:
    """Rule -> (mean episode return, mean average wait in seconds) over the same seeded training sequences."""
    env = DRASEnv({"trace": trace, "window": window, "sequence_length": length, "reward": reward,
                   "train_fraction": train_fraction})
    rng = np.random.default_rng(seed)
    end = int(train_fraction * len(env.workload)) - length
    starts = [int(s) for s in rng.integers(0, end, episodes)]
    out = {}
    for rule in ("first", "random", "last"):
        pick = np.random.default_rng(seed)
        returns, waits = [], []
        for s in starts:
            obs, _ = env.reset(options={"start": s})
            total, done, info = 0.0, False, {}
            while not done:
                valid = np.flatnonzero(obs[OBS_ACTION_MASK])
                a = valid[0] if rule == "first" else valid[-1] if rule == "last" else pick.choice(valid)
                obs, r, done, _, info = env.step(int(a))
                total += r
            returns.append(total)
            waits.append(info["metric_value"])
        out[rule] = (float(np.mean(returns)), float(np.mean(waits)))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", default="default")
    p.add_argument("--window", type=int, default=10)
    p.add_argument("--episodes", type=int, default=6)
    p.add_argument("--sequence-length", type=int, default=512)
    p.add_argument("--reward", choices=("capability", "capacity"), default="capability")
    p.add_argument("--train-fraction", type=float, default=0.7)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    result = probe(a.trace, a.window, a.episodes, a.sequence_length, a.reward, a.train_fraction, a.seed)
    print(f"{a.reward} reward on {a.trace}, W={a.window}: {a.episodes} training sequences of {a.sequence_length} jobs")
    print("rule      return   avg wait (s)")
    for rule, (ret, wait) in result.items():
        print(f"{rule:<7} {ret:8.2f}   {wait:12.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
