"""Depth against retained gain: `schedrl distill` a policy at several depths and score each tree beside its policy.

    python tools/distill_depths.py zoo:inspector-lublin1-s0 --depths 2,3,4,6,8 --scenarios lublin1,sdsc-sp2,default
    python tools/distill_depths.py zoo:rlscheduler-lublin1-s0 --judge evaluate --target rank --scenarios lublin1,default

For each depth: the tree (`schedrl distill POLICY --depth D --rounds R --windows W --seed S --out DIR`), then on each
scenario its evaluation windows, paired with the scenario's reference (the one judge every table uses): for an
inspector `schedrl inspector score --scenario SC --part evaluation --policies REF,POLICY,checkpoint:DIR`; with
`--judge evaluate` (an RLScheduler kernel) `schedrl evaluate DIR --scenario SC --json` for the tree and, once per
scenario, for the policy, and the tree paired with its policy on the same windows (`schedrl.eval.paired.against`).
Prints a Markdown table: the tree's mean against its policy's (retained: within 2% is the target), its paired verdict
against the reference, and the decisions where tree and policy disagreed on the last DAgger round's training windows
(the tree acting).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def schedrl(*args: str, stdout: Path | None = None) -> None:
    if stdout is None:
        subprocess.run([sys.executable, "-m", "schedrl", *args], check=True, stdout=subprocess.DEVNULL)
        return
    with open(stdout, "w") as out:
        subprocess.run([sys.executable, "-m", "schedrl", *args], check=True, stdout=out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("policy")
    p.add_argument("--depths", default="2,3,4,6,8")
    p.add_argument("--scenarios", default="lublin1,sdsc-sp2,default")
    p.add_argument("--rounds", default="6")
    p.add_argument("--windows", default="16")
    p.add_argument("--seed", default="0")
    p.add_argument("--json", help="also write the rows here")
    p.add_argument("--judge", choices=("inspector", "evaluate"), default="inspector",
                   help="inspector: `schedrl inspector score`; evaluate: `schedrl evaluate` per policy (rlscheduler)")
    p.add_argument("--target", choices=("score", "centred", "rank"), help="`schedrl distill --target` (an RLScheduler kernel)")
    p.add_argument("--keep", metavar="DIR", help="keep the trees and tables here and reuse a tree already there "
                                                 "(default: a temporary directory)")
    args = p.parse_args(argv)
    if args.judge == "evaluate":
        rows = evaluated(args)
    else:
        rows = inspector_scored(args)
    print("| depth | scenario | policy | tree | tree vs policy | tree vs reference, 95% interval, verdict | "
          "disagreed (last round) |")
    print("|--:|---|--:|--:|--:|---|--:|")
    for r in rows:
        t = r["tree_vs_reference"]
        vs_policy = f"{r['retained_pct']:+.1f}%"
        if r.get("tree_vs_policy"):
            c = r["tree_vs_policy"]
            vs_policy += f" [{c['ci95_pct'][0]:+.1f}, {c['ci95_pct'][1]:+.1f}]" if c.get("ci95_pct") else ""
        print(f"| {r['depth']} | {r['scenario']} | {r['policy']:.2f} | {r['tree']:.2f} | {vs_policy} | "
              f"{t['difference_pct']:+.1f}% [{t['ci95_pct'][0]:+.1f}, {t['ci95_pct'][1]:+.1f}] vs "
              f"{r['reference']}, {t['verdict']} | {r['disagreed']} of {r['decisions']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


def distilled(args, depth: str, out: Path) -> dict:
    """Distil at `depth` into `out` (with --keep, a tree already there is reused); the last DAgger round's row."""
    if not (args.keep and (out / "policy.json").exists()):
        schedrl("distill", args.policy, "--depth", depth, "--rounds", args.rounds, "--windows", args.windows,
                "--seed", args.seed, "--out", str(out), *(("--target", args.target) if args.target else ()))
    return json.loads((out / "policy.json").read_text())["architecture"]["distilled_from"]["dagger"][-1]


def evaluated(args) -> list[dict]:
    """`schedrl evaluate` of the policy and of each depth's tree on each scenario; the tree paired with its policy."""
    from schedrl.eval.paired import against

    rows, policy_runs = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep or tmp)
        base.mkdir(parents=True, exist_ok=True)

        def evaluate(spec: str, scenario: str, file: Path) -> tuple[dict, dict]:
            if not (args.keep and file.exists() and file.stat().st_size):  # --keep: a table already there is reused
                schedrl("evaluate", spec, "--scenario", scenario, "--json", stdout=file)
            result = json.loads(file.read_text())
            learned = [r for r in result["results"] if r["policy"] == "RL"][0]
            return {**learned, "metric": result["metric"]}, result["comparisons"][0]

        for depth in args.depths.split(","):
            out = base / f"d{depth}{'-' + args.target if args.target else ''}"
            last = distilled(args, depth, out)
            for scenario in args.scenarios.split(","):
                if scenario not in policy_runs:
                    policy_runs[scenario] = evaluate(args.policy, scenario, base / f"policy-{scenario}.json")
                policy, _ = policy_runs[scenario]
                tree, versus = evaluate(str(out), scenario, base / f"{out.name}-{scenario}.json")
                paired = against({"tree": tree["per_sequence"], "policy": policy["per_sequence"]}, "tree", "policy",
                                 tree["metric"])
                row = {"depth": int(depth), "scenario": scenario, "reference": versus["baseline"],
                       "policy": policy["mean"], "tree": tree["mean"],
                       "retained_pct": 100 * (tree["mean"] - policy["mean"]) / policy["mean"],
                       "tree_vs_policy": paired, "policy_vs_reference": policy_runs[scenario][1],
                       "tree_vs_reference": versus, "disagreed": last["disagreed"], "decisions": last["decisions"],
                       "fit_agreement": last["fit_agreement"], "leaves": last["leaves"]}
                rows.append(row)
                print(f"depth {depth} on {scenario}: tree {tree['mean']:.2f}, policy {policy['mean']:.2f} "
                      f"({row['retained_pct']:+.1f}%)", file=sys.stderr, flush=True)
    return rows


def inspector_scored(args) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for depth in args.depths.split(","):
            out = Path(tmp) / f"d{depth}"
            schedrl("distill", args.policy, "--depth", depth, "--rounds", args.rounds, "--windows", args.windows,
                    "--seed", args.seed, "--out", str(out))
            last = json.loads((out / "policy.json").read_text())["architecture"]["distilled_from"]["dagger"][-1]
            for scenario in args.scenarios.split(","):
                file = Path(tmp) / f"{scenario}-{depth}.json"
                schedrl("inspector", "score", "--scenario", scenario, "--part", "evaluation", "--policies",
                        f"{args.policy},checkpoint:{out}", "--json", str(file))
                result = json.loads(file.read_text())
                by = {r["method"]: r for r in result["rows"]}
                policy, tree = by[args.policy], by[f"checkpoint:{out}"]
                row = {"depth": int(depth), "scenario": scenario, "reference": result["reference"],
                       "policy": policy["mean"], "tree": tree["mean"],
                       "retained_pct": 100 * (tree["mean"] - policy["mean"]) / policy["mean"],
                       "policy_vs_reference": policy["paired"], "tree_vs_reference": tree["paired"],
                       "disagreed": last["disagreed"], "decisions": last["decisions"]}
                rows.append(row)
                print(f"depth {depth} on {scenario}: tree {tree['mean']:.2f}, policy {policy['mean']:.2f} "
                      f"({row['retained_pct']:+.1f}%)", file=sys.stderr, flush=True)
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
