"""`schedrl inspector harm POLICY`: does a learned scheduler do harm anywhere it did not train? (issue 55's items 1
and 3: do no harm, no starvation, on the real traces.)

On each real trace of the catalog that is on disk and that the policy did not train on (its run's trace and its
teacher's scenarios' traces left out), under each semantics asked (`--preset rlscheduler`, SchedGym's, and the
default `standard`), the policy and its agent's heuristics schedule the same `windows` windows of `jobs` jobs (drawn
with `seed`, as `schedrl evaluate --trace T --sequences 20 --seed 97` draws them). Four checks, each a pass or a miss:

- **light** (a): on the windows where the policy's base rule starts at least 80% of the jobs at once (a lightly
  loaded machine, where a scheduler can only do harm), the policy's mean is within 1% of the base's.
- **bound** (b): the upper end of the paired interval against the best heuristic on the trace (`paired.against`,
  over the disjoint windows that fit where windows overlap) is at most +10%: non-inferiority, not merely "not
  significantly worse". The table shows the base rule's own upper end beside it: a trace where the base itself
  misses is one the network would have to repair.
- **groups** (c): no user and no job class (wide: at least a quarter of the machine; long: at least 12 h requested)
  is significantly worse off than under the best heuristic: each group's mean per window (the windows it has jobs
  in), a paired t test over its disjoint windows, Benjamini-Hochberg corrected over the users (and over the classes)
  of the row at 5%.
- **starve** (d): the longest wait (its mean over the windows, and its maximum) at most 1.25x the best heuristic's,
  utilisation at least its - 1 point.

`harm` returns the rows (JSON-ready); `to_markdown` renders them; `main` is the command. A progress line per trace.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from schedrl.eval.paired import MIN_WINDOWS

LIGHT_SHARE, LIGHT_TOLERANCE = 0.8, 0.01
"""(a): windows where the base starts at least this share of the jobs without waiting; the policy within this share of
the base's mean there."""
UPPER_BOUND_PCT = 10.0
"""(b): the paired interval's upper end against the best heuristic, in % of its mean."""
WIDE_SHARE, LONG_REQUEST = 0.25, 12 * 3600.0
"""(c): the job classes: wide (at least this share of the machine's processors), long (at least this requested)."""
MAX_WAIT_RATIO, UTILISATION_DROP = 1.25, 0.01
"""(d): the no-starvation constraint (issue 46's, as the teacher's threshold checks it)."""
SEMANTICS = ("rlscheduler", "standard")
"""The simulator presets every trace is checked under."""


def real_traces(exclude: set[str] = frozenset()) -> list[str]:
    """The catalog's real (not generated) traces found on disk, less `exclude` (names, any case)."""
    from schedrl.workload.catalog import load_catalog, locate

    out = []
    for name, entry in load_catalog().items():
        if getattr(entry, "generate", None) or name.lower().startswith("lublin") or name.lower() in exclude:
            continue
        if locate(entry) is not None:
            out.append(name)
    return out


def trained_traces(record) -> set[str]:
    """Lower-case names of the traces a policy's run trained on: its own and its teacher's scenarios'."""
    names = {Path(str(record.env_config.get("trace", ""))).name.lower()}
    for scenario in (record.settings or {}).get("teacher_scenarios") or ():
        from schedrl.scenarios import get_scenario

        names.add(str(get_scenario(scenario).workload.trace).lower())
    return names


def group_rows(jobs, key: np.ndarray, pol: np.ndarray, ref: np.ndarray) -> dict:
    """Per group (the distinct `key` values; < 0 or NaN: none), the mean of `pol` and `ref` over its jobs."""
    out = {}
    for g in np.unique(key[key >= 0]):
        sel = key == g
        out[int(g)] = (float(pol[sel].mean()), float(ref[sel].mean()))
    return out


