"""The one-threshold rule's screens (issue 55, docs/experiments/inspector-trusted.md, 2026-11-29, "The tree's
threshold chosen by rollouts"): how far the rule *reject the base's proposal when it could not start within T hours
(unless it is wider than X of the machine)* does harm, as T, X, the base and the proposal's guard change.

Every screen runs an exported inspector (`--tree DIR`, e.g. one `schedrl distill --out` wrote) as the frame: its
normalisation, semantics and training zone; the rule replaces its tree in memory.

    python tools/threshold_screen.py harm --tree T --hours 0,1 [--wider 0.25] [--base f1|tuned:FILE] [--guard 24]
    python tools/threshold_screen.py bound --tree T --hours 0.25,1,6 --rule RAW.json --guard 12 --traces A,B
    python tools/threshold_screen.py train --tree T --hours 0,0.5,1 [--base f1|RAW.json] [--guard 24]
    python tools/threshold_screen.py choose --tree T --fit A,B,... --check C,D,...
    python tools/threshold_screen.py wide --tree T --trace SDSC-Par --preset rlscheduler
    python tools/threshold_screen.py export --tree T --hours 0 --wider 0.5 --out DIR   # then schedrl evaluate DIR
    python tools/threshold_screen.py starve --tree DIR --scenarios default,sdsc-sp2

`harm` is `schedrl inspector harm` on the rule (`--json FILE` keeps the rows); `bound` the harm check's bound (b)
only, over a rule fitted by `robust_base_screen.py` (its raw coefficients); `train` the rule's mean, its wide and
long jobs' means, longest wait and utilisation against F1's on the training zone; `choose` picks the rule (T of 0, 1,
2, 4 h; X none, a half, a quarter) passing most harm rows on `--fit`'s traces (windows of seed 1) and checks it on
`--check`'s (seed 97); `wide` the wide jobs' mean bounded slowdown under F1, SJF, UNICEP and the rule; `export` writes
the rule as an exported inspector (`schedrl evaluate DIR --scenario default` scores it as the one judge does);
`starve` item 3 on scenarios' evaluation windows: an exported policy's longest wait and utilisation against F1's.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from base_choice_screen import tree_over, with_guards  # noqa: E402  (tools/ is not a package)
from robust_base_screen import UNDECIDED, LinearBase, Row, bsld  # noqa: E402

from schedrl.agents.baserule.observation import TimeScaled  # noqa: E402
from schedrl.agents.inspector.tree import DecisionTree, tree_network  # noqa: E402
from schedrl.eval.inspector_harm import SEMANTICS, real_traces  # noqa: E402
from schedrl.sim import Simulator  # noqa: E402

NO_SIZE_TEST = 1.0
"""`--wider` meaning no test on the proposal's size."""


def with_rule(policy, hours: float, wider: float = NO_SIZE_TEST):
    """`policy` (an inspector) with its tree replaced by the rule: reject when the proposal could not start within
    `hours` by the requested times, unless it is wider than `wider` of the machine."""
    above = float(TimeScaled(policy.norm)._time(hours * 3600.0))
    reject = {"decide": "reject"} if wider >= NO_SIZE_TEST else \
        {"if": {"feature": "requested_share", "above": wider}, "then": {"decide": "accept"}, "else": {"decide": "reject"}}
    node = {"if": {"feature": "start_if_held", "above": above}, "then": reject, "else": {"decide": "accept"}}
    policy.module = tree_network(DecisionTree.from_dict(node, policy.module.tree.features).architecture())
    return policy


def framed(tree: str, hours: float, wider: float, base: str | None, guard: float | None):
    """The rule in `tree`'s frame, over `base` (a heuristic or tuned:FILE; None: the frame's), its proposal guard
    `guard` hours (None: the frame's)."""
    return with_rule(tree_over(tree, None, None, base=base, starvation=guard), hours, wider)


def harm_of(tree: str, hours: float, wider: float, base: str | None, guard: float | None, traces, **kwargs) -> dict:
    """`schedrl inspector harm` of the rule (its rows), through the check's own code."""
    import schedrl.eval.policies as policies
    from schedrl.eval import inspector_harm

    resolve = policies.resolve_policy
    policies.resolve_policy = lambda spec, *a, **k: with_rule(
        with_guards(resolve(spec, *a, **k), base, starvation=guard), hours, wider)
    try:
        return inspector_harm.harm(tree, traces, **kwargs)
    finally:
        policies.resolve_policy = resolve


def cmd_harm(args) -> int:
    from schedrl.eval import inspector_harm

    for hours in _floats(args.hours):
        r = harm_of(args.tree, hours, args.wider, args.base, args.guard, _traces(args.traces), windows=args.windows)
        decided = [x for x in r["rows"] if not x["undecided"]]
        print(f"T {hours:g} h, wider {args.wider:g}: {sum(x['passes'] for x in decided)} of {len(decided)} decided "
              f"rows pass all four checks ({r['seconds']:.0f} s)", flush=True)
        for x in r["rows"]:
            print(f"  {x['trace']:12s} {x['preset']:11s} {x['paired']['difference_pct']:+7.1f}% vs {x['best']}: "
                  f"{inspector_harm.verdict(x)}")
        if args.json:
            Path(args.json.format(hours=hours)).write_text(json.dumps(r))
    return 0


