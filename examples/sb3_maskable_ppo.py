"""Train sb3-contrib's MaskablePPO on `schedrl/RLScheduler-v0`, then score it against SJF with schedrl's metrics.

    pip install -e '.[sb3]'
    python examples/sb3_maskable_ppo.py --steps 5000

Any model trained outside schedrl is scored the same way: `FunctionPolicy.for_env(act, env)` turns an
observation -> action callable into a policy that sees the simulator exactly as the env does, and
`compare` runs it beside our heuristics on the same sequences.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
from sb3_contrib import MaskablePPO

import schedrl  # noqa: F401  (registers schedrl/RLScheduler-v0)
from schedrl.eval.compare import choose_starts, compare
from schedrl.eval.policies import FunctionPolicy


def main(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="default", help="catalog name or SWF path")
    parser.add_argument("--steps", type=int, default=5000, help="MaskablePPO training steps (env decisions)")
    parser.add_argument("--jobs", type=int, default=64, help="jobs per training episode and evaluation sequence")
    parser.add_argument("--sequences", type=int, default=5, help="evaluation sequences")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    # the env's settings as keyword arguments; MaskablePPO finds its action_masks() method
    env = gym.make("schedrl/RLScheduler-v0", trace=args.trace, sequence_length=args.jobs, metric="bsld",
                   reward_baseline="sjf")
    n_steps = min(512, args.steps)  # env steps per rollout
    model = MaskablePPO("MultiInputPolicy", env, n_steps=n_steps, batch_size=min(128, n_steps), learning_rate=1e-3,
                        seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.steps)

    def act(observation):
        return model.predict(observation, action_masks=observation["action_mask"] > 0, deterministic=True)

    policy = FunctionPolicy.for_env(act, env, name="MaskablePPO")
    base = env.unwrapped
    starts = choose_starts(base.workload, args.jobs, args.sequences, seed=args.seed + 1)
    result = compare(base.workload, ["fcfs", "sjf", policy], ["none"], starts, args.jobs, metric="bsld",
                     config=base.sim_config, progress=False)
    print(result.to_text())
    return result


if __name__ == "__main__":
    main()
