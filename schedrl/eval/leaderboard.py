"""The leaderboard: every method of every scenario on the scenario's own evaluation sequences, one table.

For each scenario (`schedrl.scenarios`): its baseline heuristics, every outside policy (`--policies module:callable`,
or a Python entry point in the group `schedrl.policies`) and, as the zoo fills, its trained policies, scored with the
scenario's metric on its fixed evaluation sequences. Each method is paired with the scenario's reference heuristic
(chosen on the validation sequences and fixed in the definition, never on these sequences): the ratio of the means
(as a % difference) with its paired bootstrap 95% interval, the Wilcoxon signed-rank test beside it, better/worse
counts and a verdict (`schedrl.eval.paired`). Learned and outside methods are
also paired with the second-best heuristic on these sequences (RLScheduler Table VII's bar).

Overlapping sequences (a zone shorter than count x length, e.g. Lublin-1's 2,250 evaluation jobs for ten 1,024-job
windows) are not independent: the interval uses the number of disjoint windows that fit in the zone
(`schedrl.eval.paired.against`'s `independent`), never an interval that counts every window as a sample.

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
    """`zoo` (a trained policy of schedrl's zoo), `tuned` (a zoo's tuned rule) or `outside` (a module:callable or an
    entry point)."""
    make: Callable[[Scenario], Any]
    """The policy for a scenario, or None where it does not apply (a zoo entrant raises `CannotRun` with why)."""
    source: str = ""
    """Where an outside policy comes from (`module:callable`, an entry point's value): its label when the short one
    would shadow another method's (`schedrl.eval.outside.labelled`)."""
    trained_on: dict | None = None
    """The scenario a zoo policy or tuned rule was trained or fitted on, as its policy.json / rule file records it
    (`name`, `sha256`); None for outside policies."""


class CannotRun(ValueError):
    """Why a policy cannot run on a scenario (listed on the board with the reason, never dropped in silence)."""


TRANSFER_RULE = (
    "A zoo policy runs on every standard scenario of its simulator whose decisions it was trained to make: the same "
    "decision interface (a pick from the whole queue, or from a window of the same number of jobs) and the same job "
    "resources (MRSch's burst buffer and power); on the discrete-time cluster, the same cluster. Backfilling, "
    "allocation, walltime kills and the metric are the scenario's. On another machine size or trace it keeps its "
    "training normalisation, and where the machine or the jobs' requested times leave what it was trained on, its row "
    "says so (the warning `schedrl evaluate` prints); a network whose input is sized by the machine (DRAS's and "
    "Decima's node rows) cannot take another machine's state and is listed with that reason. A tuned rule (a linear "
    "priority with its fit's feature scales) runs on every trace scenario, marked where its trace is not the one it "
    "was fitted on.")
"""How the board decides where a policy can run (docs/scenarios.md and the leaderboard page quote it)."""


def why_not(policy, scenario: Scenario) -> str | None:
    """Why `policy` (a loaded zoo policy, with its run `record`, or a tuned rule) cannot run on `scenario` under
    `TRANSFER_RULE` (`Scenario.transfer_problem`), or None where it can."""
    from schedrl.agents import get_agent

    record = getattr(policy, "record", None)
    if not hasattr(record, "agent"):  # a tuned rule: a priority of the event simulator's jobs
        try:
            scenario.trace_only("a tuned rule is a priority of the event simulator's jobs; this scenario is generated "
                                "on the discrete-time cluster")
        except ValueError as e:
            return str(e)
        return None
    agent = get_agent(record.agent)
    env = agent.env_config_class.from_dict(dict(record.env_config))
    return scenario.transfer_problem(record.agent, agent.judge(env), record.sim_config, getattr(env, "augment", None))


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
    """The zoo's trained policies and tuned rules (`schedrl zoo list`), each entered on every scenario it can run
    (`why_not`; elsewhere `CannotRun` says why), marked with the scenario it was trained or fitted on."""
    from schedrl.zoo.manifest import entries, rules

    out = []
    for entry in entries() + rules():
        scenario = entry.fields.get("scenario")
        trained_on = dict(scenario) if isinstance(scenario, dict) and scenario.get("name") else None
        kind = "tuned" if entry.fields.get("agent") == "tuned" else "zoo"
        out.append(Entrant(entry.name, kind, lambda s, e=entry.name: _runnable(_zoo_policy(e), s),
                           trained_on=trained_on))
    return out


def _zoo_policy(name: str):
    """`zoo:NAME` loaded (a trained policy or a tuned rule), with its model card where it has one."""
    from schedrl.eval.policies import resolve_policy
    from schedrl.zoo.manifest import find
    from schedrl.zoo.store import ZooError

    policy = resolve_policy(f"zoo:{name}")
    try:
        policy.card = find(name).card
    except ZooError:  # a tuned rule has no card
        pass
    return policy


def _runnable(policy, scenario: Scenario):
    reason = why_not(policy, scenario)
    if reason is not None:
        raise CannotRun(reason)
    if hasattr(policy, "strict"):  # a tuned rule: its fit's feature scales go with it to another trace
        policy.strict = False
    return policy


def trained_here(entrant: Entrant, scenario: Scenario) -> bool | None:
    """True where `entrant` was trained (or fitted) on `scenario` (by the name its policy.json records, so that the mark
    survives a redefinition of the scenario; a `-paper` variant keeps its scenario's training part), False where it
    transfers; None for outside policies."""
    if entrant.trained_on is None:
        return None
    return scenario.name in (entrant.trained_on["name"], entrant.trained_on["name"] + "-paper")


def _outside_training(policy, scenario: Scenario, seqs: scoring.DrawnSequences) -> list[str]:
    """The card's warnings (`schedrl.zoo.card.problems`) for `policy` on the scenario's first sequence: where the
    machine or the requested times leave what it was trained on (a tuned rule: where its trace is another)."""
    from schedrl.zoo import card as cards

    if seqs.data is None or not seqs.ids:  # generated sequences: the cluster is the scenario's (`transfer_problem`)
        return []
    fitted = getattr(policy, "trace", None)
    if isinstance(fitted, dict) and fitted.get("sha256") and seqs.data is not None \
            and seqs.data.sha256 and fitted["sha256"] != seqs.data.sha256:
        return [f"fitted on trace {fitted.get('name')}, run on {seqs.data.name}: its feature scales are its fit's"]
    card = getattr(policy, "card", None)
    if card is None:
        return []
    from schedrl.sim import Simulator
    from schedrl.workload.sampling import sequence

    sim = Simulator(sequence(seqs.data, seqs.ids[0], seqs.length), scenario.sim)
    return sorted(cards.problems(card, sim).values())


def held_out(policy, scenario: Scenario, seqs: scoring.DrawnSequences, data) -> bool:
    """False when `policy` is a trained one whose training drew from the jobs of the evaluation sequences (an agent
    without a training split, such as `linear`); True otherwise (heuristics, outside policies, generated sequences)."""
    from schedrl.agents import get_agent

    record = getattr(policy, "record", None)
    if not hasattr(record, "agent") or scenario.id_kind != "starts":
        return True
    if seqs.source is not None and seqs.source != dict(record.env_config).get("trace"):
        return True  # the evaluation's own trace, not the one it trained on
    data = seqs.data if seqs.data is not None else data
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


def independent_windows(scenario: Scenario, data, seqs: scoring.DrawnSequences) -> int:
    """How many of the sequences count as independent samples (`schedrl.scenarios.scoring.DrawnSequences.independent`; of
    a subsample of them, no more than it holds)."""
    return min(len(seqs.ids), seqs.independent)


MIN_WINDOWS = 10
"""Independent evaluation windows a scenario should hold; fewer and its rows say it is underpowered."""


def power(k: int, rows: list[dict]) -> dict:
    """A board's power: its independent windows `k`, whether that is fewer than `MIN_WINDOWS`, and the median minimum
    detectable effect of its policies' comparisons with the reference (% of the reference's mean; of the heuristics'
    where no policy runs)."""
    def mdes_of(chosen):
        return [r["vs_reference"]["mde_pct"] for r in chosen if r.get("vs_reference", {}).get("mde_pct") is not None]

    mdes = mdes_of([r for r in rows if r["kind"] != "heuristic"]) or mdes_of(rows)
    return {"independent": k, "wanted": MIN_WINDOWS, "underpowered": k < MIN_WINDOWS,
            "median_mde_pct": float(np.median(mdes)) if mdes else None}


def board(scenario: Scenario, entrants: Iterable[Entrant] = (), *, sequences: int | None = None,
          seed: int | None = None, progress: Callable[[str], None] | None = None,
          warn: Callable[[str], None] | None = None) -> dict:
    """One scenario's part of the leaderboard, as a JSON-ready dict (rows best first; `not_run`: the entrants that
    cannot run on it, with why; `failed`: those that broke). `warn` receives one line per policy that runs outside its
    training range (as `schedrl evaluate` prints it)."""
    started = time.perf_counter()
    scenario = scenario.overridden(sequences=sequences, seed=seed)
    data = scoring.load(scenario)
    scores = scoring.score(scenario, data=data, progress=progress)
    kinds = {label: "heuristic" for label in scores.metrics}
    failed, not_run, trained_on_them, marks, outside_range, entered = [], [], set(), {}, {}, {}
    from schedrl.eval.evaluate import judge_of
    from schedrl.eval.outside import contained
    from schedrl.scenarios.protocol import RunProtocol, trained_record

    for e in entrants:
        if e.label in kinds:  # `leaderboard` labels entrants apart (`outside.labelled`); never drop a row silently
            raise ValueError(f"two methods are labelled {e.label!r} on {scenario.name}")
        try:
            policy = contained(lambda: e.make(scenario))
            if policy is None:
                not_run.append({"method": e.label, "kind": e.kind, "why": "its make(scenario) returned None (it does "
                                                                          "not apply here)"})
                continue
            # on the discrete-time cluster a trained policy sees the cluster as its env did (`policy_semantics`); on a
            # trace scenario `scoring.score` resolves the one semantics itself (with a chooser's exception)
            semantics = (RunProtocol(judge_of(policy), scenario).policy_semantics(policy)
                         if trained_record(policy) is not None and scenario.comparison_semantics() is None else None)
            sims = {e.label: semantics} if semantics is not None else None
            scored = contained(lambda: scoring.score(scenario, {e.label: policy}, baselines=False, data=data,
                                                     progress=progress, policy_sims=sims))
        except CannotRun as ex:
            not_run.append({"method": e.label, "kind": e.kind, "why": str(ex)})
            continue
        except Exception as ex:  # an outside policy that breaks is one failed row, not the end of the board
            if e.kind == "zoo" and isinstance(ex, RuntimeError) and "shape" in str(ex):
                # a zoo network that cannot take this scenario's state (its input is sized by its training machine)
                not_run.append({"method": e.label, "kind": e.kind, "why": "its network cannot take this scenario's "
                                f"state ({str(ex).splitlines()[0]})"})
                continue
            failed.append({"method": e.label, "kind": e.kind, "error": f"{type(ex).__name__}: {ex}",
                           "where": traceback.extract_tb(ex.__traceback__)[-1].filename if ex.__traceback__ else ""})
            continue
        scores.metrics.update(scored.metrics)
        scores.semantics.update(scored.semantics)
        entered[e.label] = policy
        kinds[e.label] = e.kind
        if not held_out(policy, scenario, scored.sequences, data):
            trained_on_them.add(e.label)
        here = trained_here(e, scenario)
        if here is not None:
            marks[e.label] = {"trained": "here" if here else "transfer", "trained_on": dict(e.trained_on)}
        outside_range[e.label] = _outside_training(policy, scenario, scored.sequences)
        for problem in outside_range[e.label]:
            if warn is not None:
                warn(f"warning: {e.label} on {scenario.name}: {problem}")
    one_judge(scenario, scores, entered, data, progress)
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
        if label in marks:
            row.update(marks[label])
        if outside_range.get(label):
            row["outside_training"] = outside_range[label]
        rows.append(row)
    for row in rows:  # what each row ran under: one semantics, but for a baseline's declared backfilling
        if row["method"] in scores.semantics and scenario.comparison_semantics() is not None:
            row["semantics"] = scores.semantics[row["method"]].to_dict()
    seqs = scores.sequences
    # issue 56: the offline optimum's two sides beside the reference, and each method's share of the gap (bound/gap.py)
    from schedrl.bound.gap import committed_floor
    floor = committed_floor(scenario, means[reference], means, starts=seqs.ids, per_window=values,
                            reference_label=reference)
    return {**({"optimum": floor} if floor is not None else {}),
            "scenario": scenario.name, "sha256": scenario.sha256(), "description": scenario.description,
            "metric": metric, "lower_is_better": lower, "reference": reference, "second_best": second,
            "sequences": {"ids": seqs.ids, "length": seqs.length, "overlapping": seqs.overlapping, "independent": k,
                          "kind": scenario.id_kind, **({"trace": seqs.source} if seqs.source else {})},
            "power": power(k, rows), "rows": rows, "failed": failed, "not_run": not_run,
            "seconds": time.perf_counter() - started}


def one_judge(scenario: Scenario, scores, entered: dict, data, progress=None) -> None:
    """The board's rows under one semantics. Each entrant is scored on its own; where one chooses the backfilled job
    itself, that exception is the table's: the rows scored without it (the baselines, the other entrants) are scored
    again under it (`scoring.score(alongside=...)`; a heuristic and a policy trained with first-fit backfilling start
    the first candidate either way, so their numbers stay). Then every row is checked (`semantics.check_rows`)."""
    from schedrl.scenarios.semantics import check_rows

    shared = scenario.comparison_semantics(list(entered.values()))
    if shared is None:
        return
    stale = {k for k, sim in scores.semantics.items() if sim.backfill_choice != shared.backfill_choice}
    baselines = {b.name(scenario.sim) for b in scenario.baselines}
    if stale:
        again = scoring.score(scenario, {k: p for k, p in entered.items() if k in stale}, data=data, progress=progress,
                              baselines=bool(stale & baselines), alongside=list(entered.values()))
        scores.metrics.update(again.metrics)
        scores.semantics.update(again.semantics)
    check_rows(scores.semantics, f"the board of {scenario.name}")


def restated(result: dict) -> dict:
    """`result` (a board as docs/leaderboard.json holds it) with every comparison recomputed from its rows'
    per-sequence values by today's statistics (`paired.against`), then corrected (`corrected`): what `--render`
    publishes, so a change to the statistics needs no rescoring."""
    for b in result["scenarios"]:
        values = {r["method"]: r["per_sequence"] for r in b["rows"]}
        k = b["sequences"]["independent"]
        for r in b["rows"]:
            for key, baseline in (("vs_reference", b["reference"]), ("vs_second_best", b["second_best"])):
                if key in r:
                    r[key] = paired.against(values, r["method"], baseline, b["metric"], independent=k)
    return corrected(result)


def p_value(c: dict) -> float | None:
    """The two-sided p-value of a paired comparison (`paired.against`'s dict): its ratio interval's own (below 0.05
    exactly where its 95% interval excludes 1, `paired.ratio_interval`; the rank test's where there is no ratio);
    None with fewer than 2 windows."""
    return c.get("p")


def holm(p: list[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of `p` (None stays None): it keeps the chance of any false "better" or "worse"
    among all of them at the level (family-wise). Kept for comparison: the board uses `benjamini_hochberg`."""
    known = sorted((v, i) for i, v in enumerate(p) if v is not None)
    m, out, running = len(known), list(p), 0.0
    for rank, (v, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * v))
        out[i] = running
    return out


def benjamini_hochberg(p: list[float | None]) -> list[float | None]:
    """Benjamini-Hochberg's step-up adjustment of `p` (None stays None): among the comparisons whose adjusted p is below
    the level, the expected share of false discoveries is at most the level."""
    known = sorted((v, i) for i, v in enumerate(p) if v is not None)
    m, out, running = len(known), list(p), 1.0
    for rank in range(m - 1, -1, -1):
        v, i = known[rank]
        running = min(running, m * v / (rank + 1))
        out[i] = min(1.0, running)
    return out


STATISTICS = {"interval": f"ratio of means, exp(log R +- t x se), se the paired bootstrap's ({paired.RESAMPLES:,} "
                            "resamples, seeded; m-out-of-n over the independent windows where they overlap)",
              "p": "the ratio interval's (p < 0.05 exactly where the 95% interval excludes 1)",
              "rank_test": "Wilcoxon signed-rank, beside it (rank_test_disagrees where the two differ)",
              "min_windows": paired.MIN_WINDOWS}
"""How the board's comparisons are made (`schedrl.eval.paired`; docs/reference/metrics.md says why)."""

CORRECTION = "Benjamini-Hochberg"
"""The multiple-comparison correction of the board's verdicts (`corrected`): the false discovery rate over the matrix
of policies x scenarios at 5%. (Holm's family-wise correction, `holm`, is stricter: of the 19 uncorrected verdicts
of the board's 96 comparisons republished on 2026-11-28 with the ratio interval it leaves 7 standing,
Benjamini-Hochberg 15; with the t interval before, 5 and 10 of 20.)"""


def corrected(result: dict) -> dict:
    """Every non-heuristic row's comparison with its reference, over all scenarios (the matrix of policies x
    scenarios), corrected for multiple comparisons (`CORRECTION`): `p`, `p_corrected` and `verdict_corrected` (better
    or worse only where the adjusted p < 0.05 and the interval agrees) in each `vs_reference`; the count in
    `result["correction"]`."""
    cells = [(b, r) for b in result["scenarios"] for r in b["rows"]
             if r["kind"] != "heuristic" and r.get("vs_reference")]
    ps = [p_value(r["vs_reference"]) for _, r in cells]
    adjusted = benjamini_hochberg(ps)
    for (_b, r), q in zip(cells, adjusted):
        c = r["vs_reference"]
        c["p_corrected"] = q
        if c["verdict"] in ("better", "worse") and (q is None or q >= 0.05):
            c["verdict_corrected"] = "not distinguishable"
        else:
            c["verdict_corrected"] = c["verdict"]
    result["correction"] = {"method": CORRECTION, "comparisons": sum(p is not None for p in ps), "level": 0.05}
    result["statistics"] = STATISTICS
    for b in result["scenarios"]:
        if "sequences" in b:
            b["power"] = power(b["sequences"]["independent"], b["rows"])
    return result


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
                skipped: Callable[[str, str], None] | None = None, warn: Callable[[str], None] | None = None) -> dict:
    """Every scenario's board, its verdicts corrected for the matrix's multiple comparisons (`corrected`); a scenario
    whose data is not on this machine is listed under `skipped` with why."""
    from schedrl import __version__

    from schedrl.dtsim import JobDataError
    from schedrl.workload.errors import TraceError

    from schedrl.eval.outside import labelled, reserved_labels

    scenarios = list(scenarios)
    entrants = labelled(entrants, reserved_labels(scenarios))
    boards, missing = [], []
    with _one_torch_thread(any(e.kind in ("zoo", "tuned") for e in entrants)):
        for s in scenarios:
            try:
                boards.append(board(s, entrants, sequences=sequences, seed=seed, progress=progress, warn=warn))
            except (FileNotFoundError, TraceError, JobDataError) as e:  # its data is not on this machine
                missing.append({"scenario": s.name, "why": str(e)})
                if skipped is not None:
                    skipped(s.name, str(e))
    return corrected({"schedrl": __version__, "sequences": sequences, "seed": seed, "scenarios": boards,
                      "skipped": missing})


# ---------------------------------------------------------------------------- rendering
def _cell(value: float, metric: str) -> str:
    return f"{100 * value:.1f}%" if metric == "utilization" or metric.startswith("util:") else f"{value:,.2f}"


def _versus(c: dict | None) -> str:
    if not c:
        return "reference"
    bounds = f" [{c['ci95_pct'][0]:+.1f}, {c['ci95_pct'][1]:+.1f}]" if c["ci95_pct"] else " [no interval]"
    diff = "infinite" if c["difference_pct"] is None else f"{c['difference_pct']:+.1f}%"
    return f"{diff}{bounds}, {c['better']}/{c['worse']}"


def _rank(c: dict | None) -> str:
    """The Wilcoxon signed-rank p-value, marked where it disagrees with the ratio interval's verdict."""
    if not c or c.get("wilcoxon_p") is None:
        return "-"
    return f"{c['wilcoxon_p']:.3g}" + (" (disagrees)" if c.get("rank_test_disagrees") else "")


def _mde(c: dict | None) -> str:
    return f"{c['mde_pct']:.1f}%" if c and c.get("mde_pct") is not None else "-"


def _verdict(c: dict | None) -> str:
    """The verdict a reader sees: corrected for trained and outside methods (the matrix), plain for heuristics."""
    if not c:
        return "-"
    return c.get("verdict_corrected", c["verdict"])


def _mark(row: dict) -> str:
    return {"here": "trained here", "transfer": "transfer"}.get(row.get("trained"), "")


def power_line(b: dict) -> str:
    """How many independent windows a board counts and what it could detect, in one sentence."""
    p = b.get("power") or {}
    k = b["sequences"]["independent"]
    mde = f"; median minimum detectable effect {p['median_mde_pct']:.1f}% of the reference" \
        if p.get("median_mde_pct") is not None else ""
    under = (f" **Underpowered: {k} independent windows of the {p.get('wanted', MIN_WINDOWS)} the board asks for** "
             "(no held-out source holds more)." if p.get("underpowered") else "")
    return f"{k} independent windows{mde}.{under}"


def to_markdown(result: dict) -> str:
    """The full table: one section per scenario."""
    out = []
    for b in result["scenarios"]:
        seq = b["sequences"]
        what = (f"{len(seq['ids'])} sequences of {seq['length']} jobs" if seq["kind"] == "starts"
                else f"{len(seq['ids'])} generated sequences")
        if seq.get("trace"):
            what += f" of trace {seq['trace']}"
        overlap = (f"; they overlap, so intervals count {seq['independent']} independent windows"
                   if seq["overlapping"] else "")
        out += [f"### {b['scenario']}", "",
                f"{b['description']} Metric: average {b['metric']} ({'lower' if b['lower_is_better'] else 'higher'} "
                f"is better), on {what}{overlap}. Reference: {b['reference']} (best on the validation sequences). "
                f"Definition {b['sha256'][:12]}. {power_line(b)}", "",
                "| method | kind | mean | x reference | vs reference: diff [95% CI], better/worse | MDE | Wilcoxon p | "
                f"verdict | verdict ({result.get('correction', {}).get('method', CORRECTION)}) |",
                "|---|---|---|---|---|---|---|---|---|"]
        for r in b["rows"]:
            v = r.get("vs_reference")
            kind = r["kind"] + (f", {_mark(r)}" if _mark(r) else "")
            held = "" if r["kind"] == "heuristic" or "verdict_corrected" not in (v or {}) else v["verdict_corrected"]
            out.append(f"| {_name(r)} | {kind} | {_cell(r['mean'], b['metric'])} | "
                       f"{r['ratio_to_reference']:.3f} | {_versus(v)} | {_mde(v)} | {_rank(v)} | "
                       f"{v['verdict'] if v else '-'} | {held or '-'} |")
        for f in b["failed"]:
            out.append(f"| {f['method']} | {f['kind']} | failed: {f['error']} | | | | | | |")
        warned = [r for r in b["rows"] if r.get("outside_training")]
        if warned:
            out += ["", "Outside their training range here:", ""]
            out += [f"- {r['method']}: {'; '.join(r['outside_training'])}" for r in warned]
        if b.get("not_run"):
            out += ["", "Cannot run here:", ""]
            out += [f"- {n['method']}: {n['why']}" for n in b["not_run"]]
        if b.get("optimum"):  # issue 56: the offline bound's line (schedrl.bound.gap)
            from schedrl.bound.gap import optimum_line
            out += ["", optimum_line(b["optimum"])]
        out.append("")
    for s in result["skipped"]:
        out.append(f"- {s['scenario']}: skipped ({s['why']})")
    return "\n".join(out).rstrip() + "\n"


def _best(rows: list[dict], kinds) -> dict | None:
    chosen = [r for r in rows if r["kind"] in kinds and "vs_reference" in r]
    return chosen[0] if chosen else None  # rows are best first


def summary_markdown(result: dict) -> str:
    """One line per scenario: the reference, its power (independent windows and median minimum detectable effect),
    the best method of all and the best trained or outside method with its ratio to the reference and its verdict
    (corrected for multiple comparisons for trained and outside methods)."""
    lines = ["| scenario | metric | reference | windows (MDE) | best method: x reference, verdict | "
             "best policy: x reference, verdict |", "|---|---|---|---|---|---|"]
    for b in result["scenarios"]:
        p = b.get("power") or {}
        k = b["sequences"]["independent"]
        power = f"{k}" + (f" ({p['median_mde_pct']:.0f}%)" if p.get("median_mde_pct") is not None else "") \
            + (" underpowered" if p.get("underpowered") else "")

        def said(r):
            if r is None:
                return "no trained policy runs here"
            mark = f", {_mark(r)}" if _mark(r) else ""
            return f"{_name(r)} ({r['kind']}{mark}) {r['ratio_to_reference']:.3f}x, {_verdict(r['vs_reference'])}"

        best = _best(b["rows"], ("heuristic", "zoo", "tuned", "outside"))
        learned = _best(b["rows"], ("zoo", "tuned", "outside"))
        lines.append(f"| {b['scenario']} | {b['metric']} | {b['reference']} | {power} | "
                     f"{said(best) if best else 'the reference'} | {said(learned)} |")
    return "\n".join(lines) + "\n"


def matrix(result: dict) -> tuple[list[str], list[str], dict]:
    """(policies, scenarios, cells) of the transfer matrix: every zoo policy and tuned rule x every scenario; a cell is
    its row (ratio, verdicts, mark) or {"why": ...} where it cannot run."""
    scenarios = [b["scenario"] for b in result["scenarios"]]
    cells, policies = {}, []
    for b in result["scenarios"]:
        for r in b["rows"]:
            if r["kind"] in ("zoo", "tuned", "outside"):
                cells[(r["method"], b["scenario"])] = r
                policies.append(r["method"]) if r["method"] not in policies else None
        for n in b.get("not_run", []) + b.get("failed", []):
            cells[(n["method"], b["scenario"])] = {"why": n.get("why") or n.get("error")}
            policies.append(n["method"]) if n["method"] not in policies else None
    return sorted(policies), scenarios, cells


def plot_matrix(result: dict, path) -> None:
    """The transfer matrix: policies x scenarios, colour = ratio of the mean to the scenario's reference (green better
    where lower is better), * where the corrected verdict is better or worse, a box where it was trained, grey
    where it cannot run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    policies, scenarios, cells = matrix(result)
    lower = {b["scenario"]: b["lower_is_better"] for b in result["scenarios"]}
    grid = np.full((len(policies), len(scenarios)), np.nan)
    for (p, s), c in cells.items():
        if "ratio_to_reference" in c and c["ratio_to_reference"] > 0:
            value = math.log2(c["ratio_to_reference"])
            grid[policies.index(p), scenarios.index(s)] = value if lower[s] else -value
    fig, ax = plt.subplots(figsize=(1.0 * len(scenarios) + 3.5, 0.42 * len(policies) + 2.2))
    cmap = plt.get_cmap("RdYlGn_r").with_extremes(bad="#dddddd")
    image = ax.imshow(np.clip(grid, -1, 1), cmap=cmap, norm=TwoSlopeNorm(0, -1, 1), aspect="auto")
    for (p, s), c in cells.items():
        i, j = policies.index(p), scenarios.index(s)
        if "ratio_to_reference" not in c:
            ax.text(j, i, "-", ha="center", va="center", fontsize=7, color="#777777")
            continue
        star = "*" if c.get("vs_reference", {}).get("verdict_corrected") in ("better", "worse") else ""
        ax.text(j, i, f"{c['ratio_to_reference']:.2f}{star}", ha="center", va="center", fontsize=7)
        if c.get("trained") == "here":
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.6))
    ax.set_xticks(range(len(scenarios)), scenarios, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(len(policies)), policies, fontsize=8)
    bar = fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02, ticks=[-1, -0.5, 0, 0.5, 1])
    bar.ax.set_yticklabels(["0.5x (better)", "0.71x", "1x", "1.41x", "2x (worse)"], fontsize=7)
    method = result.get("correction", {}).get("method", CORRECTION)
    ax.set_title("Every zoo policy on every scenario it can run: mean / the scenario's reference heuristic\n"
                 f"* difference after the {method} correction (5%); box: trained on that scenario; grey: cannot run "
                 "(docs/leaderboard.md says why)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(result: dict, path) -> None:
    """One panel per scenario: each method's mean relative to the reference, with its 95% interval
    (`schedrl.eval.plots.leaderboard_bars`)."""
    from schedrl.eval.plots import leaderboard_bars

    leaderboard_bars(result, path)


# ---------------------------------------------------------------------------- the committed results
README_MARK = ("<!-- leaderboard:start -->", "<!-- leaderboard:end -->")
"""The README's summary sits between these lines, rendered from docs/leaderboard.json (`publish`)."""
PUBLISHED = ("docs/leaderboard.json", "docs/leaderboard.md", "docs/leaderboard.png", "docs/zoo.md",
             "docs/leaderboard_bars.png")


def readme_block(result: dict) -> str:
    """The README's summary: how it was made, then one line per scenario."""
    c = result.get("correction", {})
    return (f"{README_MARK[0]}\n"
            "Per scenario: its reference heuristic (the best on its validation sequences), how many independent "
            "evaluation windows it holds and the median minimum detectable effect of its comparisons (the difference "
            "it sees with 80% power), the best method of all, and the best trained or tuned policy, whether trained "
            "on that scenario or transferred from another, as the ratio of its mean to the reference's with its "
            "paired verdict (from a bootstrap interval of the ratio; none with fewer than 6 independent windows). The "
            "verdicts of policies are corrected for multiple comparisons over the whole matrix "
            f"of policies x scenarios ({c.get('method', CORRECTION)}, {c.get('comparisons', 0)} comparisons, 5% "
            "false discovery rate): better or worse only where the corrected test says so. Rendered from "
            "[docs/leaderboard.json](docs/leaderboard.json); every method, interval and policy that cannot run on a "
            "scenario (with why) is in [docs/leaderboard.md](docs/leaderboard.md).\n\n"
            f"{summary_markdown(result)}{README_MARK[1]}")


def docs_page(result: dict) -> str:
    """docs/leaderboard.md: what it is and how to read it, the matrix, the full table; how to regenerate it last."""
    c = result.get("correction", {})
    return ("# Leaderboard\n\n"
            "Every standard scenario's baseline heuristics and every zoo policy and tuned rule, on the scenario's own "
            "evaluation sequences, each paired with the scenario's reference heuristic (chosen on the validation "
            "sequences; [scenarios](scenarios.md) explains them). A policy is scored on the scenario it was trained "
            "on (*trained here*) and on every other scenario it can run (*transfer*); where it cannot, the scenario's "
            "section says why.\n\n"
            "How to read a row: the ratio of its mean to the reference's; the difference (that ratio - 1) with its "
            "95% paired bootstrap interval over the independent windows (the windows resampled together, so no "
            "bound goes below -100%), and on how many windows it was better or worse; the minimum detectable effect "
            "(MDE), the true difference this comparison would detect with 80% power, so that \"not "
            "distinguishable\" with an MDE of 40% says the board could not have seen a 10% gain; the paired Wilcoxon "
            "signed-rank test's p-value beside it, marked *disagrees* where it comes to another conclusion than the "
            "interval (a mean carried by a few windows, or the reverse); and the verdict, from the interval, plain "
            f"and corrected ({c.get('method', CORRECTION)}) over all {c.get('comparisons', 0)} comparisons of "
            "policies with their references (false discovery rate 5%), because among that many some would look "
            "significant by chance. With fewer than 6 independent windows no verdict is given (*too few windows for "
            "a verdict*). The README and the matrix use the corrected verdicts; [metrics](reference/metrics.md#"
            "paired-comparisons) says why these statistics.\n\n"
            f"Where a policy runs: {TRANSFER_RULE}\n\n"
            "![transfer matrix: every policy on every scenario, ratio to the reference](leaderboard.png)\n\n"
            "![each scenario's methods relative to its reference, 95% interval](leaderboard_bars.png)\n\n"
            + to_markdown(result) +
            "\n## Regenerating\n\n"
            "This page, docs/leaderboard.json, both figures and the README's summary come from "
            "`schedrl leaderboard --publish .` run in the repository root (real traces in ../shared or "
            "`$SCHEDRL_TRACE_PATH`); `python benchmarks/bench_leaderboard.py` times it. "
            "`schedrl leaderboard --render .` re-renders the pages from docs/leaderboard.json without scoring "
            "anything (after a change to the zoo's manifest or to the rendering).\n")


def zoo_page(result: dict, policies=None, tuned=None) -> str:
    """docs/zoo.md: every zoo policy and tuned rule (the manifest's, or `policies` and `tuned`) with its training
    command, seed, budget and size, and its row of the board in `result` (ratio to the scenario's reference and the
    paired verdict)."""
    from schedrl.zoo.manifest import entries, rules, seed_rows

    policies = entries() if policies is None else policies
    tuned = rules() if tuned is None else tuned
    rows = {}
    for b in result["scenarios"]:
        for r in b["rows"]:
            if r.get("trained", "here") == "here" and r["method"] not in rows:  # its own scenario's row
                rows[r["method"]] = (b, r)

    def placed(name: str) -> str:
        if name not in rows:
            return "not on the board"
        b, r = rows[name]
        verdict = _verdict(r.get("vs_reference"))
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
             "Each was trained for 30 minutes by the command below (a `tune_configs/zoo_*.yaml` "
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
        # the spread over seeds, without the note on how the shipped run went (that is its experiment log's)
        spread = seed_rows({**e.fields, "seeds": {**e.fields["seeds"], "note": None}} if e.fields.get("seeds") else e.fields)
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
    matrix and bar figures, the zoo page and the README's summary between its markers. Returns the paths written."""
    import json
    from pathlib import Path

    from schedrl.outputs import atomic_write

    root = Path(root)
    readme, text, start, end = check_publish(root)
    json_path, md_path, png_path, zoo_path, bars_path = (root / p for p in PUBLISHED)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(json_path, json.dumps(stable(result), indent=1) + "\n")
    atomic_write(md_path, docs_page(result))
    plot_matrix(result, png_path)
    plot(result, bars_path)
    atomic_write(zoo_path, zoo_page(result))
    atomic_write(readme, text[:start] + readme_block(result) + text[end + len(README_MARK[1]):])
    from schedrl.eval.pages import update_pages  # the agent pages' "Where it stands today", the README's answer

    return [json_path, md_path, png_path, bars_path, zoo_path, readme, *update_pages(result, root)]


# ---------------------------------------------------------------- what `schedrl leaderboard` runs, writes and prints
OUT_FILES = ("leaderboard.json", "leaderboard.md", "leaderboard.png", "leaderboard_bars.png")
"""What `schedrl leaderboard --out DIR` writes."""


WHOLE_PAGES = ("docs/leaderboard.md", "docs/zoo.md")
"""The committed pages schedrl writes whole (the README and the agent pages get only their marked blocks): one edited
since schedrl wrote it is replaced only with --force (`check_pages`)."""
BOARD_LIMIT = 64 << 20
"""The largest docs/leaderboard.json `--render` reads (the committed board is under a megabyte)."""


def check_pages(result: dict, root, force: bool = False, option: str = "--render") -> None:
    """Before `publish` writes into the checkout `root`: ValueError (one line) where a whole page exists, differs from
    what `result` renders, and is not the one schedrl last wrote there (edited since, by its digest in the directory's
    ownership marker, `schedrl.outputs.owns_file`), unless `force`."""
    from pathlib import Path

    from schedrl.outputs import owns_file

    pages = dict(zip(WHOLE_PAGES, (docs_page(result), zoo_page(result))))
    for relative, new in pages.items():
        path = Path(root) / relative
        if force or not path.is_file() or owns_file(path.resolve()):
            continue
        try:
            if path.read_text(encoding="utf-8") == new:
                continue
        except (OSError, UnicodeDecodeError):
            pass
        raise ValueError(f"{option} {root}: {relative} was edited since schedrl wrote it (or schedrl did not write "
                         "it): rendering would lose the edit; move it aside, or add --force to replace it")


def check_edits(root, option: str = "--publish") -> None:
    """Before any scoring: ValueError where a whole page of `root` is recorded as schedrl's and changed since (an edit
    known without rendering; `check_pages` decides the rest once the board is known)."""
    from pathlib import Path

    from schedrl.outputs import owns_file, read_marker

    for relative in WHOLE_PAGES:
        path = (Path(root) / relative).resolve()
        if path.is_file() and path.name in read_marker(path.parent).get("files", {}) and not owns_file(path):
            raise ValueError(f"{option} {root}: {relative} was edited since schedrl wrote it: publishing would lose "
                             "the edit; move it aside, or add --force to replace it")


def record_pages(root, paths) -> None:
    """Record the files `publish` wrote under `root/docs` in that directory's ownership marker, with their digests, so
    a later render knows an edit from its own output."""
    from pathlib import Path

    from schedrl.outputs import Claim

    docs = (Path(root) / "docs").resolve()
    owned = Claim("leaderboard", [])
    for path in paths:
        if Path(path).resolve().parent == docs:
            owned.record(path)


def _board(root) -> dict:
    """The committed board of the checkout `root` (docs/leaderboard.json), its shape checked; ValueError naming it."""
    import json
    from pathlib import Path

    path = Path(root) / PUBLISHED[0]
    try:
        if path.stat().st_size > BOARD_LIMIT:
            raise ValueError(f"{path}: {path.stat().st_size:,} bytes, more than a leaderboard's "
                             f"{BOARD_LIMIT >> 20} MiB")
        with open(path, "rb") as fh:
            data = json.loads(fh.read(BOARD_LIMIT + 1))
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read it ({getattr(e, 'strerror', None) or type(e).__name__})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list) or not data["scenarios"] \
            or not all(isinstance(b, dict) for b in data["scenarios"]):
        raise ValueError(f"{path}: not a leaderboard (an object whose scenarios list the boards, as "
                         "`schedrl leaderboard --publish` writes it)")
    return data


def rerender(root, say: Callable[[str], None], force: bool = False) -> None:
    """`--render ROOT`: the committed pages of the checkout `root` re-rendered from its docs/leaderboard.json, nothing
    scored; `say` hears each path written. A whole page edited since schedrl wrote it is kept unless `force`
    (`check_pages`). ValueError (one line, naming `--render`) where the checkout cannot."""
    from pathlib import Path

    root = Path(root)
    try:
        result = restated(_board(root))
        check_pages(result, root, force)  # every page rendered, and checked, before anything is written
        check_publish(root)
        written = publish(result, root)
        record_pages(root, written)
        for path in written:
            say(f"wrote {path}")
    except (OSError, ValueError) as e:
        raise ValueError(f"--render {root}: {e}" if not str(e).startswith("--render") else str(e)) from None
    except (KeyError, TypeError, AttributeError, IndexError) as e:
        raise ValueError(f"--render {root}: {PUBLISHED[0]} is not a leaderboard this schedrl renders "
                         f"({type(e).__name__}: {e})") from None


def entrants(outside_specs: Iterable[str] = (), with_entry_points: bool = True) -> list[Entrant]:
    """Who enters the board: every zoo policy and tuned rule, the outside policies `outside_specs`
    (`module:callable`), then, `with_entry_points`, the `schedrl.policies` entry points. ValueError on a bad spec."""
    named = [outside(spec) for spec in outside_specs]
    return zoo_entrants() + named + (entry_points() if with_entry_points else [])


def deliver(result: dict, outputs, say: Callable[[str], None], out=None, figure=None, publish_root=None,
            force: bool = False) -> None:
    """After the board is scored: `say` each method that failed, then write what the command claimed (`outputs`, a
    `schedrl.outputs.claim`): `out`'s files (`OUT_FILES`), the `figure`, and the committed pages under `publish_root`
    (ValueError where a scenario was skipped: the committed board needs every one; where a whole page was edited
    since schedrl wrote it, unless `force`: `check_pages`), each checked before anything is written."""
    import json
    from pathlib import Path

    for b in result["scenarios"]:
        for f in b["failed"]:
            say(f"{b['scenario']}: {f['method']} failed: {f['error']}")
    if publish_root:
        if result["skipped"]:
            raise ValueError(f"--publish needs every scenario's data; skipped: "
                             f"{', '.join(s['scenario'] for s in result['skipped'])}")
        check_pages(result, publish_root, force, "--publish")
    outputs.prepare()
    if out:
        out = Path(out)
        outputs.write(out / "leaderboard.json", json.dumps(result, indent=1) + "\n")
        outputs.write(out / "leaderboard.md", to_markdown(result))
        plot_matrix(result, out / "leaderboard.png")
        outputs.record(out / "leaderboard.png")
        plot(result, out / "leaderboard_bars.png")
        outputs.record(out / "leaderboard_bars.png")
        say(f"wrote {out / 'leaderboard.json'}, leaderboard.md, leaderboard.png (the policies x scenarios matrix) and "
            f"leaderboard_bars.png")
    if figure:
        plot(result, figure)
        outputs.record(figure)
    if publish_root:
        written = publish(result, publish_root)
        record_pages(publish_root, written)
        for path in written:
            say(f"wrote {path}")


def text(result: dict, as_json: bool = False, summary: bool = False) -> str:
    """What `schedrl leaderboard` prints: the JSON (with its newline), the one-line-per-scenario summary, or the
    markdown tables."""
    import json

    return json.dumps(result, indent=1) + "\n" if as_json else summary_markdown(result) if summary \
        else to_markdown(result)