def check_groups(per_window: list[dict], metric: str, k_of: Callable[[int], int], level: float = 0.05) -> dict:
    """Each group's paired comparison over the windows it appears in (at least 2): the groups significantly worse
    off under the policy, by a paired t test over `k_of(windows)` independent windows, corrected for the number of
    groups compared (Benjamini-Hochberg at `level`, as the leaderboard corrects its matrix)."""
    from schedrl.metrics import lower_is_better

    seen: dict[Any, tuple[list[float], list[float]]] = {}
    for groups in per_window:
        for g, (p, r) in groups.items():
            pol, ref = seen.setdefault(g, ([], []))
            pol.append(p)
            ref.append(r)
    sign = 1.0 if lower_is_better(metric) else -1.0
    tested = []
    for g, (pol, ref) in seen.items():
        if len(pol) < 2:
            continue
        diff = sign * (np.asarray(pol) - np.asarray(ref))
        tested.append((g, len(pol), diff, float(np.mean(ref)), paired_p(diff, k_of(len(pol)))))
    adjusted = benjamini_hochberg([t[4] for t in tested])
    worse = [{"group": g, "windows": n, "difference_pct": 100.0 * float(d.mean()) / max(abs(r), 1e-9),
              "p_adjusted": q}
             for (g, n, d, r, _), q in zip(tested, adjusted) if q < level and d.mean() > 0]
    return {"compared": len(tested), "worse": worse}


def paired_p(diff: np.ndarray, k: int) -> float:
    """Two-sided p value of a paired t test that the mean of `diff` is 0, with `k` independent samples (k - 1
    degrees of freedom; `paired.against`'s rule for overlapping windows). Fewer than 2 independent samples: 1 (no
    evidence). Differences all equal (no spread for a t test): the exact sign test's 2 x 0.5^k, 1 if they are 0 —
    not 0: a group whose jobs fall where two drawn windows overlap has the same difference in both, which is one
    observation, not proof (the harm check once flagged users 0.5% worse off in two overlapping windows at p = 0)."""
    from scipy.stats import t

    if k < 2:
        return 1.0
    sd = float(np.std(diff, ddof=1)) if len(diff) > 1 else 0.0
    mean = float(np.mean(diff))
    if sd == 0.0:
        return 1.0 if mean == 0.0 else min(1.0, 2.0 * 0.5 ** k)
    return float(2.0 * t.sf(abs(mean) / (sd / np.sqrt(k)), k - 1))


