"""What one training run is trained and judged on, decided in one place.

A run has its agent's judge (`Agent.judge(env_config)`: the protocol the env config implies) and, where it names one
(`schedrl train --scenario`, a sweep file's `scenario:`), a `Scenario`: the fixed, shared protocol. `RunProtocol`
holds both, checks once that the agent trains on what the scenario says (`Scenario.check_trains`), and answers the
questions the training driver (validation) and the report (the final table) would otherwise each settle between the
two: which validation sequences, which data and sequences the final table is on, and under which semantics the
trained policy is scored there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from schedrl.scenarios.judge import Judge
from schedrl.scenarios.scenario import Scenario
from schedrl.scenarios.split import evaluation_seed, validation_seed


@dataclass(frozen=True)
class RunProtocol:
    """A run's judge and, where it has one, its scenario."""

    judge: Judge
    scenario: Scenario | None = None

    @classmethod
    def checked(cls, agent: str, judge: Judge, scenario: Scenario | None = None) -> "RunProtocol":
        """The protocol of agent `agent` judged by `judge`, on `scenario`; ValueError where the agent with these options
        does not train on what the scenario says (another simulator, metric, semantics or split)."""
        if scenario is not None:
            scenario.check_trains(agent, judge)
        return cls(judge, scenario)

    def validation(self, data, count: int, seed: int | None, jobs: int | None = None, evaluation_jobs: int = 1024,
                   fixed: bool = False) -> tuple[list[int], int]:
        """(ids, length) of the sequences that choose the checkpoint: the scenario's fixed validation sequences
        (`fixed`: `TrainingOptions.validation_from_scenario`), else `count` seeded ones of the judge's validation zone
        (seed `validation_seed(seed)`) of `jobs` jobs (None: `Judge.validation_length`)."""
        if fixed and self.scenario is not None:
            from schedrl.scenarios import scoring

            drawn = scoring.sequences(self.scenario, data, "validation")
            return list(drawn.ids), drawn.length
        length = jobs or self.judge.validation_length(data, evaluation_jobs)
        return self.judge.evaluation_ids(data, count, validation_seed(seed), length, validation=True), length

    def _on_scenario(self, evaluate) -> bool:
        return self.scenario is not None and getattr(evaluate, "from_scenario", False) and not evaluate.starts

    def evaluation_data(self, evaluate):
        """The jobs the final table's sequences are positions in: on the scenario's evaluation sequences
        (`evaluate.from_scenario`), the scenario's evaluation data (which may be another trace than training's, as
        `lublin1`'s independent draw is), so the table is on the sequences `schedrl evaluate` scores; else the
        judge's."""
        if self._on_scenario(evaluate) and self.judge.sim is not None:
            from schedrl.scenarios import scoring

            return scoring.part_data(self.scenario, scoring.load(self.scenario), "evaluation")
        return self.judge.load()

    def evaluation_sequences(self, data, evaluate, seed: int | None) -> tuple[int, list[int]]:
        """(length, ids) of the final table's sequences on `data` (from `evaluation_data`): the scenario's fixed
        evaluation sequences, the given starts (`evaluate.starts`), or seeded distinct ones from the judge
        (`Judge.evaluation_sequences`, seed `evaluation_seed(seed)`)."""
        if self._on_scenario(evaluate):
            from schedrl.scenarios import scoring

            drawn = scoring.sequences(self.scenario, data, "evaluation")
            return drawn.length, list(drawn.ids)
        if evaluate.starts:
            from schedrl.workload.sampling import choose_starts

            return evaluate.jobs, choose_starts(data, evaluate.jobs, 0, 0, list(evaluate.starts))
        return self.judge.evaluation_sequences(data, evaluate.jobs, evaluate.sequences, evaluation_seed(seed))

    def policy_semantics(self, policy: Any):
        """What the trained `policy` of this run runs under on the scenario (`Scenario.semantics_for` of the judge, with
        the decisions it was trained to make from its run record's `SimConfig`: DRAS's choice of the backfilled job;
        on the discrete-time cluster, the cluster as its env saw it: DeepRM's pre-run estimates). None without a
        scenario, or for a policy without a run record (`trained_record`): it runs under the scenario's own semantics.
        The one definition `train`'s final table (`policy_judge`), `evaluate --scenario` and the leaderboard share."""
        record = trained_record(policy)
        if self.scenario is None or record is None:
            return None
        return self.scenario.semantics_for(self.judge, record.sim_config)

    def policy_judge(self, policy: Any) -> Judge:
        """The judge the final table scores the trained `policy` with: on a scenario, the policy under the semantics
        `schedrl evaluate` gives it there (`policy_semantics`), so the table's row is `evaluate`'s on the same
        sequences; otherwise the judge itself. (Decima-PG, trained without backfilling, was scored without it here and
        with the scenario's EASY by `evaluate`: 28,872 against 17,533 for the same checkpoint.)"""
        if self.judge.sim is None:
            return self.judge
        semantics = self.policy_semantics(policy)
        return self.judge if semantics is None else replace(self.judge, sim_config=semantics)


def trained_record(policy: Any):
    """The run record of a trained policy (a checkpoint's or a zoo policy's `record`, naming its agent), or None: a
    heuristic, a tuned rule (its `record` is how it was fitted), an outside policy."""
    record = getattr(policy, "record", None)
    return record if hasattr(record, "agent") else None
