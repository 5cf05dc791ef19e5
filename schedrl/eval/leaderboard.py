"""The leaderboard: every method of every scenario on the scenario's own evaluation sequences, one table.

For each scenario (`schedrl.scenarios`): its baseline heuristics, every outside policy (`--policies module:callable`,
or a Python entry point in the group `schedrl.policies`) and, as the zoo fills, its trained policies, scored with the
scenario's metric on its fixed evaluation sequences. Each method is paired with the scenario's reference heuristic
(chosen on the validation sequences and fixed in the definition, never on these sequences): the difference of the
means as a % of the reference's, its 95% interval, better/worse counts and a verdict. Learned and outside methods are
also paired with the second-best heuristic on these sequences (RLScheduler Table VII's bar).

Overlapping sequences (a zone shorter than count x length, e.g. Lublin-1's 2,250 evaluation jobs for ten 1,024-job
windows) are not independent: the interval uses the number of disjoint windows that fit in the zone
(`schedrl.eval.paired.against`'s `independent`), never a t interval that counts every window as a sample.

An outside policy is a callable `make(scenario) -> policy | None`: the policy for that scenario (`pick(sim)` on trace
scenarios, `act(sim)` on generated ones), or None where it does not apply. One that raises is reported as a failed row
and the board goes on.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import re
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from schedrl.eval import paired
from schedrl.metrics import lower_is_better
from schedrl.scenarios import Scenario, scoring

POLICY_GROUP = "schedrl.policies"
"""Entry-point group of outside policies: `name = "package.module:make"`, `make(scenario) -> policy | None`."""


@dataclass(frozen=True)
class Entrant:
    """A method on the board other than a scenario's own baselines."""

    label: str
    kind: str
    """`zoo` (a trained policy of schedrl's zoo) or `outside` (a module:callable or an entry point)."""
    make: Callable[[Scenario], Any]
    """The policy for a scenario, or None where it does not apply."""
    source: str = ""
    """Where an outside policy comes from (`module:callable`, an entry point's value): its label when the short one
    would shadow another method's (`schedrl.eval.outside.labelled`)."""