def benjamini_hochberg(p: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p values (the false discovery rate of rejecting at each), in the input's order."""
    if not p:
        return []
    order = np.argsort(p)
    m = len(p)
    ranked = np.asarray(p, dtype=float)[order] * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    return out.tolist()


def site_base(workload, config, names: list[str], metric: str, *, windows: int, jobs: int, seed: int) -> dict:
    """The base rule a site would choose from its own log: of `names`, the best mean `metric` on `windows` windows
    of `jobs` jobs drawn (with `seed`) from `workload`, the log's history part."""
    from schedrl.heuristics.hindsight import make_base as get_heuristic  # a heuristic's name or tuned:FILE
    from schedrl.metrics import lower_is_better, summarize
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import choose_starts, sequence

    length = min(jobs, len(workload))
    starts = choose_starts(workload, length, windows, seed, warn=lambda m: None)
    means = {name: float(np.mean([summarize(get_heuristic(name).run(Simulator(sequence(workload, s, length), config)))
                                  .value(metric) for s in starts])) for name in names}
    chosen = (min if lower_is_better(metric) else max)(names, key=lambda h: means[h])
    return {"chosen": chosen, "history_jobs": len(workload), "windows": len(starts), "jobs": length, "means": means}


def check_trace(policy, record, trace: str, preset: str, *, windows: int, jobs: int, seed: int,
                heuristics: list[str], history: float = 0.0) -> dict:
    """The four checks on one trace under one preset (see the module). `history` > 0: the site's base (`site_base`)
    is chosen on that share of the trace (its first jobs) and the policy runs over it; the checks' windows are drawn
    from the rest."""
    from dataclasses import replace

    from schedrl.eval import paired
    from schedrl.heuristics.hindsight import make_base as get_heuristic  # a heuristic's name or tuned:FILE
    from schedrl.metrics import job_metrics, lower_is_better, summarize
    from schedrl.scenarios.drawing import independent_windows
    from schedrl.scenarios.workload import WorkloadSpec, cleaning_for
    from schedrl.sim import SimConfig, Simulator
    from schedrl.workload.sampling import choose_starts, sequence

    metric = str(record.env_config.get("metric", "bsld"))
    base = str(record.env_config.get("base", "f1"))
    base = base if base.startswith("tuned:") else base.lower()
    config = replace(SimConfig.preset(preset), backfill=record.sim_config.backfill)
    workload = WorkloadSpec(trace, cleaning_for(preset), preset).load()
    chosen_base = None
    if history > 0:
        cut = int(history * len(workload))
        chosen_base = site_base(workload[:cut], config, list(dict.fromkeys([base, *heuristics])), metric,
                                windows=windows, jobs=jobs, seed=seed + 1)
        workload, base = workload[cut:], chosen_base["chosen"]
        policy = policy.with_base(base)
    length = min(jobs, len(workload))
    starts = choose_starts(workload, length, windows, seed, warn=lambda m: None)
    n = len(starts)
    k = independent_windows(n, length, len(workload))
    names = list(dict.fromkeys([base, *heuristics]))
    values: dict[str, list[float]] = {name: [] for name in [*names, "policy"]}
    waits: dict[str, list[float]] = {name: [] for name in values}
    utils: dict[str, list[float]] = {name: [] for name in values}
    per_job: dict[str, list[np.ndarray]] = {name: [] for name in values}
    free_share, windows_jobs = [], []
    key = metric if metric in ("wait", "bsld", "slowdown", "turnaround") else "bsld"
    before = dict(getattr(policy, "totals", None) or {})
    for s in starts:
        w = sequence(workload, s, length)
        windows_jobs.append(w)
        for name in values:
            schedule = (Simulator(w, config).run(policy) if name == "policy"
                        else get_heuristic(name).run(Simulator(w, config)))
            m = summarize(schedule)
            values[name].append(m.value(metric))
            waits[name].append(m.max_wait)
            utils[name].append(m.utilization)
            per_job[name].append(job_metrics(schedule)[key])
            if name == base:
                free_share.append(float((job_metrics(schedule)["wait"] <= 0).mean()))
    after = dict(getattr(policy, "totals", None) or {})
    counts = {k: int(after[k] - before.get(k, 0)) for k in after} or None
    lower = lower_is_better(metric)
    means = {name: float(np.mean(v)) for name, v in values.items()}
    best = (min if lower else max)(names, key=lambda h: means[h])
    sign = 1.0 if lower else -1.0
    # (a) light load
    light = [i for i, share in enumerate(free_share) if share >= LIGHT_SHARE]
    if light:
        b = float(np.mean([values[base][i] for i in light]))
        p = float(np.mean([values["policy"][i] for i in light]))
        light_pct = 100.0 * sign * (p - b) / max(abs(b), 1e-9)
    else:
        light_pct = None
    light_ok = light_pct is None or light_pct <= 100.0 * LIGHT_TOLERANCE
    # (b) the bound against the best heuristic
    c = paired.against(values, "policy", best, metric, independent=k)
    upper = None if c["ci95_pct"] is None else (c["ci95_pct"][1] if lower else -c["ci95_pct"][0])
    # under paired.MIN_WINDOWS independent windows the interval decides nothing (a small trace whose windows
    # overlap: theta-cqgym gives 2 and an interval of [-99.9%, +105,756%]): the row is undecided, neither passed nor
    # failed on the bound
    undecided = k < MIN_WINDOWS
    bound_ok = not undecided and upper is not None and upper <= UPPER_BOUND_PCT
    # the base rule's own standing against the best heuristic: a miss it shares is the base's, not the network's
    b = paired.against(values, base, best, metric, independent=k) if base != best else None
    base_upper = 0.0 if b is None else (None if b["ci95_pct"] is None else
                                         (b["ci95_pct"][1] if lower else -b["ci95_pct"][0]))
    # (c) users and job classes against the best heuristic
    users, classes = [], []
    for i, w in enumerate(windows_jobs):
        pol, ref = per_job["policy"][i], per_job[best][i]
        users.append(group_rows(w, np.asarray(w.user, dtype=np.int64), pol, ref))
        procs = np.asarray(w.procs_req, dtype=float)
        wide = procs >= WIDE_SHARE * float(w.max_procs)
        long = np.asarray(w.time_req, dtype=float) >= LONG_REQUEST
        cls = {}
        for name, sel in (("wide", wide), ("long", long)):
            if sel.any():
                cls[name] = (float(pol[sel].mean()), float(ref[sel].mean()))
        classes.append(cls)

    def k_of(m: int) -> int:
        return max(1, min(m, independent_windows(m, length, len(workload))))

    user_check = check_groups(users, key, k_of)
    class_check = check_groups(classes, key, k_of)
    groups_ok = not user_check["worse"] and not class_check["worse"]
    # (d) starvation against the best heuristic
    def starving(name: str) -> dict:
        mean_ratio = float(np.mean(waits[name])) / max(float(np.mean(waits[best])), 1.0)
        max_ratio = float(np.max(waits[name])) / max(float(np.max(waits[best])), 1.0)
        change = float(np.mean(utils[name])) - float(np.mean(utils[best]))
        return {"max_wait_mean_ratio": mean_ratio, "max_wait_max_ratio": max_ratio, "utilisation_change": change,
                "ok": mean_ratio <= MAX_WAIT_RATIO and max_ratio <= MAX_WAIT_RATIO and change >= -UTILISATION_DROP}
    starve, base_starve = starving("policy"), starving(base)
    return {"trace": trace, "preset": preset, "metric": metric, "windows": n, "jobs": length, "independent": k,
            "starts": [int(s) for s in starts], "base": base, "best": best, "means": means,
            "paired": c, "upper_pct": upper, "base_paired": b, "base_upper_pct": base_upper,
            "light": {"windows": len(light), "difference_pct": light_pct, "ok": light_ok},
            "bound_ok": bound_ok,
            "users": user_check, "classes": class_check, "groups_ok": groups_ok,
            "starve": starve, "base_starve": base_starve,
            "undecided": undecided, "site_base": chosen_base,
            "passes": light_ok and bound_ok and groups_ok and starve["ok"], "counts": counts,
            "per_window": {name: v for name, v in values.items()}}


def harm(spec: str, traces: list[str] | None = None, presets=SEMANTICS, *, windows: int = 20, jobs: int = 1024,
         seed: int = 97, history: float = 0.0, progress: Callable[[str], None] = lambda line: None) -> dict:
    """The checks of one policy (`checkpoint:PATH`, `zoo:NAME`, an exported directory) on each trace x preset;
    `history` > 0: over each trace's own best base rule, chosen on that share of it (`check_trace`)."""
    from schedrl.agents import get_agent
    from schedrl.eval.policies import resolve_policy

    # an exported policy's directory, as the help says (a bare path is not one of resolve_policy's names)
    directory = isinstance(spec, str) and ":" not in spec and Path(spec).is_dir()
    policy = resolve_policy(f"checkpoint:{spec}" if directory else spec)
    record = getattr(policy, "record", None)
    if record is None or record.sim_config is None:
        raise ValueError(f"{spec} is not a trained policy of the event simulator (checkpoint:PATH or zoo:NAME)")
    if history and not callable(getattr(policy, "with_base", None)):
        raise ValueError(f"--site-base: {spec} does not run over a base rule it could change")
    if not 0.0 <= history < 1.0:
        raise ValueError(f"--site-base must be a share of the trace in [0, 1), got {history}")
    agent = get_agent(record.agent)
    heuristics = [b.policy for b in agent.baselines(agent.env_config_class.from_dict(dict(record.env_config)))
                  if b.policy != "tuned"]
    own = trained_traces(record)
    chosen = traces if traces is not None else real_traces(own)
    skipped = sorted(t for t in (traces or []) if t.lower() in own)
    if skipped:
        raise ValueError(f"--traces names {', '.join(skipped)}, which the policy trained on")
    if not chosen:
        raise ValueError("no real trace to check: none of the catalog's is on disk (SCHEDRL_TRACE_PATH)")
    rows, t0 = [], time.perf_counter()
    for trace in chosen:
        for preset in presets:
            t1 = time.perf_counter()
            row = check_trace(policy, record, trace, preset, windows=windows, jobs=jobs, seed=seed,
                              heuristics=heuristics, history=history)
            rows.append(row)
            n = row["counts"]
            said = f", {n['rejections']:,} rejections of {n['inspections']:,} inspections" if n and \
                "inspections" in n else ""
            over = f" over {row['base'].upper()} (the site's)" if row["site_base"] else ""
            progress(f"{trace} ({preset}){over}: {verdict(row)}; "
                     f"{row['paired']['difference_pct']:+.1f}% vs {row['best']}{said}, {time.perf_counter() - t1:.0f} s")
    decided = [r for r in rows if not r["undecided"]]
    return {"policy": spec, "agent": record.agent, "trained_on": sorted(own), "windows": windows, "jobs": jobs,
            "seed": seed, "presets": list(presets), "rows": rows, "history": history,
            "passes": bool(decided) and all(r["passes"] for r in decided),
            "seconds": time.perf_counter() - t0}


def verdict(row: dict) -> str:
    """A row's verdict: passes, misses (the checks), or undecided (too few independent windows for the bound)."""
    if row["passes"]:
        return "passes"
    missed = misses(row)
    if row["undecided"]:
        return f"undecided ({row['independent']} independent windows)" + (f"; misses {', '.join(missed)}" if missed else "")
    return "misses " + ", ".join(missed)


def misses(row: dict) -> list[str]:
    """The checks a row misses, by name (the bound is not missed where the row is undecided)."""
    return [name for name, ok in (("light", row["light"]["ok"]), ("bound", row["bound_ok"] or row["undecided"]),
                                  ("groups", row["groups_ok"]), ("starve", row["starve"]["ok"])) if not ok]


def to_markdown(r: dict) -> str:
    site = (f"; over each trace's own best heuristic, chosen on its first {100 * r['history']:.0f}% (the site's "
            "log), the windows drawn from the rest") if r.get("history") else ""
    lines = [f"{r['policy']} ({r['agent']}; trained on {', '.join(r['trained_on'])}): {r['windows']} windows of "
             f"{r['jobs']} jobs per trace (seed {r['seed']}), each trace under {' and '.join(r['presets'])}{site}", "",
             "| trace | semantics | best heuristic | vs it (95% interval) | b/e/w | (a) light windows: vs base | "
             "(b) upper end <= +10% (the base's) | (c) users / classes worse | (d) longest wait (mean, max) / "
             "utilisation (the base's where it misses too) | verdict |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in r["rows"]:
        c = row["paired"]
        ci = f" [{c['ci95_pct'][0]:+.1f}, {c['ci95_pct'][1]:+.1f}]" if c["ci95_pct"] else ""
        light = row["light"]
        light_text = "none" if light["difference_pct"] is None else \
            f"{light['windows']}: {light['difference_pct']:+.2f}%"
        upper = "–" if row["upper_pct"] is None else f"{row['upper_pct']:+.1f}%"
        base_upper = "–" if row["base_upper_pct"] is None else f"{row['base_upper_pct']:+.1f}%"
        s = row["starve"]
        lines.append(
            f"| {row['trace']}{' (over ' + row['base'].upper() + ')' if row.get('site_base') else ''} | "
            f"{row['preset']} | {row['best']} | {c['difference_pct']:+.1f}%{ci} | "
            f"{c['better']}/{c['equal']}/{c['worse']} | {light_text}{'' if light['ok'] else ' ✗'} | "
            f"{upper}{'' if row['bound_ok'] else ' ✗'} ({base_upper}) | {len(row['users']['worse'])} of {row['users']['compared']} / "
            f"{len(row['classes']['worse'])} of {row['classes']['compared']}{'' if row['groups_ok'] else ' ✗'} | "
            f"x{s['max_wait_mean_ratio']:.2f}, x{s['max_wait_max_ratio']:.2f} / "
            f"{100 * s['utilisation_change']:+.1f} pt{'' if s['ok'] else ' ✗'}{base_starve_text(row)} | "
            f"{verdict(row)} |")
    passed = sum(row["passes"] for row in r["rows"])
    undecided = [row for row in r["rows"] if row["undecided"]]
    said = (f" ({len(undecided)} undecided: under {MIN_WINDOWS} independent windows, no interval can bound the "
            "difference there)") if undecided else ""
    lines.append(f"\n{passed} of {len(r['rows'])} trace x semantics rows pass all four checks{said}: "
                 f"{'no harm found' if r['passes'] else 'HARM: the policy is not fit for the zoo'}. {r['seconds']:.0f} s")
    return "\n".join(lines) + "\n"


def base_starve_text(row: dict) -> str:
    """" (the base's: x.., x..)" where the base rule itself misses (d) against the best heuristic, else ""."""
    b = row.get("base_starve")
    if not b or b["ok"]:
        return ""
    return f" (the base's: x{b['max_wait_mean_ratio']:.2f}, x{b['max_wait_max_ratio']:.2f})"


def add_arguments(p) -> None:
    p.add_argument("policy", help="checkpoint:PATH, zoo:NAME or an exported policy's directory")
    p.add_argument("--traces", default=None, metavar="NAME,NAME",
                   help="these real traces (default: every one on disk the policy did not train on)")
    p.add_argument("--presets", default=",".join(SEMANTICS), metavar="PRESET,PRESET",
                   help="simulator semantics each trace is checked under (default rlscheduler,standard)")
    p.add_argument("--windows", type=int, default=20, help="windows per trace (default 20)")
    p.add_argument("--jobs", type=int, default=1024, help="jobs per window (default 1024)")
    p.add_argument("--seed", type=int, default=97, help="the windows' draw (default 97)")
    p.add_argument("--site-base", type=float, default=0.0, metavar="SHARE",
                   help="run the policy over each trace's best heuristic, chosen on its first SHARE (e.g. 0.4; the "
                        "checks then use the rest)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the result here")
    p.add_argument("--force", action="store_true", help="replace --json's file even where schedrl did not write it")


def run(args) -> int:
    from schedrl.agents.checkpoint import CheckpointError
    from schedrl.outputs import Out, claim
    from schedrl.sim.config import PRESETS
    from schedrl.workload.errors import TraceError

    try:
        presets = [p.strip() for p in args.presets.split(",") if p.strip()]
        bad = [p for p in presets if p not in PRESETS]
        if not presets or bad:
            raise ValueError(f"--presets must name presets among {', '.join(PRESETS)}, got {args.presets!r}")
        for name in ("windows", "jobs"):
            if getattr(args, name) < 1:
                raise ValueError(f"--{name} must be >= 1, got {getattr(args, name)}")
        traces = None if args.traces is None else [t.strip() for t in args.traces.split(",") if t.strip()]
        if traces == []:
            raise ValueError("--traces names no trace")
        outputs = claim("inspector harm", [Out("--json", Path(args.json))], force=args.force) if args.json else None
        result = harm(args.policy, traces, presets, windows=args.windows, jobs=args.jobs, seed=args.seed,
                      history=args.site_base,
                      progress=lambda m: print(f"schedrl inspector harm: {m}", file=sys.stderr, flush=True))
    except (ValueError, CheckpointError, TraceError, FileNotFoundError, KeyError) as e:
        print(f"schedrl inspector harm: error: {e}", file=sys.stderr)
        return 2
    print(to_markdown(result), end="")
    if outputs is not None:
        outputs.write(args.json, json.dumps(result, indent=1) + "\n")
    return 0 if result["passes"] else 1


def main(argv: list[str] | None = None) -> int:
    """`schedrl inspector harm ARGS` (reached through `schedrl.cli.inspector`)."""
    import argparse

    parser = argparse.ArgumentParser(prog="schedrl inspector harm", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))
