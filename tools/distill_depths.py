"""Depth against retained gain: `schedrl distill` a policy at several depths and score each tree beside its policy.

    python tools/distill_depths.py zoo:inspector-lublin1-s0 --depths 2,3,4,6,8 --scenarios lublin1,sdsc-sp2,default

For each depth: the tree (`schedrl distill POLICY --depth D --rounds R --windows W --seed S --out DIR`), then
`schedrl inspector score --scenario SC --part evaluation --policies REF,POLICY,checkpoint:DIR` on each scenario (the
scenario's evaluation windows, paired with its reference: the one judge every table uses). Prints a Markdown table:
the tree's mean against its policy's (retained: within 2% is the target), its paired verdict against the reference,
and the decisions where tree and policy disagreed on the last DAgger round's training windows (the tree acting).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def schedrl(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "schedrl", *args], check=True, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("policy")
    p.add_argument("--depths", default="2,3,4,6,8")
    p.add_argument("--scenarios", default="lublin1,sdsc-sp2,default")
    p.add_argument("--rounds", default="6")
    p.add_argument("--windows", default="16")
    p.add_argument("--seed", default="0")
    p.add_argument("--json", help="also write the rows here")
    args = p.parse_args(argv)
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
    print("| depth | scenario | policy | tree | tree vs policy | tree vs reference, 95% interval, verdict | "
          "disagreed (last round) |")
    print("|--:|---|--:|--:|--:|---|--:|")
    for r in rows:
        t = r["tree_vs_reference"]
        print(f"| {r['depth']} | {r['scenario']} | {r['policy']:.2f} | {r['tree']:.2f} | {r['retained_pct']:+.1f}% | "
              f"{t['difference_pct']:+.1f}% [{t['ci95_pct'][0]:+.1f}, {t['ci95_pct'][1]:+.1f}] vs "
              f"{r['reference']}, {t['verdict']} | {r['disagreed']} of {r['decisions']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