def cmd_bound(args) -> int:
    coef = np.asarray(json.loads(Path(args.rule).read_text())["coefficients"], dtype=float)
    traces = _traces(args.traces) or [t for t in real_traces() if t not in UNDECIDED]  # as robust_base_screen's
    rows = [Row(trace, preset) for preset in SEMANTICS for trace in traces]
    for hours in _floats(args.hours):
        t0, passed, said = time.perf_counter(), 0, []
        for r in rows:
            values = np.array([bsld(Simulator(w, r.config).run(
                with_rule(tree_over(args.tree, LinearBase(coef), None, starvation=args.guard), hours, args.wider)))
                for w in r.windows])
            ratio, upper = r.verdict(values)
            passed += upper <= 10.0
            said.append(f"{r.trace}/{r.preset[:3]} {ratio:.3f}x {upper:+.1f}%")
        print(f"T {hours:g} h: {passed} of {len(rows)} rows pass the bound; {'; '.join(said)} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return 0


def cmd_train(args) -> int:
    from schedrl.agents.inspector.config import InspectorEnvConfig
    from schedrl.agents.inspector.teacher import sources
    from schedrl.heuristics.hindsight import make_base
    from schedrl.metrics import job_metrics, summarize

    frame = tree_over(args.tree, None, None)
    own = sources(InspectorEnvConfig.from_dict(dict(frame.env_config)))[0]
    rng = np.random.default_rng(args.seed)
    windows = [own.window(rng, args.jobs)[1] for _ in range(args.windows)]
    base, coef = args.base or "f1", None
    if base.endswith(".json") and not base.startswith("tuned:"):  # a raw rule of robust_base_screen.py --out
        base, coef = None, np.asarray(json.loads(Path(base).read_text())["coefficients"], dtype=float)

    def stats(run) -> np.ndarray:
        out = []
        for w in windows:
            schedule = run(w)
            m, per_job = summarize(schedule), job_metrics(schedule)["bsld"]
            wide = np.asarray(w.procs_req) >= 0.25 * float(w.max_procs)
            long = np.asarray(w.time_req) >= 12 * 3600.0
            out.append((m.avg_bsld, per_job[wide].mean() if wide.any() else np.nan,
                        per_job[long].mean() if long.any() else np.nan, m.max_wait, m.utilization))
        return np.nanmean(np.array(out), axis=0)

    ref = stats(lambda w: make_base("f1").run(Simulator(w, own.sim_config)))
    print(f"F1 on {len(windows)} windows of {args.jobs} jobs: mean {ref[0]:.2f}")
    for hours in _floats(args.hours):
        def run(w, hours=hours):
            policy = tree_over(args.tree, None if coef is None else LinearBase(coef), None, base=base,
                               starvation=args.guard)
            return Simulator(w, own.sim_config).run(with_rule(policy, hours, args.wider))
        s = stats(run)
        print(f"T {hours:g} h: mean {s[0] / ref[0]:.3f}x F1's, wide jobs {s[1] / ref[1]:.3f}x, long jobs "
              f"{s[2] / ref[2]:.3f}x, longest wait {s[3] / ref[3]:.2f}x, utilisation {100 * (s[4] - ref[4]):+.1f} pt",
              flush=True)
    return 0


def cmd_choose(args) -> int:
    scores = {}
    for hours, wider in itertools.product((0.0, 1.0, 2.0, 4.0), (NO_SIZE_TEST, 0.5, 0.25)):
        r = harm_of(args.tree, hours, wider, args.base, args.guard, _traces(args.fit), seed=1)
        rows = [x for x in r["rows"] if not x["undecided"]]
        passed = sum(x["passes"] for x in rows)
        log = float(np.mean([np.log(x["means"]["policy"] / x["means"][x["best"]]) for x in rows]))
        scores[(hours, wider)] = (passed, -log)
        print(f"fit: T {hours:g} h, wider {wider:g}: {passed} of {len(rows)} rows pass, mean log ratio {log:+.3f} "
              f"({r['seconds']:.0f} s)", flush=True)
    hours, wider = max(scores, key=lambda k: scores[k])
    r = harm_of(args.tree, hours, wider, args.base, args.guard, _traces(args.check), seed=97)
    print(f"chosen T {hours:g} h, wider {wider:g}: {sum(x['passes'] for x in r['rows'])} of {len(r['rows'])} "
          "held-out rows pass all four checks")
    return 0


def cmd_wide(args) -> int:
    from schedrl.heuristics.hindsight import make_base
    from schedrl.metrics import job_metrics
    from schedrl.scenarios.workload import WorkloadSpec, cleaning_for
    from schedrl.sim import SimConfig
    from schedrl.workload.sampling import choose_starts, sequence

    frame = framed(args.tree, _floats(args.hours)[0], args.wider, args.base, args.guard)
    config = replace(SimConfig.preset(args.preset), backfill=frame.record.sim_config.backfill)
    workload = WorkloadSpec(args.trace, cleaning_for(args.preset), args.preset).load()
    means: dict[str, list[float]] = {name: [] for name in ("f1", "sjf", "unicep", "rule")}
    for s in choose_starts(workload, 1024, args.windows, 97, warn=lambda m: None):
        w = sequence(workload, s, 1024)
        wide = np.asarray(w.procs_req) >= 0.25 * float(w.max_procs)
        if not wide.any():
            continue
        for name in means:
            sim = Simulator(w, config)
            schedule = sim.run(frame) if name == "rule" else make_base(name).run(sim)
            means[name].append(float(job_metrics(schedule)["bsld"][wide].mean()))
    print(f"{args.trace} ({args.preset}), the wide jobs' mean bounded slowdown: " +
          ", ".join(f"{name} {np.mean(v):.1f}" for name, v in means.items()))
    return 0


def cmd_export(args) -> int:
    from schedrl.agents.inspector.distill import Distilled, export_tree
    from schedrl.agents.inspector.tree import Units

    hours = _floats(args.hours)[0]
    frame = framed(args.tree, hours, args.wider, args.base, args.guard)
    rule = frame.module.tree
    made = Distilled(tree=rule, depth=rule.depth, units=Units(float(frame.norm.time_scale)),
                     source={"hand-made": f"reject when it could not start within {hours:g} h"
                             + ("" if args.wider >= NO_SIZE_TEST else f", unless wider than {args.wider:g}"),
                             "frame": args.tree})
    out = export_tree(made, frame, args.out, Path(args.out).name, ["python", "tools/threshold_screen.py", *sys.argv[1:]])
    print(f"exported the rule to {out.directory}")
    return 0


def cmd_starve(args) -> int:
    from schedrl.eval.policies import resolve_policy
    from schedrl.scenarios import scoring
    from schedrl.scenarios.registry import get_scenario

    for name in args.scenarios.split(","):
        scores = scoring.score(get_scenario(name), {"policy": resolve_policy(f"checkpoint:{args.tree}")})
        ref, pol = scores.metrics["F1"], scores.metrics["policy"]
        wait = {k: np.array([m.max_wait for m in v]) for k, v in (("ref", ref), ("pol", pol))}
        util = {k: np.mean([m.utilization for m in v]) for k, v in (("ref", ref), ("pol", pol))}
        print(f"{name}: longest wait {wait['pol'].mean() / wait['ref'].mean():.2f}x F1's (mean over the windows), "
              f"{wait['pol'].max() / wait['ref'].max():.2f}x (their maximum); utilisation "
              f"{100 * (util['pol'] - util['ref']):+.1f} points")
    return 0


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def _traces(text: str | None):
    return None if text in (None, "all") else text.split(",")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="screen", required=True)
    for name, run in (("harm", cmd_harm), ("bound", cmd_bound), ("train", cmd_train), ("choose", cmd_choose),
                      ("wide", cmd_wide), ("export", cmd_export), ("starve", cmd_starve)):
        s = sub.add_parser(name)
        s.set_defaults(run=run)
        s.add_argument("--tree", required=True, help="an exported inspector: the rule's frame")
        s.add_argument("--hours", default="0", help="T, comma-separated hours")
        s.add_argument("--wider", type=float, default=NO_SIZE_TEST, help="accept proposals wider than this share")
        s.add_argument("--base", default=None, help="the base: a heuristic or tuned:FILE (train: also a raw RULE.json)")
        s.add_argument("--guard", type=float, default=None, help="hours: the proposal's guard (default: the frame's)")
        s.add_argument("--traces", default=None, help="comma-separated (default: every real trace the check takes)")
        s.add_argument("--windows", type=int, default=20 if name in ("harm", "wide") else 32)
        if name == "harm":
            s.add_argument("--json", default=None, help="write the rows here ({hours} is replaced)")
        if name == "bound":
            s.add_argument("--rule", required=True, help="raw coefficients written by robust_base_screen.py --out")
        if name == "train":
            s.add_argument("--jobs", type=int, default=256)
            s.add_argument("--seed", type=int, default=0)
        if name == "choose":
            s.add_argument("--fit", required=True, help="the traces the rule is chosen on")
            s.add_argument("--check", required=True, help="the traces it is checked on")
        if name == "starve":
            s.add_argument("--scenarios", default="default,sdsc-sp2")
        if name == "export":
            s.add_argument("--out", required=True, help="the directory the rule is exported to")
        if name == "wide":
            s.add_argument("--trace", required=True)
            s.add_argument("--preset", default="rlscheduler")
    args = p.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
