"""One semantics per comparison: the `SimConfig` every row of a table runs under.

Every table (`evaluate` with or without `--metrics`, `--traces`, `--scenario`, `compare`, the leaderboard, `inspector
score`, `tuned evaluate`, the training's final table) resolves one `SimConfig` before any row runs and scores every row
under it: each heuristic, each trained policy whatever it was trained under (`trained_note` says so in one line), a
tuned rule, `plan:`, an outside policy. Two things a row may have of its own, both declared:

- the decision it cannot make otherwise: a trained policy that chooses the backfilled job itself (DRAS's level 2,
  learned backfilling: `backfill_choice="policy"`). Then the whole comparison runs with `backfill_choice="policy"`
  (`comparison_semantics`): a policy without a `backfill` method, a heuristic, and a trained policy that was trained
  with first-fit backfilling (`FirstFit`, applied by `scenarios.drawing.run_policy`) start the first candidate,
  which is what first-fit starts (`tests/scenarios/test_semantics.py` pins the equality), so the baselines run under
  the same exception and keep their numbers;
- a baseline's own backfilling (DRAS's BinPacking, Random and Optimization start jobs only at once): the one field a
  baseline changes (`row_semantics`), named in its label.

`check_rows` refuses a table whose rows differ in anything else; every row's JSON records its `SimConfig.to_dict()`.
A new semantics (another backfill value, with its parameters) is one more value of `SimConfig`: nothing here names
a field but `backfill` and `backfill_choice`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping

from schedrl.sim.config import SimConfig


def trained_semantics(policy: Any) -> SimConfig | None:
    """What `policy` was trained or fitted under: a checkpoint's or a zoo policy's run record (`record.sim_config`), a
    tuned rule's file (`record["sim_config"]`); None for a heuristic, `plan:` or an outside policy."""
    record = getattr(policy, "record", None)
    sim = getattr(record, "sim_config", None)
    if isinstance(sim, SimConfig):
        return sim
    if isinstance(record, Mapping) and isinstance(record.get("sim_config"), Mapping):
        return SimConfig.from_dict(record["sim_config"])
    return None


def decides_backfill(policy: Any) -> bool:
    """Whether `policy` was trained to choose the backfilled job itself (a decision it cannot make otherwise)."""
    trained = trained_semantics(policy)
    return trained is not None and trained.backfill_choice == "policy"


def _interface(sim: SimConfig) -> str:
    return f"a {sim.window}-job window" if sim.window else "the whole queue"


def comparison_semantics(base: SimConfig, policies: Iterable[Any] = ()) -> SimConfig:
    """The one `SimConfig` of a comparison of `policies` under `base`: `base`, with `backfill_choice="policy"` where
    one of them chooses the backfilled job itself (every row then runs so; see the module's docstring). ValueError
    (one line naming the policy and `--window`) where a trained policy picks from another window than `base` offers:
    a decision it cannot make (as the leaderboard's transfer rule, `Scenario.transfer_problem`)."""
    policies = list(policies)
    for p in policies:
        trained = trained_semantics(p)
        if getattr(getattr(p, "record", None), "agent", None) and trained is not None \
                and (trained.window or 0) != (base.window or 0):
            raise ValueError(f"{getattr(p, 'name', None) or type(p).__name__} was trained to pick from "
                             f"{_interface(trained)}; this table offers {_interface(base)} (--window "
                             f"{base.window}): score it with the window it was trained on")
    if base.backfill_choice != "policy" and any(decides_backfill(p) for p in policies):
        return replace(base, backfill_choice="policy")
    return base


class FirstFit:
    """A trained policy with its backfill choices left to the simulator's first candidate (queue order), which is what
    first-fit backfilling starts: what the policy was trained with, in a comparison whose shared exception asks every
    row for backfill choices. Everything else is the policy's own (`pick`, `defer`, `kill`, its counters)."""

    def __init__(self, policy: Any):
        self.policy = policy

    def __getattr__(self, name: str) -> Any:
        if name == "backfill":
            raise AttributeError(name)
        return getattr(self.policy, name)


def first_fit_where_trained(policy: Any, sim: SimConfig) -> Any:
    """`policy` as it runs under `sim`: wrapped in `FirstFit` where `sim` asks for backfill choices and the policy was
    trained with first-fit backfilling but has a `backfill` method of its own (Decima-PG's unused level 2)."""
    if sim.backfill_choice != "policy" or getattr(policy, "backfill", None) is None or isinstance(policy, FirstFit):
        return policy
    trained = trained_semantics(policy)
    return FirstFit(policy) if trained is not None and trained.backfill_choice != "policy" else policy


def row_semantics(semantics: SimConfig, backfill: str | None = None) -> SimConfig:
    """What one row runs under: the comparison's `semantics`, with a baseline's declared `backfill` (None: none)."""
    return semantics if backfill is None or backfill == semantics.backfill else replace(semantics, backfill=backfill)


def trained_note(label: str, policy: Any, semantics: SimConfig) -> str | None:
    """One line where `policy` (labelled `label`) was trained under other semantics than the comparison's: what
    differed; it runs under the comparison's. None where it was not (or it has no training semantics)."""
    trained = trained_semantics(policy)
    if trained is None:
        return None
    # the backfill choice is the shared exception: a policy that does not choose starts the first candidate either way
    here = replace(semantics, backfill_choice=trained.backfill_choice)
    differ = [f"{d.split(' ', 1)[0]} {d.split(' ', 1)[1].replace(' vs ', ', here ')}" for d in trained.differences(here)]
    if not differ:
        return None
    return f"note: {label} was trained under other semantics ({'; '.join(differ)}): it runs under this table's"


def check_rows(rows: Mapping[str, SimConfig], where: str = "the comparison") -> None:
    """ValueError where two rows of one table ran under different semantics, past a baseline's declared backfilling:
    such a table compares rules, not policies, and is never printed."""
    items = list(rows.items())
    if not items:
        return
    first_label, first = items[0]
    for label, sim in items[1:]:
        differ = replace(first, backfill=sim.backfill).differences(sim)
        if differ:
            raise ValueError(f"{where}: {label} ran under other semantics than {first_label} ({', '.join(differ)}); "
                             "every row of a table must run under one")


def records(rows: Mapping[str, SimConfig]) -> dict[str, dict]:
    """label -> the semantics it ran under, as the JSON output records it."""
    return {label: sim.to_dict() for label, sim in rows.items()}


__all__ = ["FirstFit", "check_rows", "comparison_semantics", "decides_backfill", "first_fit_where_trained", "records",
           "row_semantics", "trained_note", "trained_semantics"]
