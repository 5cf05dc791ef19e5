"""Decision latency of a learned RLScheduler policy with 128 pending jobs (paper Table IX: 0.30 ms).

Times `CheckpointPolicy.pick(sim)`: observation building from the simulator state plus one greedy
forward pass of the kernel network (torch, CPU, batch of one). Also times the forward pass alone
and the environment step. Run: `python benchmarks/bench_policy.py [--repeats 2000]`.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def busy_simulator(n_waiting: int = 200):
    """A simulator paused at a decision with more than 128 jobs waiting (all submitted at once)."""
    from schedrl.sim import DECIDE_PICK, SimConfig, Simulator
    from schedrl.workload import Workload
    from schedrl.workload.fields import SWF_FIELDS

    rng = np.random.default_rng(0)
    n = n_waiting
    runs = rng.integers(60, 20_000, n)
    cols = {f.name: np.full(n, -1, dtype=f.dtype) for f in SWF_FIELDS}
    cols.update(job_id=np.arange(1, n + 1), submit=np.zeros(n, np.int64), run=runs, time_req=runs,
                procs_alloc=rng.integers(1, 64, n), procs_req=rng.integers(1, 64, n), status=np.ones(n, np.int64),
                user=rng.integers(1, 50, n))
    sim = Simulator(Workload(cols, max_procs=256, max_nodes=256, name="busy"), SimConfig())
    assert sim.advance() == DECIDE_PICK
    return sim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=2000)
    args = parser.parse_args()

    import torch

    from schedrl.agents.rlscheduler.observation import JobFeatures, n_features
    from schedrl.agents.rlscheduler.policy import CheckpointPolicy
    from schedrl.agents.rlscheduler.modules import module_spec
    import gymnasium as gym
    from schedrl.agents.rlscheduler.keys import MAX_OBSV_SIZE, OBS_ACTION_MASK, OBS_JOBS

    torch.set_num_threads(1)
    f = n_features(1)
    obs_space = gym.spaces.Dict({OBS_JOBS: gym.spaces.Box(0.0, 1.0, (MAX_OBSV_SIZE, f), np.float32),
                                 OBS_ACTION_MASK: gym.spaces.Box(0.0, 1.0, (MAX_OBSV_SIZE,), np.float32)})
    spec = module_spec("kernel")
    spec.observation_space, spec.action_space, spec.inference_only = obs_space, gym.spaces.Discrete(MAX_OBSV_SIZE), True
    module = spec.build().eval()
    sim = busy_simulator()
    workload = sim.workload
    policy = CheckpointPolicy(module, {"norm": JobFeatures.from_trace(workload).to_dict()})
    assert len(sim.queue) >= MAX_OBSV_SIZE

    def timed(fn) -> float:
        for _ in range(50):
            fn()
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(args.repeats):
                fn()
            samples.append((time.perf_counter() - t0) / args.repeats)
        return statistics.median(samples)

    pick = timed(lambda: policy.pick(sim))
    jobs, mask, _ = policy._builder.build(sim)
    forward = timed(lambda: policy.scores(jobs, mask))
    build = timed(lambda: policy._builder.build(sim))
    print(f"{'what':40s} {'ms per decision':>16s}")
    print(f"{'pick (observation + forward + argmax)':40s} {pick * 1e3:16.4f}")
    print(f"{'  forward pass alone (torch, 1 thread)':40s} {forward * 1e3:16.4f}")
    print(f"{'  observation building alone':40s} {build * 1e3:16.4f}")
    print("paper (Table IX, Xeon): 0.30 ms; target here: <= 0.1 ms")


if __name__ == "__main__":
    main()