def outside(spec: str) -> Entrant:
    """`module:callable` as an entrant labelled by the callable's name; ValueError (one line) when it cannot load."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"--policies {spec!r}: an outside policy is MODULE:CALLABLE, e.g. mypkg.rules:make")
    try:
        target = importlib.import_module(module)
        for part in name.split("."):
            target = getattr(target, part)
    except Exception as e:  # an import error of the user's module says what and where
        raise ValueError(f"--policies {spec}: cannot load it ({type(e).__name__}: {e})") from None
    if not callable(target):
        raise ValueError(f"--policies {spec}: {name} is not callable (it must be make(scenario) -> policy or None)")
    return Entrant(name.split(".")[-1], "outside", target, spec)


def entry_points() -> list[Entrant]:
    """The outside policies registered in the `schedrl.policies` entry-point group (loaded when scored)."""
    from importlib.metadata import entry_points as found

    out = []
    for ep in found(group=POLICY_GROUP):
        out.append(Entrant(ep.name, "outside", lambda scenario, ep=ep: ep.load()(scenario), ep.value))
    return out


def zoo_entrants() -> list[Entrant]:
    """The zoo's trained policies and tuned rules (`schedrl zoo list`), each entered on the scenario it was trained or
    fitted on."""
    from schedrl.zoo.manifest import entries, rules

    out = []
    for entry in entries() + rules():
        scenario = entry.fields.get("scenario")
        name = scenario.get("name") if isinstance(scenario, dict) else None
        if name:
            out.append(Entrant(entry.name, "zoo", lambda s, n=name, e=entry.name: _zoo_policy(e) if s.name == n else None))
    return out


def _zoo_policy(name: str):
    from schedrl.eval.policies import resolve_policy

    return resolve_policy(f"zoo:{name}")


def own_semantics(scenario: Scenario, policy):
    """What a trained policy (one with a run `record`) runs under on `scenario`: the scenario's semantics with the
    decisions it was trained to make (DRAS's choice of the backfilled job), or on the discrete-time cluster, the
    cluster as its env saw it (DeepRM's pre-run estimates). None for other policies (the scenario's own)."""
    from schedrl.agents import get_agent

    record = getattr(policy, "record", None)
    if not hasattr(record, "agent"):  # a heuristic, a tuned rule (its `record` is how it was fitted), an outside one
        return None
    agent = get_agent(record.agent)
    return scenario.semantics_for(agent.judge(agent.env_config_class.from_dict(dict(record.env_config))),
                                  record.sim_config)


def held_out(policy, scenario: Scenario, seqs: scoring.Sequences, data) -> bool:
    """False when `policy` is a trained one whose training drew from the jobs of the evaluation sequences (an agent
    without a training split, such as `linear`); True otherwise (heuristics, outside policies, generated sequences)."""
    from schedrl.agents import get_agent

    record = getattr(policy, "record", None)
    if not hasattr(record, "agent") or scenario.id_kind != "starts":
        return True
    try:
        agent = get_agent(record.agent)
        judge = agent.judge(agent.env_config_class.from_dict(dict(record.env_config)))
        train_end = judge.held_out_range(len(data))[0]
    except (AttributeError, TypeError, ValueError):
        return True
    # no training split (train_end 0): training drew from the whole trace (`TraceJudge.evaluation_note` says the same)
    return train_end > 0 and all(int(s) >= train_end for s in seqs.ids)


def _name(row: dict) -> str:
    return row["method"] + (" (not held out)" if row.get("held_out") is False else "")


def independent_windows(scenario: Scenario, data, seqs: scoring.Sequences) -> int:
    """How many of the sequences count as independent samples (`schedrl.scenarios.scoring.Sequences.independent`; of
    a subsample of them, no more than it holds)."""
    return min(len(seqs.ids), seqs.independent)


def board(scenario: Scenario, entrants: Iterable[Entrant] = (), *, sequences: int | None = None,
          seed: int | None = None, progress: Callable[[str], None] | None = None) -> dict:
    """One scenario's part of the leaderboard, as a JSON-ready dict (rows best first)."""
    started = time.perf_counter()
    scenario = scenario.overridden(sequences=sequences, seed=seed)
    data = scoring.load(scenario)
    scores = scoring.score(scenario, data=data, progress=progress)
    kinds = {label: "heuristic" for label in scores.metrics}
    failed, trained_on_them = [], set()
    from schedrl.eval.outside import contained

    for e in entrants:
        if e.label in kinds:  # `leaderboard` labels entrants apart (`outside.labelled`); never drop a row silently
            raise ValueError(f"two methods are labelled {e.label!r} on {scenario.name}")
        try:
            policy = contained(lambda: e.make(scenario))
            if policy is None:
                continue
            semantics = own_semantics(scenario, policy)
            sims = {e.label: semantics} if semantics is not None else None
            scored = contained(lambda: scoring.score(scenario, {e.label: policy}, baselines=False, data=data,
                                                     progress=progress, policy_sims=sims))
        except Exception as ex:  # an outside policy that breaks is one failed row, not the end of the board
            failed.append({"method": e.label, "kind": e.kind, "error": f"{type(ex).__name__}: {ex}",
                           "where": traceback.extract_tb(ex.__traceback__)[-1].filename if ex.__traceback__ else ""})
            continue
        scores.metrics.update(scored.metrics)
        kinds[e.label] = e.kind
        if not held_out(policy, scenario, scored.sequences, data):
            trained_on_them.add(e.label)
    values = scores.values()
    metric, reference = scenario.metric, scenario.reference
    lower = lower_is_better(metric)
    means = {k: float(np.mean(v)) for k, v in values.items()}
    heuristics = sorted((k for k in values if kinds[k] == "heuristic"), key=means.get, reverse=not lower)
    second = heuristics[1] if len(heuristics) > 1 else heuristics[0]
    k = independent_windows(scenario, data, scores.sequences)
    rows = []
    for label in sorted(values, key=means.get, reverse=not lower):
        row = {"method": label, "kind": kinds[label], "mean": means[label],
               "ratio_to_reference": means[label] / means[reference] if means[reference] else math.nan,
               "per_sequence": values[label]}
        if label != reference:
            row["vs_reference"] = paired.against(values, label, reference, metric, independent=k)
        if kinds[label] != "heuristic" and label != second:
            row["vs_second_best"] = paired.against(values, label, second, metric, independent=k)
        if label in trained_on_them:
            row["held_out"] = False
        rows.append(row)
    seqs = scores.sequences
    return {"scenario": scenario.name, "sha256": scenario.sha256(), "description": scenario.description,
            "metric": metric, "lower_is_better": lower, "reference": reference, "second_best": second,
            "sequences": {"ids": seqs.ids, "length": seqs.length, "overlapping": seqs.overlapping, "independent": k,
                          "kind": scenario.id_kind},
            "rows": rows, "failed": failed, "seconds": time.perf_counter() - started}


@contextlib.contextmanager
def _one_torch_thread(needed: bool):
    """Torch on one intra-op thread while the board runs (restored after). A policy decides one job at a time with a
    small network, where a second thread costs more than it gives: the MRSch zoo policy's board on 2 sequences took
    17.7 s with torch's default 2 threads and 6.8 s with 1 on the 2-core development machine."""
    if not needed:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def leaderboard(scenarios: Iterable[Scenario], entrants: Iterable[Entrant] = (), *, sequences: int | None = None,
                seed: int | None = None, progress: Callable[[str], None] | None = None,
                skipped: Callable[[str, str], None] | None = None) -> dict:
    """Every scenario's board; a scenario whose data is not on this machine is listed under `skipped` with why."""
    from schedrl import __version__

    from schedrl.dtsim import JobDataError
    from schedrl.workload.errors import TraceError

    from schedrl.eval.outside import labelled, reserved_labels

    scenarios = list(scenarios)
    entrants = labelled(entrants, reserved_labels(scenarios))
    boards, missing = [], []
    with _one_torch_thread(any(e.kind == "zoo" for e in entrants)):
        for s in scenarios:
            try:
                boards.append(board(s, entrants, sequences=sequences, seed=seed, progress=progress))
            except (FileNotFoundError, TraceError, JobDataError) as e:  # its data is not on this machine
                missing.append({"scenario": s.name, "why": str(e)})
                if skipped is not None:
                    skipped(s.name, str(e))
    return {"schedrl": __version__, "sequences": sequences, "seed": seed, "scenarios": boards, "skipped": missing}


# ---------------------------------------------------------------------------- rendering
def _cell(value: float, metric: str) -> str:
    return f"{100 * value:.1f}%" if metric == "utilization" or metric.startswith("util:") else f"{value:,.2f}"


def _versus(c: dict | None) -> str:
    if not c:
        return "reference"
    bounds = f" [{c['ci95_pct'][0]:+.1f}, {c['ci95_pct'][1]:+.1f}]" if c["ci95_pct"] else " [no interval]"
    return f"{c['difference_pct']:+.1f}%{bounds}, {c['better']}/{c['worse']}"


def to_markdown(result: dict) -> str:
    """The full table: one section per scenario."""
    out = []
    for b in result["scenarios"]:
        seq = b["sequences"]
        what = (f"{len(seq['ids'])} sequences of {seq['length']} jobs" if seq["kind"] == "starts"
                else f"{len(seq['ids'])} generated sequences")
        overlap = (f"; they overlap, so intervals count {seq['independent']} independent windows"
                   if seq["overlapping"] else "")
        out += [f"### {b['scenario']}", "",
                f"{b['description']} Metric: average {b['metric']} ({'lower' if b['lower_is_better'] else 'higher'} "
                f"is better), on {what}{overlap}. Reference: {b['reference']} (best on the validation sequences). "
                f"Definition {b['sha256'][:12]}.", "",
                "| method | kind | mean | x reference | vs reference: diff [95% CI], better/worse | verdict |",
                "|---|---|---|---|---|---|"]
        for r in b["rows"]:
            v = r.get("vs_reference")
            out.append(f"| {_name(r)} | {r['kind']} | {_cell(r['mean'], b['metric'])} | "
                       f"{r['ratio_to_reference']:.3f} | {_versus(v)} | {v['verdict'] if v else '-'} |")
        for f in b["failed"]:
            out.append(f"| {f['method']} | {f['kind']} | failed: {f['error']} | | | |")
        out.append("")
    for s in result["skipped"]:
        out.append(f"- {s['scenario']}: skipped ({s['why']})")
    return "\n".join(out).rstrip() + "\n"


def summary_markdown(result: dict) -> str:
    """One line per scenario: the reference and every non-heuristic method's ratio to it with its verdict."""
    lines = ["| scenario | metric | reference | methods (x reference, verdict) |", "|---|---|---|---|"]
    for b in result["scenarios"]:
        learned = [r for r in b["rows"] if r["kind"] != "heuristic"]
        cells = "; ".join(f"{_name(r)} {r['ratio_to_reference']:.3f}x, {r['vs_reference']['verdict']}"
                          for r in learned if "vs_reference" in r) or "no trained policy yet"
        lines.append(f"| {b['scenario']} | {b['metric']} | {b['reference']} | {cells} |")
    return "\n".join(lines) + "\n"


def plot(result: dict, path) -> None:
    """One panel per scenario: each method's mean relative to the reference, with its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    boards = result["scenarios"]
    cols = min(3, max(1, len(boards)))
    rows = max(1, math.ceil(len(boards) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 0.35 * 8 * rows + 1.5), squeeze=False)
    for ax, b in zip(axes.flat, boards):
        labels = [r["method"] for r in b["rows"]]
        ratios = [r["ratio_to_reference"] for r in b["rows"]]
        errors = []
        for r in b["rows"]:
            c = r.get("vs_reference")
            if c and c["ci95_pct"]:
                lo, hi = (1 + c["ci95_pct"][0] / 100), (1 + c["ci95_pct"][1] / 100)
                mid = 1 + c["difference_pct"] / 100
                errors.append((mid - lo, hi - mid))
            else:
                errors.append((0.0, 0.0))
        colours = ["tab:orange" if r["kind"] != "heuristic" else "tab:blue" for r in b["rows"]]
        y = np.arange(len(labels))
        ax.barh(y, ratios, color=colours, xerr=np.array(errors).T, capsize=3)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks(y, labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(f"{b['scenario']} ({b['metric']}; 1 = {b['reference']})", fontsize=9)
        ax.set_xscale("log")
    for ax in list(axes.flat)[len(boards):]:
        ax.set_visible(False)
    fig.suptitle("schedrl leaderboard: mean relative to each scenario's reference heuristic (95% paired interval)",
                 fontsize=10)
    fig.tight_layout()
    from schedrl.outputs import save_figure

    save_figure(fig, path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------- the committed results
README_MARK = ("<!-- leaderboard:start -->", "<!-- leaderboard:end -->")
"""The README's summary sits between these lines, rendered from docs/leaderboard.json (`publish`)."""
PUBLISHED = ("docs/leaderboard.json", "docs/leaderboard.md", "docs/leaderboard.png", "docs/zoo.md")


def readme_block(result: dict) -> str:
    """The README's summary: how it was made, then one line per scenario."""
    return (f"{README_MARK[0]}\n"
            "Each scenario's reference heuristic (the best on its validation sequences) and every trained or outside "
            "policy as a ratio of its mean to the reference's on the scenario's evaluation sequences, with the paired "
            "verdict (better or worse only when the 95% interval excludes zero). Rendered from "
            "[docs/leaderboard.json](docs/leaderboard.json); the full table with every heuristic and interval is "
            "[docs/leaderboard.md](docs/leaderboard.md).\n\n"
            f"{summary_markdown(result)}{README_MARK[1]}")


def docs_page(result: dict) -> str:
    """docs/leaderboard.md: how to read and regenerate it, then the full table."""
    return ("# Leaderboard\n\n"
            "Every standard scenario's baselines and trained policies on the scenario's own evaluation sequences "
            "(docs/scenarios.md explains the scenarios, the reference heuristic and the intervals). Regenerate this "
            "page, docs/leaderboard.json, docs/leaderboard.png and the README's summary with "
            "`schedrl leaderboard --publish .` from the repository root (real traces in ../shared or "
            "`$SCHEDRL_TRACE_PATH`).\n\n![leaderboard](leaderboard.png)\n\n" + to_markdown(result))


def zoo_page(result: dict, policies=None, tuned=None) -> str:
    """docs/zoo.md: every zoo policy and tuned rule (the manifest's, or `policies` and `tuned`) with its training
    command, seed, budget and size, and its row of the board in `result` (ratio to the scenario's reference and the
    paired verdict)."""
    from schedrl.zoo.manifest import entries, rules, seed_rows

    policies = entries() if policies is None else policies
    tuned = rules() if tuned is None else tuned
    rows = {r["method"]: (b, r) for b in result["scenarios"] for r in b["rows"]}

    def placed(name: str) -> str:
        if name not in rows:
            return "not on the board"
        b, r = rows[name]
        verdict = r["vs_reference"]["verdict"] if r.get("vs_reference") else "-"
        return f"{r['ratio_to_reference']:.3f}x {b['reference']}, {verdict}"

    def spent(budget: dict) -> str:
        return ", ".join(part for part in (
            f"{budget['iterations']} iterations" if budget.get("iterations") is not None else "",
            f"{budget['seconds']:,.0f} s" if budget.get("seconds") is not None else "") if part) or "-"

    def score(f: dict) -> str:
        return "-" if f["validation_score"] is None else f"{f['metric']} {f['validation_score']:,.2f}"

    total = sum(e.fields["weights"]["bytes"] for e in policies) + sum(e.fields["bytes"] for e in tuned)
    lines = ["# Model zoo", "",
             "Trained policies shipped inside the package (`schedrl/zoo/policies/`), one per agent and standard scenario. "
             "Each is the network's weights alone (`weights.safetensors`: tensors without a pickle container, no "
             "code runs when it loads) and a JSON record of the architecture, normalisation, environment and scenario "
             "(`policy.json`); it runs with torch and numpy, without Ray. `zoo:NAME` works wherever a checkpoint does:", "",
             "```bash", "schedrl zoo list", "schedrl zoo show rlscheduler-default-s0",
             "schedrl evaluate zoo:rlscheduler-default-s0 --scenario default",
             "schedrl compare --scenario lublin1 --policies f1,sjf,zoo:rlscheduler-lublin1-s0", "```", "",
             "Each was trained for 30 minutes on the 2-core machine by the command below (a `tune_configs/zoo_*.yaml` "
             "file holds the same run with three seeds), exported by `schedrl export CKPT --out DIR --add`, which checks "
             "that the export makes the checkpoint's decisions on whole episodes (half precision only where no decision "
             "changes). The last column is the policy's row of the [leaderboard](leaderboard.md): its mean over the "
             "scenario's evaluation sequences relative to the scenario's reference heuristic, and the paired verdict. "
             "Rendered from `schedrl/zoo/manifest.json` and docs/leaderboard.json by `schedrl leaderboard --publish .`.",
             "", f"{len(policies)} policies and {len(tuned)} tuned rules, {total:,} bytes in all.", "",
             "| policy | agent | scenario | seed | budget | weights | validation | leaderboard: x reference, verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for e in policies:
        f, w = e.fields, e.fields["weights"]
        lines.append(f"| `{e.name}` | {f['agent']} | `{f['scenario']['name']}` | {f['seed']} | {spent(f['budget'])} | "
                     f"{w['bytes']:,} B {w['precision']} | {score(f)} | {placed(e.name)} |")
    if tuned:
        lines += ["", "## Tuned rules", "",
                  "The [tuned-rule baseline](agents/tuned-rule.md): a priority rule linear in the jobs' log features, "
                  "fitted by CMA-ES on the scenario's training zone for 30 minutes and chosen on its validation "
                  "sequences (`schedrl tuned fit --scenario NAME`), kept as its JSON file (`schedrl/zoo/rules/`, added "
                  "by `schedrl zoo add-rule FILE --name NAME`). `zoo:NAME` uses one wherever a policy name is taken "
                  "(`compare --policies`, `simulate --policy`); the leaderboard enters it on its scenario.", "",
                  "| rule | scenario | seed | budget | file | validation | leaderboard: x reference, verdict |",
                  "|---|---|---|---|---|---|---|"]
        for e in tuned:
            f = e.fields
            lines.append(f"| `{e.name}` | `{f['scenario']['name']}` | {f['seed']} | {spent(f['budget'])} | "
                         f"{f['bytes']:,} B JSON | {score(f)} | {placed(e.name)} |")
    lines += ["", "## Training commands", "",
              "The seed is the command's `--seed` (`--out` is shown as `runs/NAME`; the recorded one is on the policy's "
              "card, `schedrl zoo show NAME`). A policy's `budget` above is what its kept checkpoint had used (training "
              "ran for the whole 30 minutes and kept its best-validation checkpoint); a tuned rule's is the fit's whole "
              "budget.", ""]
    for e in policies + tuned:
        command = re.sub(r"(\s--out[ =])\S+", rf"\g<1>runs/{e.name}", e.fields["command"])
        lines += [f"### {e.name}", "", "```bash", command, "```", ""]
        spread = seed_rows(e.fields)
        if spread:
            lines += ["```text", *spread, "```", ""]
    return "\n".join(lines)


def stable(result: dict) -> dict:
    """The result without what changes from run to run on the same inputs (timings)."""
    import copy

    out = copy.deepcopy(result)
    for b in out["scenarios"]:
        b.pop("seconds", None)
    return out


def check_publish(root) -> tuple:
    """The README of the checkout `root` and where its summary goes; ValueError (one line) when it has no markers
    (checked before the board is computed)."""
    from pathlib import Path

    readme = Path(root) / "README.md"
    try:
        text = readme.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{readme}: cannot read it ({type(e).__name__}); --publish writes into a schedrl "
                         "checkout") from None
    start, end = text.find(README_MARK[0]), text.find(README_MARK[1])
    if start < 0 or end < start:
        raise ValueError(f"{readme}: no {README_MARK[0]} ... {README_MARK[1]} block to write the summary into")
    return readme, text, start, end


def publish(result: dict, root) -> list:
    """Write the committed results under the repository `root` (each file atomically): the JSON, the docs page, the
    figure, and the README's summary between its markers. Returns the paths written."""
    import json
    from pathlib import Path

    from schedrl.outputs import atomic_write

    root = Path(root)
    readme, text, start, end = check_publish(root)
    json_path, md_path, png_path, zoo_path = (root / p for p in PUBLISHED)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(json_path, json.dumps(stable(result), indent=1) + "\n")
    atomic_write(md_path, docs_page(result))
    plot(result, png_path)
    atomic_write(zoo_path, zoo_page(result))
    atomic_write(readme, text[:start] + readme_block(result) + text[end + len(README_MARK[1]):])
    return [json_path, md_path, png_path, zoo_path, readme]
