"""What a checkpoint at every iteration costs: each training iteration's time beside the time and size of the
checkpoint written after it (`Algorithm.save_to_path`, what Tune calls at every checkpoint).

    python examples/research/checkpoint_cost.py dras-pg
    python examples/research/checkpoint_cost.py rlscheduler --iterations 5 -- --batch-size 4096

The run is the agent's `schedrl train` run (its defaults, or the options after `--`), sampling in this process
(`--num-env-runners 0`), without Tune or validation: only what an iteration and a checkpoint cost. Measured on the
2-core development machine on 2026-11-26, under a load average of 10 to 16 from other runs (iterations 17 to 50 s,
several times their time on an idle machine): a DRAS-PG checkpoint took 0.014 to 0.135 s (1.1 MB), an RLScheduler
one (`-- --batch-size 4096`) 0.094 to 0.180 s (1.0 MB), under 1% of those iterations. schedrl/training/quiet.py reads
Tune's snapshot warning with it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def size_of(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agent", help="an agent of `schedrl train`")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("train_options", nargs="*", help="`schedrl train AGENT` options, after --")
    args = parser.parse_args(argv)

    import ray

    from schedrl.cli.main import build_parser
    from schedrl.cli.train import build_spec
    from schedrl.training.quiet import quiet_ray

    train_args = build_parser("train").parse_args(["train", args.agent, "--out", "unused", "--iterations", "1",
                                                   "--num-env-runners", "0", *args.train_options])
    spec = build_spec(train_args)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, **quiet_ray())
    algorithm = spec.agent_impl.algorithm_config(spec.env, spec.settings, spec.model or None).build_algo()
    for i in range(1, args.iterations + 1):
        t0 = time.perf_counter()
        algorithm.train()
        t1 = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            algorithm.save_to_path(folder)
            t2 = time.perf_counter()
            size = size_of(Path(folder))
        print(f"{args.agent} iteration {i}: {t1 - t0:.2f} s; its checkpoint {t2 - t1:.3f} s, {size / 1e6:.1f} MB",
              flush=True)
    algorithm.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
