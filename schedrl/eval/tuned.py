"""`schedrl tuned evaluate`: a tuned priority rule (`schedrl.heuristics.tuned`) against the heuristics on the held-out
evaluation sequences of the trace split it was fitted on (`scenarios/fitting.py:rule_judge`), paired against F1.

The sequences are seeded starts in the split's evaluation zone (`Judge.split_range`): with the default seed
(`EVALUATION_SEED`), the sequences a `schedrl train rlscheduler --seed 0` run's final table uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from schedrl.scenarios.split import evaluation_seed

EVALUATION_SEED = evaluation_seed(0)
"""Seed of `evaluate`'s starts: a `schedrl train rlscheduler --seed 0` run's final table uses these sequences
(`schedrl.scenarios.split.evaluation_seed`)."""


@dataclass(frozen=True)
class RuleEvaluation:
    """A rule and the heuristics on the evaluation zone's sequences (`result`, a `Comparison`), and the rule paired
    against F1 (`versus_f1`: `paired.comparisons` with a verdict each; empty where F1 is not among the policies)."""

    rule: str
    result: object
    versus_f1: list[dict]

    def to_dict(self) -> dict:
        """`--json`: the comparison's record with `versus_f1`."""
        return {**self.result.to_dict(), "versus_f1": self.versus_f1}

    def text(self, markdown: bool = False) -> str:
        """The table (text or Markdown) and one line per paired comparison."""
        from schedrl.eval import paired

        lines = [self.result.to_markdown() if markdown else self.result.to_text()]
        lines += [f"{self.rule} paired against F1 (per-sequence difference, % of F1's mean, 95% CI): "
                  f"{paired.short(c)}; better on {c['better']}, equal on {c['equal']}, worse on {c['worse']} of "
                  f"{c['sequences']} sequences{paired.overlap_note(c)}" for c in self.versus_f1]
        return "\n".join(lines)


def _own_evaluation(rule, where: str | None):
    """(workload, metric, semantics) of the evaluation trace of the scenario a rule was fitted on, where that
    scenario's evaluation has a trace of its own (its definition as the rule's file records it); None otherwise."""
    from schedrl.scenarios.drawing import part_data
    from schedrl.scenarios.scenario import Scenario
    from schedrl.sim.config import SimConfig

    recorded = rule.record.get("scenario")
    if not isinstance(recorded, dict) or not isinstance(recorded.get("definition"), dict):
        return None
    try:
        scenario = Scenario.from_dict(recorded["definition"], f"{where or 'the rule'}: scenario")
    except ValueError as e:
        raise ValueError(f"{where}: {e}" if where else str(e)) from None
    if getattr(scenario.evaluation, "trace", None) is None:
        return None
    config = SimConfig.from_dict(rule.record["sim_config"]) if "sim_config" in rule.record else scenario.sim
    return part_data(scenario, None, "evaluation"), scenario.metric, config


def evaluate_rule(rule, heuristics: list[str], sequences: int, jobs: int, seed: int = EVALUATION_SEED,
                  trace: str | None = None, note: Callable[[str], None] = lambda line: None,
                  where: str | None = None) -> RuleEvaluation:
    """`rule` (a `TunedRule`) and `heuristics` on `sequences` seeded starts (`seed`) of `jobs` jobs in the evaluation
    zone of the split it was fitted on, under its recorded semantics; `trace`: its trace at another path. `note`
    hears where the sequences are before they are scored. ValueError on a bad value (the rule's trace or split
    prefixed with `where`, the rule's file)."""
    from schedrl.eval import paired
    from schedrl.eval.compare import choose_starts, compare
    from schedrl.eval.policies import policy_label
    from schedrl.scenarios.fitting import rule_judge
    from schedrl.scenarios.scoring import independent_windows

    own = _own_evaluation(rule, where)
    if own is not None:  # a scenario evaluated on a trace of its own (lublin1: `lublin-heldout`): its split has no zone
        import copy

        workload, metric, config = own
        lo, hi = 0, len(workload)
        rule = copy.copy(rule)
        rule.strict = False  # the scenario judges it on its evaluation trace by definition, its fit's scales with it
        note(f"sequences from positions 0..{hi - 1} of {workload.name} (the evaluation trace of scenario "
             f"{rule.record['scenario']['name']}, which the rule was fitted on)")
    else:
        try:
            judge, config = rule_judge(rule, trace)
        except ValueError as e:
            raise ValueError(f"{where}: {e}" if where else str(e)) from None
        workload, metric = judge.load(), judge.metric
        lo, hi = judge.split_range(len(workload))
        note(f"sequences from positions {lo}..{hi - 1} of {workload.name} (the evaluation zone; the rule was fitted "
             f"on 0..{judge.held_out_range(len(workload))[0] - 1})")
    starts = [lo + s for s in choose_starts(workload[lo:hi], jobs, sequences, seed)]
    result = compare(workload, heuristics + [rule], [config.backfill], starts, jobs, metric, config,
                     progress=False)
    values = {result.labels.get(p) or policy_label(p): result.values[(config.backfill, p)] for p in result.policies}
    versus = [{**c, "verdict": paired.verdict(c, metric)} for c in
              paired.comparisons({k: values[k] for k in ("F1", rule.name) if k in values}, [rule.name], metric,
                                 independent=independent_windows(len(starts), jobs, hi - lo))]
    return RuleEvaluation(rule.name, result, versus)
