"""`schedrl mrsch goals CKPT`: how MRSch's goal vector adapts to the workload (MRSch Fig. 8/9 analogue).

    schedrl mrsch goals runs/mrsch/mrsch/trial_*/checkpoint_000010 --augments S3,S5 --plot goals.png

Runs the trained policy (any MRSch-family checkpoint: `mrsch` or `mrsch-scalar`) on one held-out sequence of
the checkpoint's trace under each augmentation (same jobs, same start; the augmentation decides which
jobs request burst buffer and how many nodes), records the goal vector r (Eq. 1) at every decision,
prints each resource's mean weight per augmentation and plots r_BB over time. S5 halves S4's node
requests, so burst buffer is the scarcer resource there and its weight should sit higher than on S3.
Bad input prints one `error:` line and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

import numpy as np

from schedrl.agents.mrsch.goal import sim_goal


class GoalRecorder:
    """Wraps a policy: records (time, goal vector) at every pick, then lets the policy decide."""

    def __init__(self, policy):
        self.policy = policy
        self.times: list[float] = []
        self.goals: list[np.ndarray] = []

    def pick(self, sim) -> int:
        self.times.append(float(sim.now))
        self.goals.append(sim_goal(sim))
        return self.policy.pick(sim)


def goal_trace(policy, agent, env_config, start: int | None, jobs: int, seed: int = 0) -> dict:
    """The policy on one held-out sequence of `env_config`'s (augmented) trace: decision times, goal vectors,
    resource names and the sequence's average wait."""
    from schedrl.metrics import summarize
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    judge = agent.judge(env_config)
    workload = judge.load()
    if start is None:
        start = judge.evaluation_ids(workload, 1, seed, jobs)[0]
    sim = Simulator(sequence(workload, start, jobs), judge.sim)
    recorder = GoalRecorder(policy)
    schedule = sim.run(recorder)  # pick by pick (a compiled fast path would bypass the recorder)
    t0 = float(np.min(sim.state.submit))
    return {"augment": env_config.augment, "start": int(start), "jobs": jobs, "resources": list(sim.resources),
            "hours": [(t - t0) / 3600.0 for t in recorder.times], "goals": [g.tolist() for g in recorder.goals],
            "avg_wait": summarize(schedule).avg_wait}


ROLLING = 50
"""Decisions in the goal plot's rolling mean (each decision's own goal is drawn faintly behind it)."""


def rolling_mean(values: np.ndarray, window: int) -> np.ndarray:
    """The mean of each value and the `window - 1` before it (fewer at the start)."""
    sums = np.cumsum(np.concatenate([[0.0], np.asarray(values, dtype=float)]))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(ends - window, 0)
    return (sums[ends] - sums[starts]) / (ends - starts)


def plot_goals(traces: list[dict], resource: str, path: str) -> str:
    import matplotlib

    matplotlib.use("Agg")  # headless, as every plot schedrl writes
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    for i, t in enumerate(traces):
        j = t["resources"].index(resource)
        r = np.array([g[j] for g in t["goals"]])
        ax.plot(t["hours"], r, linewidth=0.5, alpha=0.35, color=f"C{i}")
        ax.plot(t["hours"], rolling_mean(r, ROLLING), linewidth=2.0, color=f"C{i}",
                label=f"{t['augment']}: rolling mean of {min(ROLLING, len(r))} decisions (mean {r.mean():.3f})")
    ax.set_xlabel("hours since the sequence's first submit")
    ax.set_ylabel(f"goal weight r_{resource}")
    ax.set_ylim(0, 1)
    first = traces[0]
    ax.set_title(f"goal vector over one held-out sequence (jobs {first['start']}..{first['start'] + first['jobs'] - 1})",
                 fontsize="medium")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="schedrl mrsch", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("goals", help="the goal vector of a trained MRSch policy over a held-out sequence, per augmentation")
    g.add_argument("checkpoint", help="an `mrsch` or `mrsch-scalar` checkpoint")
    g.add_argument("--augments", default="S3,S5", help="comma-separated presets S1..S10 (default S3,S5)")
    g.add_argument("--jobs", type=int, default=1024, help="jobs in the sequence (default 1024)")
    g.add_argument("--start", type=int, default=None, help="0-based start (default: a seeded one in the evaluation zone)")
    g.add_argument("--seed", type=int, default=1, help="seed of the start (default 1)")
    g.add_argument("--resource", default="bb", help="whose weight to plot (default bb)")
    g.add_argument("--plot", metavar="PNG", help="r_RESOURCE over time, one line per augmentation")
    g.add_argument("--json", action="store_true", help="print every decision's goal vector as JSON")
    args = parser.parse_args(argv)
    from schedrl.agents import get_agent
    from schedrl.agents.checkpoint import CheckpointError, load_policy
    from schedrl.workload.errors import TraceError

    try:
        if args.jobs < 1:
            raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
        augments = [a.strip() for a in args.augments.split(",") if a.strip()]
        if not augments:
            raise ValueError("--augments is empty")
        policy = load_policy(args.checkpoint)
        agent = get_agent(policy.record.agent)
        if not agent.name.startswith("mrsch"):
            raise ValueError(f"{args.checkpoint} is a {agent.name} checkpoint; `schedrl mrsch goals` needs an MRSch one")
        trained = agent.env_config_class.from_dict(dict(policy.record.env_config))
        traces = []
        start = args.start
        for a in augments:
            env = replace(trained, augment=a)  # ValueError naming the presets for an unknown one
            t = goal_trace(policy, agent, env, start, args.jobs, args.seed)
            start = t["start"]  # the same jobs under every augmentation
            if args.resource not in t["resources"]:
                raise ValueError(f"no resource {args.resource!r} under {a} (resources: {', '.join(t['resources'])})")
            traces.append(t)
    except (ValueError, CheckpointError, TraceError, FileNotFoundError) as e:
        print(f"schedrl mrsch: error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(traces))
    else:
        names = traces[0]["resources"]
        print(f"goal vector of {agent.name} on jobs {traces[0]['start']}..{traces[0]['start'] + args.jobs - 1} of "
              f"{trained.trace} (held out), mean over decisions")
        print("augment  decisions  " + "  ".join(f"r_{n:>6}" for n in names) + "  avg wait (s)")
        for t in traces:
            means = np.mean(np.array(t["goals"]), axis=0)
            print(f"{t['augment']:<7}  {len(t['goals']):>9}  " + "  ".join(f"{m:8.3f}" for m in means)
                  + f"  {t['avg_wait']:12.2f}")
    if args.plot:
        plot_goals(traces, args.resource, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
