"""`schedrl inspector probe`: what a trained inspector does on a scenario's sequences, and what random rejections do.

    schedrl inspector probe CKPT [--scenario lublin1] [--part validation]   # its reject probabilities, its latency
    schedrl inspector probe --random 0.1 --draws 8 [--scenario lublin1]     # the base with random rejections

For a checkpoint: the reject probability at every inspection of the base's own schedule (the policy is asked, the base
decides, so the probabilities describe the same points for every checkpoint), and the wall time per greedy inspection.
With `--random P`: the base heuristic with each proposal rejected with probability P (where a rejection is allowed),
`--draws` seeded draws per sequence, beside the base alone.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from schedrl.numbers import finite_options


def reject_probabilities(policy, sim_config, sequences) -> np.ndarray:
    """The policy's reject probability at each point where the base alone would decide, on each sequence."""
    from schedrl.sim import Simulator

    out = []

    class Asked:
        def defer(self, sim):
            j = policy._propose(sim)
            if policy.reject_mask.allows(sim, j):
                out.append(1.0 / (1.0 + np.exp(-policy.reject_logit(policy.observer.build(sim, j)))))
            return False

        def pick(self, sim):
            return policy.pick(sim)

    for jobs in sequences:
        Simulator(jobs, sim_config).run(Asked())
    return np.array(out)


class RandomRejections:
    """The base heuristic, each proposal rejected with probability `p` where a rejection is allowed."""

    def __init__(self, base: str, p: float, seed: int):
        from schedrl.agents.inspector.config import make_base

        self.base, self.p, self.rng = make_base(base), p, np.random.default_rng(seed)

    def defer(self, sim) -> bool:
        return sim.has_event and self.rng.random() < self.p

    def pick(self, sim) -> int:
        return self.base.pick(sim)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="schedrl inspector", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("probe", help="a trained inspector's reject probabilities and latency, or random rejections")
    p.add_argument("checkpoint", nargs="?", help="an `inspector` checkpoint or exported policy")
    p.add_argument("--scenario", default="lublin1", help="a trace scenario (default lublin1)")
    p.add_argument("--part", choices=("validation", "evaluation"), default="validation",
                   help="which of the scenario's sequences (default validation)")
    p.add_argument("--random", type=float, default=None, metavar="P",
                   help="instead of a checkpoint: the base with each proposal rejected with probability P")
    p.add_argument("--draws", type=int, default=8, help="seeded draws per sequence with --random (default 8)")
    p.add_argument("--base", default="f1", help="the base heuristic with --random (default f1)")
    args = finite_options(parser).parse_args(argv)
    from schedrl.agents.checkpoint import CheckpointError, load_policy
    from schedrl.heuristics.tuned import RuleError
    from schedrl.metrics import summarize
    from schedrl.scenarios import scoring
    from schedrl.scenarios.registry import get_scenario
    from schedrl.sim import Simulator
    from schedrl.workload.errors import TraceError
    from schedrl.workload.sampling import sequence

    try:
        if (args.checkpoint is None) == (args.random is None):
            raise ValueError("give a checkpoint or --random P (not both)")
        if args.random is not None and not (0.0 <= args.random <= 1.0 and args.draws >= 1):
            raise ValueError(f"--random must be in [0, 1] and --draws >= 1, got {args.random} and {args.draws}")
        scenario = get_scenario(args.scenario)
        scenario.trace_only(f"scenario {scenario.name!r} is generated on the discrete-time cluster; the inspector "
                            "runs on trace scenarios")
        data = scoring.load(scenario)
        seqs = scoring.sequences(scenario, data, args.part)
        length = getattr(scenario, args.part).jobs
        source = seqs.data if seqs.data is not None else data  # an evaluation on its own trace (lublin1)
        sequences = [sequence(source, s, length) for s in seqs.ids]
        if args.random is None:
            policy = load_policy(args.checkpoint)
            if policy.record.agent != "inspector":
                raise ValueError(f"{args.checkpoint} is a {policy.record.agent} checkpoint, not an inspector")
    except (ValueError, CheckpointError, TraceError, RuleError, FileNotFoundError) as e:
        print(f"schedrl inspector: error: {e}", file=sys.stderr)
        return 2
    where = f"scenario {scenario.name}, {len(sequences)} {args.part} sequences of {length} jobs"
    if args.random is None:
        probs = reject_probabilities(policy, scenario.sim, sequences)
        print(f"reject probability at the {len(probs)} inspections of {policy.base_name.upper()}'s schedule ({where}): "
              f"mean {probs.mean():.4f}, median {np.median(probs):.4f}, max {probs.max():.4f}, "
              f"above 0.5 at {int((probs > 0.5).sum())}")
        calls = [0]
        defer = policy.defer

        def counted(sim):
            calls[0] += 1
            return defer(sim)

        policy.defer = counted
        t0 = time.perf_counter()
        values = [summarize(Simulator(jobs, scenario.sim).run(policy)).value(scenario.metric) for jobs in sequences]
        seconds = time.perf_counter() - t0
        print(f"greedy: {scenario.metric} {np.mean(values):.2f}; {calls[0]} inspections in {seconds:.2f} s, "
              f"{1e3 * seconds / max(calls[0], 1):.3f} ms each (the base's pick, the features, the network, the "
              f"simulator)")
        return 0
    print(f"{args.base.upper()} with each proposal rejected with probability {args.random} ({where}, {args.draws} "
          f"draws each): {scenario.metric}")
    print(f"{'start':>7} {'base':>9} {'mean':>9} {'best':>9} {'worst':>9}")
    from schedrl.agents.inspector.config import make_base

    for start, jobs in zip(seqs.ids, sequences):
        base = summarize(make_base(args.base).run(Simulator(jobs, scenario.sim))).value(scenario.metric)
        drawn = [summarize(Simulator(jobs, scenario.sim).run(RandomRejections(args.base, args.random, k)))
                 .value(scenario.metric) for k in range(args.draws)]
        print(f"{start:>7} {base:9.2f} {np.mean(drawn):9.2f} {min(drawn):9.2f} {max(drawn):9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
